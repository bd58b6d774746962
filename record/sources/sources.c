/* sources.c - the registry of event sources, -e parsing, --list-events,
 * and the small helpers every source's load/attach uses.
 *
 * Adding a source: one line in `registry` (and see source.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gc_runtimes.h"
#include "probe_spec.h"
#include "session/bpf_log.h"
#include "session/shared_maps.h"
#include "source.h"
#include "util/util.h"

extern const struct source proc_source;
extern const struct source cpu_source;
extern const struct source sched_source;
extern const struct source syscall_source;
extern const struct source mux_source;
extern const struct source block_source;
extern const struct source net_source;
extern const struct source lock_source;
extern const struct source mem_source;
extern const struct source agg_source;
extern const struct source waits_source;
extern const struct source probe_source;
extern const struct source req_source;

/* In load order: proc first, so forks are followed before anything runs. */
static const struct source *const registry[] = {
	&proc_source,
	&cpu_source,
	&sched_source,
	&syscall_source,
	&mux_source,
	&block_source,
	&net_source,
	&lock_source,
	&mem_source,
	&agg_source,
	&waits_source,
	&req_source,
	&probe_source,
};

#define NSOURCES (sizeof(registry) / sizeof(registry[0]))

const struct source *const *sources_all(size_t *n)
{
	*n = NSOURCES;
	return registry;
}

const struct source *source_by_name(const char *name)
{
	for (size_t i = 0; i < NSOURCES; i++) {
		if (strcmp(event_source_name(registry[i]->id), name) == 0)
			return registry[i];
	}
	return NULL;
}

const char *sources_default_list(void)
{
	static char list[128];
	size_t len = 0;

	if (list[0])
		return list;
	for (size_t i = 0; i < NSOURCES; i++) {
		if (registry[i]->default_on && !registry[i]->always_on)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? "," : "", event_source_name(registry[i]->id));
	}
	return list;
}

static void valid_names(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NSOURCES && used < len; i++) {
		if (!registry[i]->always_on)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 event_source_name(registry[i]->id));
	}
	if (used < len)
		snprintf(buf + used, len - used, ", gc");
}

static int select_one(const char *name, size_t name_len, bool selected[PERFCAP_SRC_MAX],
		      const char *list)
{
	char word[64], valid[320];
	const struct source *src;

	if (name_len == 0 || name_len >= sizeof(word)) {
		error_line("invalid event list '%s': expected NAME[,NAME...]", list);
		return -EINVAL;
	}
	memcpy(word, name, name_len);
	word[name_len] = '\0';
	src = source_by_name(word);
	if (!src) {
		valid_names(valid, sizeof(valid));
		error_line("unknown event source '%s' (valid: %s; see --list-events)", word, valid);
		return -EINVAL;
	}
	selected[src->id] = true;
	return 0;
}

int sources_select(const char *list, bool selected[PERFCAP_SRC_MAX])
{
	const char *p;

	memset(selected, 0, sizeof(bool) * PERFCAP_SRC_MAX);
	for (size_t i = 0; i < NSOURCES; i++) {
		if (registry[i]->always_on || (!list && registry[i]->default_on))
			selected[registry[i]->id] = true;
	}
	if (!list)
		return 0;
	for (p = list;; p++) {
		size_t n = probe_spec_item_len(p);

		if (probe_spec_is_probe(p) || probe_spec_is_gc(p, n)) /* probe_specs_parse() */
			selected[PERFCAP_SRC_PROBE] = true;
		else if (select_one(p, n, selected, list))
			return -EINVAL;
		p += n;
		if (!*p)
			break;
	}
	return 0;
}

/* What each source costs the traced tasks, as measured on a 2-CPU VM
 * (docs/perfcap-record.md says how; bench/metrics_cost.sh,
 * bench/sched_overhead.sh, bench/block_overhead.sh). */
static const struct {
	const char *name, *cost;
} costs[] = {
	{ "proc", "per fork/exec/exit only; the socket snapshots cost the recorder "
		  "8-17 ms each for a server with 300-400 connections, not the traced tasks" },
	{ "cpu", "per thread of the targets (-p, a command): about 1% of nginx's throughput at "
		 "-F 499 on the 2-CPU VM; per CPU (-a, or traced threads switching more than 50 "
		 "times per tick): 10-12% there at 499 Hz, about 2% at the default 99 "
		 "(bench/real_servers.sh, perf record -a and -p the same)" },
	{ "sched", "about 0.2-0.45 us per context switch on the host and 0.13-0.45 us per "
		   "wakeup of a traced task (0.37 and 0.33 under pgbench, 0.23 and 0.13 under "
		   "wrk, 0.43 and 0.46 under redis-benchmark: bench/default_cost.sh, "
		   "bpf_stats; with the waits source's sums, made in the same programs, and "
		   "the blocked intervals' kernel stacks and user stack copies), plus about "
		   "0.09 us per program call that bpf_stats does not see (the tracepoint "
		   "calling a program that returns at once: bench/sched_overhead.sh); "
		   "records sent 16 to a batch; none per soft interrupt where the kernel's per-CPU fields name "
		   "the running one (Linux 6.8+, META sched.softirq_vector marks), else 0.07 "
		   "us each (its entry; its exit too where the CPU's preempt count cannot be "
		   "read: META sched.irq_context) "
		   "(bench/default_cost.sh, bpf_stats); above --sched-rate (default 10,000 "
		   "switches of traced threads a second) only in windows, nothing between "
		   "them: BPF time -53% on postgres under pgbench (32 instead of 68 ms/s), "
		   "-21% on redis at 95k requests/s; a task iterator over the host's tasks at "
		   "each window's edges, 0.1-0.2 us per task" },
	{ "syscall", "about 0.2 us per system call of any process on the host (the "
		     "sys_enter/sys_exit programs, which an untraced process leaves at their "
		     "first test), 0.45 us per call of a traced task, 0.9 us per call recorded "
		     "(shared with mux, net, lock, mem; getppid storms, bench/syscall_storm.sh); "
		     "above --syscall-rate (default 20,000 calls of traced threads a second) "
		     "only in windows, nothing between them: every source at once measured "
		     "at 0.98-1.02x untraced throughput on redis, nginx and postgres instead "
		     "of 0.78-0.88x (bench/real_servers.sh, 4 ABBA rounds)" },
	{ "mux", "the syscall program's (above)" },
	{ "block", "five small programs per block request: not measurable at 5000 req/s" },
	{ "net", "the syscall program's, plus about 0.1-0.2 us per socket call of a traced "
		 "task (an fd lookup, made in the syscall program's sys_exit)" },
	{ "lock", "the syscall program's; about 1-6 us per kernel lock contention of a "
		  "traced task (a kernel stack per wait >= --lock-min); uprobes about 1-3 us "
		  "per lock call (bare metal)" },
	{ "mem", "the syscall program's, plus a program per page fault" },
	{ "agg", "about 0.57 us per system call of a traced task (0.35 us of it the "
		 "sys_enter/sys_exit tracepoints themselves)" },
	{ "probe", "two breakpoints per call of a uprobed function, one per USDT hit: "
		   "see bench/probes_cost.sh" },
	{ "gc", "one breakpoint per probe hit, 2 to 3 per collection (Go: 4 to 6), "
		"measured below; nothing for a process with no known runtime" },
	{ "waits", "nothing per system call; with sched (the default set) it runs in "
		   "sched's programs: 0.06-0.27 us more per context switch of a traced task "
		   "and up to 0.08 us per wakeup (alone: its own two programs, about 0.25-0.5 us "
		   "per switch and 0.15-0.25 us per wakeup) (bench/default_cost.sh)" },
	{ "req", "while followed: about 0.13 us per TCP receive and 0.08 us per send on the "
		 "host (less for untraced sockets), 0.1 us per TCP packet's arrival "
		 "(sk_data_ready), and 0.13 us of the recorder's CPU per request (44 bytes, 8 "
		 "to a record); above --req-rate (default 10,000 requests/s) only in windows, "
		 "nothing between them: BPF time -44% on redis at 100k requests/s (3.3% of the "
		 "machine in all instead of 5.7%), -48% on nginx, -23% on postgres "
		 "(bench/default_cost.sh); and, with windows, a 56-byte mark per connection a "
		 "second and per close (its bytes read: the windows' counts are exact)" },
};

static const char *cost_of(const char *name)
{
	for (size_t i = 0; i < sizeof(costs) / sizeof(costs[0]); i++)
		if (strcmp(costs[i].name, name) == 0)
			return costs[i].cost;
	return "not measured";
}

void sources_print(void)
{
	for (size_t i = 0; i < NSOURCES; i++) {
		const struct source *s = registry[i];
		const char *when = s->always_on ? "always" : s->default_on ? "default" : "-";

		printf("%-8s %-8s %s; cost: %s\n", event_source_name(s->id), when, s->summary,
		       cost_of(event_source_name(s->id)));
	}
	printf("%-8s %-8s the garbage collector's pauses of each traced process's runtime, "
	       "probes placed by the probe source: %s; cost: %s\n", "gc", "-", gc_runtimes_known(),
	       cost_of("gc"));
}

/* ---- helpers for the sources ------------------------------------------- */

void source_explain(char *why, size_t len, const char *what, int err)
{
	char summary[512];

	bpf_log_summary(summary, sizeof(summary));
	if (summary[0])
		snprintf(why, len, "%s: %s (libbpf: %s)", what, strerror(err < 0 ? -err : err),
			 summary);
	else
		snprintf(why, len, "%s: %s", what, strerror(err < 0 ? -err : err));
}

int source_open_failed(char *why, size_t len)
{
	int err = -errno;

	source_explain(why, len, "cannot open the BPF object", err);
	return err;
}

int source_loaded(int err, const char *what, char *why, size_t len)
{
	if (err)
		source_explain(why, len, what, err);
	return err;
}

int source_reuse_shared_maps(const struct source_env *env, struct bpf_object *obj,
			     char *why, size_t len)
{
	int err = shared_maps_reuse(env->maps, obj);

	if (err)
		source_explain(why, len, "cannot reuse the shared maps", err);
	return err;
}
