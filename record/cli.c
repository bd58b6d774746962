/* cli.c - perfcap-record's command line, in the style of libbpf-tools:
 * argp options with a --help that teaches by example, then validation of
 * every value with one clear error line. */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "session/cgroup.h"
#include "cli.h"
#include "perfcap_version.h"
#include "output/size_limit.h"
#include "sources/probe_spec.h"
#include "sources/source.h"
#include "sources/syscall_sets.h"
#include "session/command.h"
#include "util/util.h"
#include "common/units.h"

#define MAX_DURATION_S (365.0 * 24 * 3600)
#define MAX_OFFCPU_MIN_NS (3600ull * 1000 * 1000 * 1000) /* 1 hour */
#define MAX_SYSCALL_MIN_NS (3600ull * 1000 * 1000 * 1000) /* 1 hour */
#define AGG_SLOW_DEFAULT_NS (1000ull * 1000) /* --slow-call: 1 ms */
#define MAX_SAMPLE_ONE_IN 1000000
#define MAX_RATE_CAP 100000000 /* per CPU per second */
#define MAX_MAX_SIZE (1ull << 40)     /* 1 TiB */
#define MAX_FLIGHT_SIZE (16ull << 30) /* held in memory */

enum long_only_option {
	OPT_LIST_EVENTS = 0x100,
	OPT_STRICT,
	OPT_OFFCPU_MIN,
	OPT_COMM,
	OPT_CGROUP,
	OPT_SAMPLE,
	OPT_RATE_CAP,
	OPT_MUTEX_UPROBES,
	OPT_LOCK_MIN,
	OPT_FAULT_SAMPLE,
	OPT_SYSCALLS,
	OPT_SYSCALL_MIN,
	OPT_SLOW_CALL,
	OPT_MAX_SIZE,
	OPT_FLIGHT_RECORDER,
	OPT_STACK_COPY,
	OPT_OFFCPU_COPY,
	OPT_OFFCPU_STACK_REUSE,
	OPT_PROBE_MIN,
	OPT_PROBE_NO_STACK,
	OPT_JVM_PERFMAP,
	OPT_REQ_RATE,
	OPT_SCHED_RATE,
	OPT_SYSCALL_RATE,
};

const char *argp_program_version =
	"perfcap-record " PERFCAP_VERSION " (git " PERFCAP_GIT_HASH ")";

static const char doc[] =
"Record CPU stack samples and kernel events (context switches, off-CPU time, "
"...) into a perfcap capture file.\n"
"\n"
"EXAMPLES:\n"
"    perfcap-record -- ./myprog arg      # a command and its children\n"
"    perfcap-record -F 999 -- make -j4   # 999 samples/s on each CPU\n"
"    perfcap-record -p 1234 -d 30        # a running process, for 30 s\n"
"    perfcap-record -e sched --offcpu-min 5ms -p 1234   # off-CPU >= 5 ms only\n"
"    perfcap-record -e syscall,mux --syscalls read,write --syscall-min 1ms -p 1234\n"
"    perfcap-record -a --comm nginx -d 10     # every process named nginx\n"
"    perfcap-record --req-rate 0 -p 1234 -d 10   # every request, no windows\n"
"    perfcap-record --sched-rate 0 -p 1234 -d 10 # every context switch, no windows\n"
"    perfcap-record -e syscall --syscall-rate 0 -p 1234  # every call, no windows\n"
"    perfcap-record -a -d 10 -o all.perfcap   # the whole system, 10 s\n"
"    perfcap-record -a --max-size 64M    # stop before the file passes 64 MiB\n"
"    perfcap-record -a --flight-recorder 64M   # keep the last ~64 MiB; kill -USR1 writes it\n"
"    perfcap-record -e cpu,uprobe:./srv:handle -- ./srv   # calls and latency\n"
"    perfcap-record -e 'uprobe:./srv:parse(arg1,ret)' -p 1234   # with values\n"
"    perfcap-record -e usdt:/usr/bin/python3.11:python:gc__start -p 1234\n"
"    perfcap-record --jvm-perfmap -p 1234 -d 30   # name a JVM's JIT frames\n"
"    perfcap-record -e cpu,sched,gc -- ./srv   # + GC pauses (Go, CPython, JVM)\n"
"    perfcap-record --list-events        # the event sources\n"
"    perfcap-analyze report run.perfcap  # then read it, on any machine"
"\v"
"Give exactly one target: -p, -a, or a command after the options (put -- "
"before a command that has options of its own). Processes forked by the "
"command or by a -p process are followed. Recording stops when the command or "
"all -p processes have exited, after -d SECONDS (a command still running then "
"gets SIGTERM), or on Ctrl-C / SIGTERM; the capture is complete in every case.\n"
"\n"
"Filters (--comm, --cgroup) apply in the kernel to every source; --sample and "
"--rate-cap thin out event sources, never CPU samples; every filter and "
"sampling setting is stored in the capture. Durations take a unit: 500us, "
"1ms, 2s.\n"
"\n"
"Needs root, or CAP_BPF and CAP_PERFMON, and a kernel with BTF "
"(/sys/kernel/btf/vmlinux). After attaching, the recorder drops every "
"capability it no longer needs; under sudo the command runs as the invoking "
"user. Exit status: 0 when the capture was written, 1 on any error.";

static const struct argp_option options[] = {
	{ "freq", 'F', "HZ", 0, "Samples per second on each CPU (default 99)", 0 },
	{ "output", 'o', "FILE", 0, "Capture file to write (default run.perfcap)", 0 },
	{ "force", 'f', NULL, 0, "Overwrite FILE if it exists", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS of recording, counted once everything is attached (decimals allowed)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "Record these running processes", 0 },
	{ "all-cpus", 'a', NULL, 0, "Record the whole system", 0 },
	{ "verbose", 'v', NULL, 0, "Print progress and libbpf's messages", 0 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0,
	  "Stop before the file would pass SIZE (500K, 64M, 2G; at least 64K)", 0 },
	{ "flight-recorder", OPT_FLIGHT_RECORDER, "SIZE", 0,
	  "Keep only the most recent ~SIZE of compressed events in memory; write the "
	  "file on SIGUSR1 (then stop) or at the normal stop", 0 },
	{ "stack-copy", OPT_STACK_COPY, "SIZE", 0,
	  "Copy SIZE bytes of user stack with each CPU sample and off-CPU stack, for "
	  "unwinding code built without frame pointers (default 32K, at most 64K, 0: off)", 0 },
	{ "offcpu-copy", OPT_OFFCPU_COPY, "WHEN", 0,
	  "sched: when a blocked thread's user stack is copied: `return` (default: when it "
	  "returns to user space, for recorded intervals only; Linux 6.18+, else as "
	  "`switch-out`) or `switch-out` (at every blocking switch-out)", 0 },
	{ "offcpu-stack-reuse", OPT_OFFCPU_STACK_REUSE, "DURATION", 0,
	  "sched: a blocked thread's stacks (its user stack copy, its kernel stack) also "
	  "stand for its later waits at the same place for DURATION, then are taken "
	  "again and compared (default 1s; 0: take them for every interval)", 0 },
	{ "jvm-perfmap", OPT_JVM_PERFMAP, NULL, 0,
	  "At the end, ask running HotSpot JVMs (JDK 17+) to write their perf map "
	  "(jcmd Compiler.perfmap, over the attach socket), so their JIT frames are named", 0 },
	{ NULL, 0, NULL, 0, "Event sources:", 1 },
	{ "events", 'e', "LIST", 0, "Sources to record, comma-separated; `gc` adds the GC pause "
	  "probes of the targets' runtimes", 1 },
	{ "list-events", OPT_LIST_EVENTS, NULL, 0, "List the event sources and exit", 1 },
	{ "strict", OPT_STRICT, NULL, 0, "Fail if a selected source cannot be attached", 1 },
	{ "offcpu-min", OPT_OFFCPU_MIN, "DURATION", 0,
	  "sched: shortest off-CPU interval recorded (default 1ms)", 1 },
	{ "syscalls", OPT_SYSCALLS, "LIST", 0,
	  "syscall: calls to record, names or numbers (default: read/write, send/recv, "
	  "accept/connect/close, futex, poll/epoll/select, sleeps, fsync, openat)", 1 },
	{ "syscall-min", OPT_SYSCALL_MIN, "DURATION", 0,
	  "syscall, mux, net, lock, mem: shortest call recorded (default 0; shorter "
	  "ones are still counted)", 1 },
	{ "slow-call", OPT_SLOW_CALL, "DURATION", 0,
	  "agg: calls at least this long also get a record of their own (default 1ms; "
	  "every call is summed)", 1 },
	{ "mutex-uprobes", OPT_MUTEX_UPROBES, NULL, 0,
	  "lock: also time pthread_mutex_lock in the targets (uprobes; not with -a)", 1 },
	{ "lock-min", OPT_LOCK_MIN, "DURATION", 0,
	  "lock: shortest lock contention or mutex wait recorded (default 10us)", 1 },
	{ "fault-sample", OPT_FAULT_SAMPLE, "N", 0,
	  "mem: record 1 in N user page faults, each weighing N (default 100)", 1 },
	{ "probe-min", OPT_PROBE_MIN, "DURATION", 0,
	  "uprobe:PATH:SYMBOL probes: shortest call recorded (default 0; every call is "
	  "counted, with its latency, in the kernel)", 1 },
	{ "probe-no-stack", OPT_PROBE_NO_STACK, NULL, 0,
	  "uprobe:/usdt: probes: records without the user stack (about a third of a "
	  "recorded call's cost; no callers in the report)", 1 },
	{ "req-rate", OPT_REQ_RATE, "N", 0,
	  "req: follow about N requests a second: above N, only those whose first read "
	  "falls in a window at the start of each second (each then stands for its second "
	  "over its window in reports; default 10000; 0: every request)", 1 },
	{ "syscall-rate", OPT_SYSCALL_RATE, "N", 0,
	  "syscall, mux, net, lock, mem: follow about N system calls of traced threads a "
	  "second: above N, only calls made in a window at the start of each second (each "
	  "then stands for its second over its window; default 20000; 0: every call)", 1 },
	{ "sched-rate", OPT_SCHED_RATE, "N", 0,
	  "sched, waits: follow about N context switches of traced threads a second: above "
	  "N, only in a window at the start of each second (thread states, waits and "
	  "wakeups seen there stand for the second in reports; default 10000; 0: every "
	  "switch)", 1 },
	{ NULL, 0, NULL, 0, "Filters and sampling:", 2 },
	{ "comm", OPT_COMM, "NAME", 0, "Only processes named NAME (15 characters at most)", 2 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 directory or below", 2 },
	{ "sample", OPT_SAMPLE, "N[:SEED]", 0,
	  "Keep 1 in N records of event sources (seeded; not CPU samples)", 2 },
	{ "rate-cap", OPT_RATE_CAP, "N", 0,
	  "At most N records per second per CPU per event source", 2 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct parse_state {
	struct record_options *opts;
	const char *freq_arg;
	const char *duration_arg;
	const char *pid_arg;
	const char *offcpu_min_arg;
	const char *syscall_min_arg;
	const char *slow_call_arg;
	const char *sample_arg;
	const char *rate_cap_arg;
	const char *lock_min_arg;
	const char *fault_sample_arg;
	const char *max_size_arg;
	const char *flight_arg;
	const char *stack_copy_arg;
	const char *offcpu_copy_arg;
	const char *offcpu_reuse_arg;
	const char *req_rate_arg;
	const char *sched_rate_arg;
	const char *syscall_rate_arg;
	const char *probe_min_arg;
	int ntargets;
};

static error_t parse_option(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct record_options *o = ps->opts;

	switch (key) {
	case 'F':
		ps->freq_arg = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case 'f':
		o->force = true;
		break;
	case 'd':
		ps->duration_arg = arg;
		break;
	case 'p':
		if (!ps->pid_arg)
			ps->ntargets++;
		ps->pid_arg = arg;
		break;
	case 'a':
		if (o->mode != TARGET_ALL)
			ps->ntargets++;
		o->mode = TARGET_ALL;
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'e':
		o->events = arg;
		break;
	case OPT_LIST_EVENTS:
		o->list_events = true;
		break;
	case OPT_STRICT:
		o->strict = true;
		break;
	case OPT_OFFCPU_MIN:
		ps->offcpu_min_arg = arg;
		break;
	case OPT_SYSCALLS:
		o->syscalls = arg;
		break;
	case OPT_SYSCALL_MIN:
		ps->syscall_min_arg = arg;
		break;
	case OPT_SLOW_CALL:
		ps->slow_call_arg = arg;
		break;
	case OPT_COMM:
		o->comm = arg;
		break;
	case OPT_CGROUP:
		o->cgroup_path = arg;
		break;
	case OPT_SAMPLE:
		ps->sample_arg = arg;
		break;
	case OPT_RATE_CAP:
		ps->rate_cap_arg = arg;
		break;
	case OPT_MUTEX_UPROBES:
		o->mutex_uprobes = true;
		break;
	case OPT_LOCK_MIN:
		ps->lock_min_arg = arg;
		break;
	case OPT_FAULT_SAMPLE:
		ps->fault_sample_arg = arg;
		break;
	case OPT_MAX_SIZE:
		ps->max_size_arg = arg;
		break;
	case OPT_FLIGHT_RECORDER:
		ps->flight_arg = arg;
		break;
	case OPT_STACK_COPY:
		ps->stack_copy_arg = arg;
		break;
	case OPT_OFFCPU_COPY:
		ps->offcpu_copy_arg = arg;
		break;
	case OPT_OFFCPU_STACK_REUSE:
		ps->offcpu_reuse_arg = arg;
		break;
	case OPT_JVM_PERFMAP:
		o->jvm_perfmap = true;
		break;
	case OPT_PROBE_MIN:
		ps->probe_min_arg = arg;
		break;
	case OPT_PROBE_NO_STACK:
		o->probe_no_stack = true;
		break;
	case OPT_REQ_RATE:
		ps->req_rate_arg = arg;
		break;
	case OPT_SCHED_RATE:
		ps->sched_rate_arg = arg;
		break;
	case OPT_SYSCALL_RATE:
		ps->syscall_rate_arg = arg;
		break;
	case ARGP_KEY_ARGS:
		o->command = state->argv + state->next;
		ps->ntargets++;
		state->next = state->argc;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static uint64_t kernel_max_freq(void)
{
	char line[64];
	uint64_t value;

	if (read_first_line("/proc/sys/kernel/perf_event_max_sample_rate", line, sizeof(line)) ||
	    !parse_u64_in_range(line, 1, UINT32_MAX, &value))
		return FALLBACK_MAX_FREQ;
	return value;
}

static int validate_freq(struct record_options *o, const char *arg)
{
	uint64_t max = kernel_max_freq();
	uint64_t value;

	if (!arg)
		return 0;
	if (!parse_u64_in_range(arg, 0, UINT64_MAX, &value) || value == 0) {
		error_line("invalid frequency '%s': expected a whole number of samples per "
			   "second from 1 to %llu", arg, (unsigned long long)max);
		return 1;
	}
	if (value > max) {
		error_line("frequency %s Hz is above the kernel limit of %llu Hz "
			   "(/proc/sys/kernel/perf_event_max_sample_rate)",
			   arg, (unsigned long long)max);
		return 1;
	}
	o->freq_hz = value;
	return 0;
}

static int validate_duration(struct record_options *o, const char *arg)
{
	char *end;
	double seconds;

	if (!arg)
		return 0;
	errno = 0;
	seconds = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(seconds) || seconds <= 0 ||
	    seconds > MAX_DURATION_S) {
		error_line("invalid duration '%s': expected seconds greater than 0 "
			   "(at most one year)", arg);
		return 1;
	}
	o->duration_ns = (uint64_t)(seconds * 1e9);
	if (!o->duration_ns)
		o->duration_ns = 1;
	return 0;
}

/* A duration with a unit ("500us", "2s", or "0") of at most max_ns. */
static bool recorder_duration(const char *arg, uint64_t max_ns, uint64_t *out)
{
	return parse_duration_ns(arg, DURATION_UNIT_REQUIRED, 0, max_ns, out);
}

static int validate_offcpu_min(struct record_options *o, const char *arg)
{
	if (!arg)
		return 0;
	if (!recorder_duration(arg, MAX_OFFCPU_MIN_NS, &o->offcpu_min_ns)) {
		error_line("invalid --offcpu-min '%s': expected a duration such as 500us, 1ms "
			   "or 2s (at most 1 hour)", arg);
		return 1;
	}
	return 0;
}

static int validate_syscalls(struct record_options *o, const char *min_arg,
			     const char *slow_arg)
{
	struct syscall_set set;
	char why[200];

	if (o->syscalls && syscall_set_parse(o->syscalls, &set, why, sizeof(why))) {
		error_line("invalid --syscalls '%s': %s", o->syscalls, why);
		return 1;
	}
	if (min_arg && !recorder_duration(min_arg, MAX_SYSCALL_MIN_NS, &o->syscall_min_ns)) {
		error_line("invalid --syscall-min '%s': expected a duration such as 10us, 1ms "
			   "or 2s (at most 1 hour)", min_arg);
		return 1;
	}
	o->agg_slow_ns = AGG_SLOW_DEFAULT_NS;
	if (slow_arg && !recorder_duration(slow_arg, MAX_SYSCALL_MIN_NS, &o->agg_slow_ns)) {
		error_line("invalid --slow-call '%s': expected a duration such as 100us, 1ms "
			   "or 2s (at most 1 hour)", slow_arg);
		return 1;
	}
	if (o->syscalls && !o->selected[PERFCAP_SRC_SYSCALL])
		warning_line("--syscalls has no effect without the syscall source (-e syscall)");
	return 0;
}

static int validate_comm(const struct record_options *o)
{
	if (!o->comm)
		return 0;
	if (!o->comm[0] || strlen(o->comm) >= PERFCAP_COMM_LEN) {
		error_line("invalid --comm '%s': expected a process name of 1 to %d characters "
			   "(the kernel keeps %d)", o->comm, PERFCAP_COMM_LEN - 1, PERFCAP_COMM_LEN - 1);
		return 1;
	}
	return 0;
}

static int validate_cgroup(struct record_options *o)
{
	char why[512];

	if (!o->cgroup_path)
		return 0;
	if (cgroup_resolve(o->cgroup_path, &o->cgroup_id, &o->cgroup_level, why, sizeof(why))) {
		error_line("invalid --cgroup: %s", why);
		return 1;
	}
	return 0;
}

static uint64_t random_seed(void)
{
	uint64_t seed = 0;

	if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		seed = monotonic_ns() ^ realtime_ns();
	return seed;
}

/* "N" or "N:SEED" */
static int validate_sample(struct record_options *o, const char *arg)
{
	char n_text[32];
	const char *colon;
	size_t n_len;

	o->sample_one_in = 1;
	o->sample_seed = 0;
	if (!arg)
		return 0;
	colon = strchr(arg, ':');
	n_len = colon ? (size_t)(colon - arg) : strlen(arg);
	if (n_len < sizeof(n_text)) {
		memcpy(n_text, arg, n_len);
		n_text[n_len] = '\0';
	}
	if (n_len >= sizeof(n_text) ||
	    !parse_u64_in_range(n_text, 1, MAX_SAMPLE_ONE_IN, &o->sample_one_in) ||
	    (colon && !parse_u64_in_range(colon + 1, 0, UINT64_MAX, &o->sample_seed))) {
		error_line("invalid --sample '%s': expected N[:SEED], N from 1 to %d (keep 1 "
			   "record in N), SEED a whole number", arg, MAX_SAMPLE_ONE_IN);
		return 1;
	}
	if (!colon)
		o->sample_seed = random_seed();
	return 0;
}

static int validate_rate_cap(struct record_options *o, const char *arg)
{
	if (!arg)
		return 0;
	if (!parse_u64_in_range(arg, 1, MAX_RATE_CAP, &o->rate_cap)) {
		error_line("invalid --rate-cap '%s': expected records per second per CPU, "
			   "from 1 to %d", arg, MAX_RATE_CAP);
		return 1;
	}
	return 0;
}

/* The uprobe:/usdt: items of -e, and --probe-min. */
static int validate_probes(struct record_options *o, const struct parse_state *ps)
{
	int err = probe_specs_parse(o->events, &o->probes, &o->nprobes);

	if (err == -ENOMEM)
		error_line("out of memory");
	if (err)
		return 1;
	o->gc_probes = probe_specs_want_gc(o->events);
	if (o->selected[PERFCAP_SRC_PROBE] && o->nprobes == 0 && !o->gc_probes) {
		error_line("-e probe needs the probes themselves: uprobe:PATH:SYMBOL or "
			   "usdt:PATH:PROVIDER:NAME");
		return 1;
	}
	if (ps->probe_min_arg && !recorder_duration(ps->probe_min_arg, MAX_OFFCPU_MIN_NS,
						     &o->probe_min_ns)) {
		error_line("invalid --probe-min '%s': expected a duration such as 0, 10us or 1ms "
			   "(at most 1 hour)", ps->probe_min_arg);
		return 1;
	}
	if ((ps->probe_min_arg || o->probe_no_stack) && o->nprobes == 0)
		warning_line("--probe-min and --probe-no-stack have no effect without -e uprobe:... "
			     "or usdt:...");
	return 0;
}

static int validate_sources(struct record_options *o, const struct parse_state *ps)
{
	if (sources_select(o->events, o->selected))
		return 1;
	if (o->events && !o->selected[PERFCAP_SRC_SCHED] && ps->offcpu_min_arg)
		warning_line("--offcpu-min has no effect without the sched source");
	return validate_probes(o, ps);
}

/* --mutex-uprobes, --lock-min (lock) and --fault-sample (mem). */
static int validate_lock_mem(struct record_options *o, const struct parse_state *ps)
{
	if (ps->lock_min_arg && !recorder_duration(ps->lock_min_arg, MAX_OFFCPU_MIN_NS,
						    &o->lock_min_ns)) {
		error_line("invalid --lock-min '%s': expected a duration such as 0, 10us or 1ms "
			   "(at most 1 hour)", ps->lock_min_arg);
		return 1;
	}
	if (ps->fault_sample_arg && !parse_u64_in_range(ps->fault_sample_arg, 1,
							 MAX_SAMPLE_ONE_IN, &o->fault_one_in)) {
		error_line("invalid --fault-sample '%s': expected N from 1 to %d (record 1 page "
			   "fault in N)", ps->fault_sample_arg, MAX_SAMPLE_ONE_IN);
		return 1;
	}
	if (o->mutex_uprobes && o->mode == TARGET_ALL) {
		error_line("--mutex-uprobes needs -p PID or a command: the uprobes go on the "
			   "library each target maps, never on every process");
		return 1;
	}
	if ((o->mutex_uprobes || ps->lock_min_arg) && !o->selected[PERFCAP_SRC_LOCK])
		warning_line("--mutex-uprobes and --lock-min have no effect without -e lock");
	if (ps->fault_sample_arg && !o->selected[PERFCAP_SRC_MEM])
		warning_line("--fault-sample has no effect without -e mem");
	return 0;
}

static int validate_size(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	char low[32], high[32];

	if (!arg)
		return 0;
	if (!parse_size_bytes(arg, max, out) || *out < SIZE_LIMIT_MIN) {
		error_line("invalid %s '%s': expected a size such as 500K, 64M or 2G, from %s "
			   "(room for the header, the metadata and the closing chunks) to %s",
			   opt, arg, fmt_size(low, sizeof(low), SIZE_LIMIT_MIN),
			   fmt_size(high, sizeof(high), max));
		return 1;
	}
	return 0;
}

/* --stack-copy SIZE: 0, or 512 bytes .. PERFCAP_USTACK_MAX */
static int validate_stack_copy(struct record_options *o, const char *arg)
{
	uint64_t bytes;

	if (!arg)
		return 0;
	if ((strcmp(arg, "0") != 0 && !parse_size_bytes(arg, PERFCAP_USTACK_MAX, &bytes)) ||
	    (strcmp(arg, "0") != 0 && bytes < 512)) {
		error_line("invalid --stack-copy '%s': expected 0 (off) or a size from 512 to 64K",
			   arg);
		return 1;
	}
	o->stack_copy = strcmp(arg, "0") == 0 ? 0 : (uint32_t)(bytes & ~7ull);
	return 0;
}

/* --offcpu-copy return|switch-out, --offcpu-stack-reuse DURATION */
static int validate_offcpu_copy(struct record_options *o, const char *arg, const char *reuse)
{
	if (reuse && !recorder_duration(reuse, MAX_OFFCPU_MIN_NS, &o->offcpu_stack_reuse_ns)) {
		error_line("invalid --offcpu-stack-reuse '%s': expected a duration such as "
			   "100ms or 1s, or 0 (at most 1 hour)", reuse);
		return 1;
	}
	if (!arg || strcmp(arg, "return") == 0)
		return 0;
	if (strcmp(arg, "switch-out") != 0) {
		error_line("invalid --offcpu-copy '%s': expected return or switch-out", arg);
		return 1;
	}
	o->offcpu_copy_at_switch = true;
	return 0;
}

/* --req-rate, --sched-rate and --syscall-rate N: a budget of `what` a second, 0 (every
 * one) to 100,000,000, into *rate. */
static int validate_rate(const char *option, const char *what, const char *every,
			 const char *arg, uint64_t *rate)
{
	if (!arg)
		return 0;
	if (!parse_u64_in_range(arg, 0, 100000000, rate)) {
		error_line("invalid --%s '%s': expected %s a second, 0 (every %s) to 100,000,000",
			   option, arg, what, every);
		return 1;
	}
	return 0;
}

/* --max-size and --flight-recorder */
static int validate_limits(struct record_options *o, const struct parse_state *ps)
{
	if (validate_size("--max-size", ps->max_size_arg, MAX_MAX_SIZE, &o->max_size) ||
	    validate_size("--flight-recorder", ps->flight_arg, MAX_FLIGHT_SIZE, &o->flight_size))
		return 1;
	if (o->max_size && o->flight_size) {
		error_line("--max-size and --flight-recorder cannot be combined (the flight "
			   "recorder already bounds what it keeps)");
		return 1;
	}
	return 0;
}

static int validate_target(struct record_options *o, struct parse_state *ps)
{
	int err;

	if (ps->ntargets == 0) {
		error_line("no target: give -p PID, -a, or a command to run (see --help)");
		return 1;
	}
	if (ps->ntargets > 1) {
		error_line("choose one target: -p PID, -a, or a command, not several");
		return 1;
	}
	if (o->command) {
		o->mode = TARGET_COMMAND;
		err = command_check_runnable(o->command[0]);
		if (err) {
			error_line("cannot run '%s': %s", o->command[0],
				   err == -ENOENT ? "command not found" : strerror(-err));
			return 1;
		}
		return 0;
	}
	if (ps->pid_arg) {
		o->mode = TARGET_PIDS;
		return parse_pid_list(ps->pid_arg, &o->pids, &o->npids) ? 1 : 0;
	}
	return 0; /* -a */
}

/* argp and getopt name the program after argv[0] in their messages: give
 * them "perfcap-record", not the path it was started by. */
static int parse_with_short_name(const struct argp *argp, int argc, char **argv,
				 struct parse_state *ps)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int err;

	if (!args)
		return ENOMEM;
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	args[0] = (char *)PROGRAM_NAME;
	err = argp_parse(argp, argc, args, ARGP_IN_ORDER, NULL, ps);
	/* the command (if any) points into args: keep it pointing into argv */
	if (ps->opts->command)
		ps->opts->command = argv + (ps->opts->command - args);
	free(args);
	return err;
}

/* --help: -e names its default from the sources' registry. */
static char *help_filter(int key, const char *text, void *input)
{
	char *out;

	(void)input;
	if (key != 'e' || asprintf(&out, "%s (default %s)", text, sources_default_list()) < 0)
		return (char *)text;
	return out;
}

int cli_parse(int argc, char **argv, struct record_options *opts)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_option,
		.help_filter = help_filter,
		.args_doc = "-p PID[,PID...]\n-a\n[--] COMMAND [ARGS...]",
		.doc = doc,
	};
	struct parse_state ps = { .opts = opts };
	int err;

	memset(opts, 0, sizeof(*opts));
	opts->freq_hz = DEFAULT_FREQ_HZ;
	opts->output = DEFAULT_OUTPUT;
	opts->offcpu_min_ns = DEFAULT_OFFCPU_MIN_NS;
	opts->offcpu_stack_reuse_ns = DEFAULT_OFFCPU_STACK_REUSE_NS;
	opts->lock_min_ns = DEFAULT_LOCK_MIN_NS;
	opts->fault_one_in = DEFAULT_FAULT_ONE_IN;
	opts->sample_one_in = 1;
	opts->stack_copy = DEFAULT_STACK_COPY;
	opts->req_rate = DEFAULT_REQ_RATE;
	opts->sched_rate = DEFAULT_SCHED_RATE;
	opts->syscall_rate = DEFAULT_SYSCALL_RATE;
	opts->argc = argc;
	opts->argv = argv;
	argp_err_exit_status = 1;
	err = parse_with_short_name(&argp, argc, argv, &ps);
	if (err)
		return 1;
	verbose_enabled = opts->verbose;
	if (validate_freq(opts, ps.freq_arg) || validate_duration(opts, ps.duration_arg) ||
	    validate_offcpu_min(opts, ps.offcpu_min_arg) || validate_sources(opts, &ps) ||
	    validate_syscalls(opts, ps.syscall_min_arg, ps.slow_call_arg) ||
	    validate_comm(opts) || validate_cgroup(opts) ||
	    validate_sample(opts, ps.sample_arg) || validate_rate_cap(opts, ps.rate_cap_arg) ||
	    validate_lock_mem(opts, &ps) || validate_limits(opts, &ps) ||
	    validate_stack_copy(opts, ps.stack_copy_arg) ||
	    validate_offcpu_copy(opts, ps.offcpu_copy_arg, ps.offcpu_reuse_arg) ||
	    validate_rate("req-rate", "requests", "request", ps.req_rate_arg, &opts->req_rate) ||
	    validate_rate("sched-rate", "context switches", "switch", ps.sched_rate_arg,
			  &opts->sched_rate) ||
	    validate_rate("syscall-rate", "system calls", "call", ps.syscall_rate_arg,
			  &opts->syscall_rate))
		return 1;
	if (opts->list_events)
		return 0;
	if (!opts->output[0]) {
		error_line("the output file name is empty");
		return 1;
	}
	return validate_target(opts, &ps);
}

const char *target_mode_name(enum target_mode mode)
{
	switch (mode) {
	case TARGET_COMMAND:
		return "command";
	case TARGET_PIDS:
		return "pids";
	case TARGET_ALL:
		return "all";
	default:
		return "none";
	}
}

void cli_free(struct record_options *opts)
{
	free(opts->probes);
	opts->probes = NULL;
	opts->nprobes = 0;
	free(opts->pids);
	opts->pids = NULL;
	opts->npids = 0;
}
