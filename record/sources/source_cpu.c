/* source_cpu.c - the cpu source: CPU stack sampling (bpf/cpu_sample.bpf.c).
 *
 * The sample program runs on cpu-clock software perf events in frequency
 * mode (-F HZ). With targets (-p PIDS, a command) one event per thread of
 * each target, inherited by the threads and processes they make later
 * (perf record -p's way): the clock runs only while a traced task runs,
 * so nothing else is interrupted. Per-CPU events cost the host a timer
 * interrupt on every CPU at every tick whatever runs there: 10-12% of
 * nginx's throughput at -F 499 on the 2-CPU VM, against 1% per thread
 * (bench/real_servers.sh, perf record -a and -p alike). But a thread's
 * event costs two timer operations at each of its context switches: when
 * the traced threads switch more than SWITCHES_PER_TICK times per tick of
 * all CPUs (the sched source's rate, or without it the threads' own
 * schedstat counts), the CPUs are sampled instead, from then on. With -a,
 * or when a target's events cannot be opened, one event per online CPU
 * (offline CPUs have none). Each sample carries raw kernel and user stacks,
 * deduplicated here into STACK records; the SAMPLE record refers to them
 * by id. With --stack-copy, a USTACK record (user registers + stack
 * window, consume/ustack_copy.c) precedes each sample of a user task.
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
#include "session/shared_maps.h"
#include "session/target_map.h"
#include "source.h"
#include "source_sched.h"
#include "ustack_setup.h"
#include "util/cpu_times.h"
#include "util/procinfo.h"
#include "util/util.h"

static struct cpu_sample_bpf *skel;
static struct bpf_link **cpu_links;   /* one per entry of cpus */
static int *clock_fds;                /* each link's perf event, read at detach */
static int *cpus;                     /* online CPUs with a perf event */
static int ncpus;
static uint64_t period_ns;            /* the events' sampling period */
/* per thread of the targets instead (per_task): links and their events */
static bool per_task;
static struct bpf_link **task_links;
static int ntask_links, task_links_cap;
static uint64_t freq;                 /* -F */

/* A thread's event costs its CPU two timer operations at each context
 * switch of the thread; a CPU's event one timer interrupt per tick on
 * every CPU, whatever runs. On the 2-CPU VM a tick cost about as much of
 * a server's throughput as 50 switches (nginx: per-CPU events at 499 Hz
 * -11%, per thread -1%; postgres: per thread at 99 Hz under about 60,000
 * traced switches a second -13% against per CPU; bench/real_servers.sh,
 * 2026-11-28). Above that many switches per tick of all CPUs the CPUs are
 * sampled instead. */
#define SWITCHES_PER_TICK 50
static struct {
	uint64_t at_ns;               /* when the CPUs' events took over (0: never) */
	uint64_t rate;                /* the switches a second that decided it */
	uint64_t run_base;            /* cpu_ticks then: the threads' samples */
	uint64_t checked_ns;
} to_cpus;

/* Without the sched source (`-e cpu`), the rate comes from the kernel's
 * own count of each traced thread's switch-ins (/proc/PID/task/TID/
 * schedstat, its third field), summed over the targets' threads (the
 * `targets` map: the -p processes and the forks followed). A thread that
 * appeared since the last look adds its whole count, one that exited
 * takes its count away (a rate below 0 reads 0): either errs for one look
 * only. Each look reads one file per thread, so with many threads it
 * looks less often: every THREAD_LOOK_NS per thread seen, at least every
 * 100 ms. */
#define THREAD_LOOK_NS 1000000ull
static struct {
	int targets_fd;               /* -1: no targets (-a) */
	uint64_t sum, at_ns, next_ns; /* the last look: its sum, when */
	bool unreadable;              /* no target's /proc/PID/task readable: not again */
} own = { .targets_fd = -1 };

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

/* A cpu-clock event in frequency mode, disabled until the program's link
 * enables it: on thread tid (inherited by what it makes later), or, tid
 * -1, on CPU cpu (whatever runs there). */
static int open_clock(pid_t tid, int cpu, uint64_t freq_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq_hz,
		.disabled = 1,
		.inherit = tid >= 0,
	};
	long fd = syscall(__NR_perf_event_open, &attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/* The CPUs' events opened (disabled) and not yet linked: opened while the
 * recorder may still open system-wide events, linked when they are to
 * sample (the program's link enables them, no privilege needed then). */
static int *open_fds, *open_cpu_ids;
static int nopen;

static int open_one_cpu(int cpu, uint64_t freq_hz, char *why, size_t len)
{
	int fd = open_clock(-1, cpu, freq_hz);

	if (fd == -ENODEV) /* went offline since we listed it */
		return 0;
	if (fd < 0) {
		snprintf(why, len, "cannot open a cpu-clock perf event on CPU %d: %s", cpu,
			 explain_perf_error(-fd));
		return fd;
	}
	open_cpu_ids[nopen] = cpu;
	open_fds[nopen++] = fd;
	return 0;
}

static int link_one_cpu(int cpu, int fd, char *why, size_t len)
{
	struct bpf_link *link;
	int clock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);  /* the link closes fd */

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

/* ---- per thread of the targets -------------------------------------------- */

static int attach_one_task(pid_t tid, uint64_t freq_hz)
{
	int fd = open_clock(tid, -1, freq_hz);
	struct bpf_link *link;

	if (fd == -ESRCH)          /* exited since it was listed: nothing to sample */
		return 0;
	if (fd < 0)
		return fd;
	if (ntask_links == task_links_cap) {
		int cap = task_links_cap ? task_links_cap * 2 : 64;
		struct bpf_link **grown = realloc(task_links, sizeof(*grown) * (size_t)cap);

		if (!grown) {
			close(fd);
			return -ENOMEM;
		}
		task_links = grown;
		task_links_cap = cap;
	}
	link = bpf_program__attach_perf_event(skel->progs.on_cpu_sample, fd);
	if (!link) {             /* the link owns fd once made */
		int err = -errno;

		close(fd);
		return err;
	}
	task_links[ntask_links++] = link;
	return 0;
}

static int attach_tid(void *ctx, uint32_t tid)
{
	return attach_one_task((pid_t)tid, *(const uint64_t *)ctx);
}

/* An event on each thread of pid (/proc/PID/task): threads made later by
 * any of them inherit one. A process gone already is no error (its exit
 * is the recording's business). */
static int attach_process(pid_t pid, uint64_t freq_hz)
{
	int err = procinfo_for_each_tid((uint32_t)pid, attach_tid, &freq_hz);

	return err == -ENOENT ? 0 : err;
}

static void detach_tasks(void)
{
	for (int i = 0; i < ntask_links; i++)
		bpf_link__destroy(task_links[i]);
	ntask_links = 0;
}

/* Per thread of the targets; false (nothing attached) when one cannot be
 * opened, and the CPUs are sampled instead. */
static bool attach_targets(const struct source_env *env)
{
	int err = 0;

	for (size_t i = 0; i < env->ntarget_pids && !err; i++)
		err = attach_process(env->target_pids[i], env->opts->freq_hz);
	if (!err && ntask_links)
		return true;
	if (err)
		verbose_line("cpu: cannot sample the targets' threads (%s): sampling the CPUs",
			     strerror(-err));
	detach_tasks();
	return false;
}

/* An event on each online CPU. */
static void close_open_cpus(void)
{
	for (int i = 0; i < nopen; i++)
		if (open_fds[i] >= 0)
			close(open_fds[i]);
	nopen = 0;
}

/* An event on each online CPU, opened disabled. */
static int open_cpus(uint64_t freq_hz, char *why, size_t len)
{
	int *online, nonline = online_cpus(&online), err = 0;

	if (nonline < 0) {
		snprintf(why, len, "cannot read the online CPUs: %s", strerror(-nonline));
		return nonline;
	}
	cpus = calloc((size_t)nonline, sizeof(*cpus));
	cpu_links = calloc((size_t)nonline, sizeof(*cpu_links));
	clock_fds = calloc((size_t)nonline, sizeof(*clock_fds));
	open_fds = calloc((size_t)nonline, sizeof(*open_fds));
	open_cpu_ids = calloc((size_t)nonline, sizeof(*open_cpu_ids));
	if (!cpus || !cpu_links || !clock_fds || !open_fds || !open_cpu_ids) {
		snprintf(why, len, "out of memory");
		err = -ENOMEM;
	}
	for (int i = 0; i < nonline && !err; i++)
		err = open_one_cpu(online[i], freq_hz, why, len);
	free(online);
	if (err)
		close_open_cpus();
	return err;
}

/* The program linked to each opened event: they sample from now on. */
static int link_cpus(uint64_t freq_hz, char *why, size_t len)
{
	int err = 0;

	for (int i = 0; i < nopen && !err; i++) {
		err = link_one_cpu(open_cpu_ids[i], open_fds[i], why, len);
		open_fds[i] = -1;   /* the link's, or closed */
	}
	close_open_cpus();
	if (!err && !ncpus) {
		snprintf(why, len, "no online CPU accepted a perf event");
		err = -ENODEV;
	}
	host_cpu_read(&idle_from, NULL);
	if (!err)
		verbose_line("sampling %d CPUs at %llu Hz", ncpus, (unsigned long long)freq_hz);
	return err;
}

static int attach_cpus(uint64_t freq_hz, char *why, size_t len)
{
	int err = open_cpus(freq_hz, why, len);

	return err ? err : link_cpus(freq_hz, why, len);
}

static int cpu_attach(const struct source_env *env, char *why, size_t len)
{
	freq = env->opts->freq_hz;
	/* the kernel turns a cpu-clock frequency into this period */
	period_ns = freq ? 1000000000ull / freq : 0;
	per_task = env->opts->mode != TARGET_ALL && env->ntarget_pids && attach_targets(env);
	own.targets_fd = per_task ? env->maps->targets_fd : -1;
	if (per_task) {
		verbose_line("sampling %d threads of %zu processes at %llu Hz", ntask_links,
			     env->ntarget_pids, (unsigned long long)freq);
		/* the CPUs' events, opened now for cpu_tick (privileged) */
		if (open_cpus(freq, why, len))
			verbose_line("cpu: %s: the threads' events stay throughout", why);
		return 0;
	}
	return attach_cpus(freq, why, len);
}

struct switch_sum {
	uint32_t pid;
	uint64_t sum;   /* switch-ins of the threads read */
	int threads;    /* how many were read */
};

static int add_switches(void *ctx, uint32_t tid)
{
	struct switch_sum *s = ctx;
	uint64_t n;

	if (procinfo_thread_switches(s->pid, tid, &n) == 0) { /* else exited meanwhile */
		s->sum += n;
		s->threads++;
	}
	return 0;
}

/* The traced threads' switches a second since the last look (0: the
 * first look, or not readable). */
static uint64_t own_switch_rate(uint64_t now_ns)
{
	struct switch_sum s = { 0 };
	uint32_t *pids = NULL, npids = 0;
	struct targets t = { .map_fd = own.targets_fd };
	uint64_t rate = 0;
	int refused = 0, err;

	if (own.targets_fd < 0 || own.unreadable || now_ns < own.next_ns ||
	    targets_list(&t, &pids, &npids))
		return 0;
	for (uint32_t i = 0; i < npids; i++) {
		s.pid = pids[i];
		err = procinfo_for_each_tid(pids[i], add_switches, &s);
		if (err < 0 && err != -ENOENT) /* gone meanwhile: nothing to count */
			refused++;
	}
	free(pids);
	if (refused && !s.threads) {  /* hidepid= on /proc: not again */
		verbose_line("cpu: cannot read the targets' /proc/PID/task: the threads' events stay");
		own.unreadable = true;
		return 0;
	}
	if (own.at_ns && now_ns > own.at_ns && s.sum > own.sum)
		rate = (s.sum - own.sum) * 1000000000ull / (now_ns - own.at_ns);
	own.sum = s.sum;
	own.at_ns = now_ns;
	own.next_ns = now_ns + (uint64_t)s.threads * THREAD_LOOK_NS;
	return rate;
}

/* Each tick, every 100 ms while sampling per thread: the CPUs' events
 * take over when the traced threads switch too often (SWITCHES_PER_TICK),
 * attached before the threads' are detached, so no tick is lost. Soon:
 * until then every switch pays the threads' events (a pingpong's first
 * second ran 28% slower when this looked once a second). */
static void cpu_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t rate;
	char why[256];

	(void)c;
	if (final || !per_task || now_ns < to_cpus.checked_ns + 100000000ull)
		return;
	to_cpus.checked_ns = now_ns;
	rate = sched_attached() ? sched_switch_rate(now_ns) : own_switch_rate(now_ns);
	if (online <= 0 || rate <= SWITCHES_PER_TICK * (uint64_t)online * freq)
		return;
	snprintf(why, sizeof(why), "the CPUs' events were not opened");
	if (!nopen || percpu_counts_read(skel->maps.cpu_ticks, &to_cpus.run_base, 1) ||
	    link_cpus(freq, why, sizeof(why))) {
		for (; ncpus > 0; ncpus--) {   /* any linked: not both */
			bpf_link__destroy(cpu_links[ncpus - 1]);
			if (clock_fds[ncpus - 1] >= 0)
				close(clock_fds[ncpus - 1]);
		}
		verbose_line("cpu: %s; the threads' events stay", why);
		to_cpus.checked_ns = UINT64_MAX - 100000000ull;   /* not again */
		return;
	}
	detach_tasks();
	per_task = false;
	to_cpus.at_ns = now_ns;
	to_cpus.rate = rate;
	verbose_line("cpu: %llu switches a second of the traced threads: sampling the CPUs",
		     (unsigned long long)rate);
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

	detach_tasks();   /* per thread: the ticks due are not known (inherited
			   * events fold into their parent's count only at exit) */

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
	if (idle >= 0 && skel && percpu_counts_read(skel->maps.cpu_ticks, &run, 1) == 0) {
		run = run > to_cpus.run_base ? run - to_cpus.run_base : 0;  /* the CPUs' span */
		ticks = (typeof(ticks)){ due > (uint64_t)idle ? due - (uint64_t)idle : 0, run, 1 };
	}
}

static void cpu_destroy(void)
{
	cpu_detach();
	free(cpu_links);
	free(clock_fds);
	close_open_cpus();
	free(open_fds);
	free(open_cpu_ids);
	open_fds = open_cpu_ids = NULL;
	free(cpus);
	free(task_links);
	task_links = NULL;
	task_links_cap = 0;
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
	err |= chunk_buffer_add_kv(kv, "sampling.cpu.scope", per_task ? "threads" : "cpus");
	if (per_task)
		err |= chunk_buffer_add_kv_u64(kv, "sampling.cpu.threads", (uint64_t)ntask_links);
	else
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

	if (to_cpus.at_ns) {
		err |= chunk_buffer_add_kv_u64(kv, "cpu.scope.cpus_from_ns", to_cpus.at_ns);
		err |= chunk_buffer_add_kv_u64(kv, "cpu.scope.switch_rate", to_cpus.rate);
	}
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
	.summary = "CPU stack samples (user + kernel) at -F HZ of each traced thread's CPU time "
		   "(per thread of the targets; with -a, on every CPU)",
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
	.tick = cpu_tick,
	.summary_note = cpu_summary_note,
};
