/* source_cpu.c - the cpu source: CPU stack sampling (bpf/cpu_sample.bpf.c).
 *
 * The sample program runs on a cpu-clock software perf event in frequency
 * mode (-F HZ), one per online CPU (offline CPUs have no event). Each
 * sample carries raw kernel and user stacks, deduplicated here into STACK
 * records; the SAMPLE record refers to them by id. With --stack-copy, a
 * USTACK record (user registers + stack window, consume/ustack_copy.c)
 * precedes each sample of a user task.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "cli.h"
#include "consume/consumer.h"
#include "consume/ustack_copy.h"
#include "common/sampling_ticks.h"
#include "common/units.h"
#include "cpu_sample.skel.h"
#include "session/percpu_counts.h"
#include "source.h"
#include "ustack_setup.h"
#include "util/cpu_times.h"
#include "util/util.h"

static struct cpu_sample_bpf *skel;
static struct bpf_link **cpu_links;   /* one per entry of cpus */
static int *clock_fds;                /* each link's perf event, read at detach */
static int *cpus;                     /* online CPUs with a perf event */
static int ncpus;
static uint64_t period_ns;            /* the events' sampling period */

/* Busy sampling ticks, counted at detach: due by the events' clocks
 * (each CPU's clock time over the period, less the host's idle time over
 * the same span), and run (the program's count, idle task left out). */
static struct {
	uint64_t due, run;
	int known;
} ticks;
static struct host_cpu idle_from;     /* /proc/stat when the last event was attached */

/* ---- CPUs ----------------------------------------------------------------- */

static int add_cpu(int **list, int *n, int *cap, int cpu)
{
	if (*n == *cap) {
		int *grown = realloc(*list, sizeof(**list) * (size_t)(*cap = *cap ? *cap * 2 : 64));

		if (!grown)
			return -ENOMEM;
		*list = grown;
	}
	(*list)[(*n)++] = cpu;
	return 0;
}

/* Online CPUs from /sys/devices/system/cpu/online ("0-3,5"). Returns the
 * count or -errno; *out is malloc'd. */
static int online_cpus(int **out)
{
	char text[1024];
	int *list = NULL, n = 0, cap = 0;
	int err = read_first_line("/sys/devices/system/cpu/online", text, sizeof(text));

	*out = NULL;
	for (char *p = text; !err && *p;) {
		char *end;
		long first = strtol(p, &end, 10), last = first;

		if (end == p)
			break;
		if (*end == '-')
			last = strtol(end + 1, &end, 10);
		for (long cpu = first; cpu <= last && !err; cpu++)
			err = add_cpu(&list, &n, &cap, (int)cpu);
		p = *end == ',' ? end + 1 : end;
	}
	if (!err && !n)
		err = -EINVAL;
	if (err) {
		free(list);
		return err;
	}
	*out = list;
	return n;
}

/* "0-1"-style list of the CPUs sampled. */
static void cpu_list(char *buf, size_t len)
{
	size_t out = 0;

	buf[0] = '\0';
	for (int i = 0; i < ncpus && out < len; i++) {
		int first = cpus[i];

		while (i + 1 < ncpus && cpus[i + 1] == cpus[i] + 1)
			i++;
		if (first == cpus[i])
			out += (size_t)snprintf(buf + out, len - out, "%s%d", out ? "," : "", first);
		else
			out += (size_t)snprintf(buf + out, len - out, "%s%d-%d", out ? "," : "",
						first, cpus[i]);
	}
}

/* ---- loading and attaching -------------------------------------------- */

static int cpu_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = cpu_sample_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	skel->rodata->pc_config = *env->config;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = ustack_setup(skel->maps.ustack_scratch, &skel->rodata->ustack_window,
				   env->opts->stack_copy, why, len);
	if (!err)
		err = source_loaded(cpu_sample_bpf__load(skel), "cannot load the BPF program", why, len);
	return err;
}

static const char *explain_perf_error(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied (needs root or CAP_PERFMON; see kernel.perf_event_paranoid)";
	case EINVAL:
		return "invalid event settings (is -F above kernel.perf_event_max_sample_rate?)";
	case ENOENT:
	case EOPNOTSUPP:
		return "the cpu-clock software event is not supported by this kernel";
	case EMFILE:
	case ENFILE:
		return "too many open files (raise the limit with ulimit -n)";
	case EBUSY:
		return "the PMU is busy (another tool holds it exclusively)";
	default:
		return strerror(err);
	}
}

static int open_cpu_clock(int cpu, uint64_t freq_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq_hz,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int attach_one_cpu(int cpu, uint64_t freq_hz, char *why, size_t len)
{
	struct bpf_link *link;
	int fd = open_cpu_clock(cpu, freq_hz), clock_fd;

	if (fd == -ENODEV) /* went offline since we listed it */
		return 0;
	if (fd < 0) {
		snprintf(why, len, "cannot open a cpu-clock perf event on CPU %d: %s", cpu,
			 explain_perf_error(-fd));
		return fd;
	}
	clock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);  /* the link closes fd */
	link = bpf_program__attach_perf_event(skel->progs.on_cpu_sample, fd);
	if (!link) {
		int err = -errno;

		close(fd);
		if (clock_fd >= 0)
			close(clock_fd);
		snprintf(why, len, "cannot attach the sample program to CPU %d: %s", cpu,
			 strerror(-err));
		return err;
	}
	cpus[ncpus] = cpu;
	clock_fds[ncpus] = clock_fd;
	cpu_links[ncpus++] = link;
	return 0;
}

static int cpu_attach(const struct source_env *env, char *why, size_t len)
{
	int *online, nonline = online_cpus(&online), err = 0;

	if (nonline < 0) {
		snprintf(why, len, "cannot read the online CPUs: %s", strerror(-nonline));
		return nonline;
	}
	cpus = calloc((size_t)nonline, sizeof(*cpus));
	cpu_links = calloc((size_t)nonline, sizeof(*cpu_links));
	clock_fds = calloc((size_t)nonline, sizeof(*clock_fds));
	if (!cpus || !cpu_links || !clock_fds)
		err = -ENOMEM;
	/* the kernel turns a cpu-clock frequency into this period */
	period_ns = env->opts->freq_hz ? 1000000000ull / env->opts->freq_hz : 0;
	for (int i = 0; i < nonline && !err; i++)
		err = attach_one_cpu(online[i], env->opts->freq_hz, why, len);
	free(online);
	if (!err && !ncpus) {
		snprintf(why, len, "no online CPU accepted a perf event");
		err = -ENODEV;
	}
	host_cpu_read(&idle_from, NULL);
	if (err == -ENOMEM)
		snprintf(why, len, "out of memory");
	if (!err)
		verbose_line("sampling %d CPUs at %llu Hz", ncpus,
			     (unsigned long long)env->opts->freq_hz);
	return err;
}

/* The ticks due on a CPU: its event's clock time (stopped: the link's
 * destruction disabled it) over the period; -1 when unreadable. */
static int64_t ticks_due(int fd)
{
	uint64_t clock_ns;

	if (fd < 0 || !period_ns || read(fd, &clock_ns, sizeof(clock_ns)) != sizeof(clock_ns))
		return -1;
	return (int64_t)(clock_ns / period_ns);
}

/* Ticks of the host's idle time since attach (whole periods, rounded
 * up: /proc/stat counts hundredths); -1 when unknown. */
static int64_t idle_ticks(void)
{
	struct host_cpu to;
	uint64_t ns;

	host_cpu_read(&to, NULL);
	if (!idle_from.ok || !to.ok || to.idle < idle_from.idle || !period_ns)
		return -1;
	ns = host_cpu_ticks_ns(to.idle - idle_from.idle);
	return (int64_t)((ns + period_ns - 1) / period_ns);
}

/* Stops sampling, then counts the busy ticks due and run (both stopped
 * now). */
static void cpu_detach(void)
{
	int known = ncpus > 0;
	uint64_t due = 0, run = 0;
	int64_t idle;

	for (int i = 0; i < ncpus; i++) {
		int64_t n;

		if (!cpu_links[i])
			return;  /* detached already */
		bpf_link__destroy(cpu_links[i]);
		cpu_links[i] = NULL;
		n = ticks_due(clock_fds[i]);
		if (n < 0)
			known = 0;
		else
			due += (uint64_t)n;
		if (clock_fds[i] >= 0)
			close(clock_fds[i]);
		clock_fds[i] = -1;
	}
	idle = known ? idle_ticks() : -1;
	if (idle >= 0 && skel && percpu_counts_read(skel->maps.cpu_ticks, &run, 1) == 0)
		ticks = (typeof(ticks)){ due > (uint64_t)idle ? due - (uint64_t)idle : 0, run, 1 };
}

static void cpu_destroy(void)
{
	cpu_detach();
	free(cpu_links);
	free(clock_fds);
	free(cpus);
	cpu_links = NULL;
	clock_fds = NULL;
	cpus = NULL;
	ncpus = 0;
	cpu_sample_bpf__destroy(skel);
	skel = NULL;
}

/* ---- samples -------------------------------------------------------------- */

/* The sample's ips as uint64_t (same size and representation as __u64,
 * which is unsigned long long where uint64_t is unsigned long). */
static const uint64_t *sample_ips(const struct perfcap_sample *s)
{
	return (const uint64_t *)(const void *)s->ips;
}

static uint32_t kernel_stack_of(struct consumer *c, const struct perfcap_sample *s)
{
	bool error = s->h.flags & PERFCAP_SAMPLE_F_KSTACK_ERR;

	if (error)
		c->stats.kstack_errors++;
	else if (s->kstack_nr >= PERFCAP_STACK_MAX_DEPTH)
		c->stats.kstack_truncated++;
	return consumer_raw_stack(c, PC_STACK_KERNEL, 0, 0, error, sample_ips(s), s->kstack_nr,
				  s->h.ts);
}

static uint32_t user_stack_of(struct consumer *c, const struct perfcap_sample *s, uint32_t aspace)
{
	bool error = s->h.flags & PERFCAP_SAMPLE_F_USTACK_ERR;

	if (error)
		c->stats.ustack_errors++;
	else if (s->ustack_nr >= PERFCAP_STACK_MAX_DEPTH)
		c->stats.ustack_truncated++;
	return consumer_raw_stack(c, PC_STACK_USER, aspace, s->pid, error,
				  sample_ips(s) + s->kstack_nr, s->ustack_nr, s->h.ts);
}

static bool sample_is_well_formed(const struct perfcap_sample *s, size_t size)
{
	return size >= PERFCAP_SAMPLE_HEADER_SIZE &&
	       s->kstack_nr <= PERFCAP_STACK_MAX_DEPTH &&
	       s->ustack_nr <= PERFCAP_STACK_MAX_DEPTH &&
	       size >= PERFCAP_SAMPLE_HEADER_SIZE +
		       ((size_t)s->kstack_nr + s->ustack_nr) * sizeof(uint64_t);
}

static void cpu_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_sample *s = rec;
	struct pc_rec_sample out = { .h.type = PC_REC_SAMPLE };
	uint32_t aspace;

	if (size >= sizeof(s->h) && s->h.type == PERFCAP_EV_USTACK) {
		ustack_copy_handle(c, PERFCAP_SRC_CPU, rec, size);
		return;
	}
	if (!sample_is_well_formed(s, size)) {
		consumer_drop(c, PERFCAP_SRC_CPU);
		return;
	}
	aspace = consumer_process(c, s->pid, s->tid, s->comm, s->h.ts);
	out.ts = s->h.ts;
	out.pid = s->pid;
	out.tid = s->tid;
	out.cpu = s->h.cpu;
	out.kstack = kernel_stack_of(c, s);
	out.ustack = user_stack_of(c, s, aspace);
	consumer_add_event(c, PERFCAP_SRC_CPU, &out, sizeof(out), s->h.ts);
}

/* ---- metadata and counters ----------------------------------------------- */

static int cpu_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	char list[256];
	int err = 0;

	cpu_list(list, sizeof(list));
	err |= chunk_buffer_add_kv(kv, "sampling.cpu.event", "cpu-clock");
	err |= chunk_buffer_add_kv_u64(kv, "sampling.cpu.freq_hz", env->opts->freq_hz);
	err |= chunk_buffer_add_kv(kv, "sampling.cpu.cpus", list);
	if (env->opts->stack_copy)
		err |= chunk_buffer_add_kv_u64(kv, "sampling.cpu.stack_copy",
					       env->opts->stack_copy);
	return err ? -ENOMEM : 0;
}

/* Busy ticks due that did not run: the timer fires late by more than a
 * period (a virtual CPU the host did not run: its clock goes on), or the
 * kernel skips the program (another one running on the CPU). No sample is
 * taken at them, whatever task ran. */
static uint64_t ticks_missed(void)
{
	return ticks.known && ticks.due > ticks.run ? ticks.due - ticks.run : 0;
}

/* Missed ticks the count cannot tell from none (common/sampling_ticks.h):
 * idle time is the host's, so all its online CPUs. */
static uint64_t ticks_slack(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	return sampling_ticks_slack(online > 0 ? (uint64_t)online : (uint64_t)ncpus,
				    period_ns ? 1000000000ull / period_ns : 0);
}

static int cpu_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	int err = chunk_buffer_add_kv_u64(kv, "cpu.samples", c->written[PERFCAP_SRC_CPU]);

	if (ticks.known) {
		err |= chunk_buffer_add_kv_u64(kv, "cpu.ticks.due", ticks.due);
		err |= chunk_buffer_add_kv_u64(kv, "cpu.ticks.run", ticks.run);
		err |= chunk_buffer_add_kv_u64(kv, "cpu.ticks.missed", ticks_missed());
	}
	return err ? -ENOMEM : 0;
}

static void cpu_summary_note(char *buf, size_t len)
{
	char n[32], d[32];
	uint64_t missed = ticks_missed(), slack = ticks_slack();

	if (missed > slack)
		snprintf(buf, len, "%s of %s busy sampling ticks did not run (%.1f%% beyond the "
			 "%llu the count cannot tell from none; STATS cpu.ticks.missed): no sample "
			 "was taken of what ran then, so CPU times from samples are short (a "
			 "task's not necessarily by this share)",
			 fmt_count(n, sizeof(n), missed), fmt_count(d, sizeof(d), ticks.due),
			 100.0 * (double)(missed - slack) / (double)ticks.due,
			 (unsigned long long)slack);
}

static const uint16_t cpu_event_types[] = { PERFCAP_EV_SAMPLE, PERFCAP_EV_USTACK, 0 };

const struct source cpu_source = {
	.summary = "CPU stack samples (user + kernel) at -F HZ on every CPU",
	.id = PERFCAP_SRC_CPU,
	.default_on = true,
	.event_types = cpu_event_types,
	.load = cpu_load,
	.attach = cpu_attach,
	.detach = cpu_detach,
	.destroy = cpu_destroy,
	.handle = cpu_handle,
	.meta = cpu_meta,
	.stats = cpu_stats,
	.summary_note = cpu_summary_note,
};
