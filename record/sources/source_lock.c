/* source_lock.c - the lock source (`-e lock`): kernel lock contention
 * intervals (LOCK records, from lock:contention_begin/end) and, with
 * --mutex-uprobes, waits in pthread_mutex_lock (MUTEX records, from a
 * uprobe + uretprobe pair); the futex system calls come from the syscall
 * source's `lock` set. bpf/lock.bpf.c is the kernel side.
 *
 * The uprobes (mutex_uprobes.c) go on the object each initial target maps
 * itself (found by uprobe_target.c in /proc/PID/maps), bound to that pid:
 * only the target takes the breakpoint, never the other processes sharing
 * the library. A command (`-- CMD`) is still held before exec at attach
 * time; its maps are then the recorder's own image, so the uprobe goes on
 * the libc the recorder itself maps, by inode: the kernel installs it when
 * the command's loader maps that same file after exec (a command with
 * another libc, or a static one, gets no MUTEX records; META says where
 * the probes went). Children forked later are not probed (their futex
 * calls are still recorded by the syscall set).
 *
 * Intervals shorter than --lock-min are only counted (STATS), so totals
 * stay true. A MUTEX duration runs from the call to the return and so
 * includes what the two probes themselves cost; that cost is measured at
 * attach time on the recorder's own calls (median of 200 uncontended
 * ones), added to --lock-min for the MUTEX threshold and stored in META
 * (lock.mutex_probe_cost_ns). The uprobes are opt-in: each call of the
 * lock function, contended or not, takes two breakpoints in the target.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "consume/consumer.h"
#include "lock.skel.h"
#include "mutex_uprobes.h"
#include "session/percpu_counts.h"
#include "session/preflight.h"
#include "session/shared_maps.h"
#include "source.h"
#include "syscall_prog.h"
#include "uprobe_target.h"
#include "util/util.h"

#define MUTEX_PIDS_MAX 64           /* initial targets probed */

static struct lock_bpf *skel;
static bool kernel_contention;      /* the contention tracepoints exist */
static bool mutex_wanted;           /* --mutex-uprobes */
static struct mutex_uprobes probes;
static char mutex_state[MUTEX_DESC_MAX]; /* "off", or "failed: why" */
static uint64_t probe_cost_ns;      /* what the probes add to one call */
static uint64_t mutex_min_ns;       /* --lock-min + probe_cost_ns */
static uint64_t lock_records, mutex_records;

/* ---- loading ------------------------------------------------------------ */

static void choose_programs(void)
{
	bpf_program__set_autoload(skel->progs.on_contention_begin, kernel_contention);
	bpf_program__set_autoload(skel->progs.on_contention_end, kernel_contention);
	bpf_program__set_autoload(skel->progs.mutex_enter, mutex_wanted);
	bpf_program__set_autoload(skel->progs.mutex_exit, mutex_wanted);
}

static int load_own(const struct source_env *env, char *why, size_t len)
{
	int err;

	kernel_contention = preflight_tracepoint_args("contention_begin") == 2;
	mutex_wanted = env->opts->mutex_uprobes;
	snprintf(mutex_state, sizeof(mutex_state), "off");
	if (!kernel_contention && !mutex_wanted) {
		snprintf(why, len, "the kernel has no lock:contention_begin tracepoint (Linux "
			 "5.19+); --mutex-uprobes would still record user mutex waits");
		return -ENOENT;
	}
	skel = lock_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	choose_programs();
	skel->rodata->pc_config = *env->config;
	skel->rodata->lock_min_ns = env->opts->lock_min_ns;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(lock_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

/* Our BPF object, then our `lock` set (futex) in the syscall program. */
static int lock_load(const struct source_env *env, char *why, size_t len)
{
	int err = load_own(env, why, len);

	return err ? err : syscall_prog_load(PERFCAP_SRC_LOCK, env, why, len);
}

/* ---- attaching: kernel contention ---------------------------------------- */

static int attach_contention(char *why, size_t len)
{
	int err;

	if (!kernel_contention)
		return 0;
	skel->links.on_contention_begin = bpf_program__attach(skel->progs.on_contention_begin);
	err = libbpf_get_error(skel->links.on_contention_begin);
	if (!err) {
		skel->links.on_contention_end = bpf_program__attach(skel->progs.on_contention_end);
		err = libbpf_get_error(skel->links.on_contention_end);
	}
	if (err) {
		skel->links.on_contention_begin = skel->links.on_contention_end = NULL;
		source_explain(why, len, "cannot attach lock:contention_begin/end", (int)err);
	}
	return (int)err;
}

/* ---- attaching: user mutex uprobes ---------------------------------------- */

/* The initial targets: what the caller put in the shared pid filter (at
 * most max; a warning names the rest as not probed). */
static size_t initial_targets(const struct source_env *env, pid_t *pids, size_t max)
{
	size_t more, n = uprobe_initial_targets(env->maps->targets_fd, pids, max, &more);

	if (more)
		warning_line("lock: mutex uprobes in the first %zu target processes only "
			     "(%zu more not probed)", max, more);
	return n;
}

static int attach_mutexes(const struct source_env *env, char *why, size_t len)
{
	pid_t pids[MUTEX_PIDS_MAX];
	size_t n;
	int probed = 0, err = -ENOENT;

	if (!mutex_wanted)
		return 0;
	probes.skel = skel;
	probe_cost_ns = mutex_uprobes_probe_cost(&probes);
	mutex_min_ns = env->opts->lock_min_ns + probe_cost_ns;
	skel->data->mutex_min_ns = mutex_min_ns;
	n = initial_targets(env, pids, MUTEX_PIDS_MAX);
	if (n == 0)
		snprintf(why, len, "no target process to find pthread_mutex_lock in");
	for (size_t i = 0; i < n; i++) {
		err = mutex_uprobes_attach_pid(&probes, pids[i], why, len);
		if (err > 0)
			probed++;
		else
			warning_line("lock: no mutex uprobes in process %d: %s", (int)pids[i], why);
	}
	if (probed)
		return 0;
	snprintf(mutex_state, sizeof(mutex_state), "failed: %s", why);
	if (env->opts->strict)
		return err < 0 ? err : -ENOENT;
	warning_line("lock: recording kernel lock contention only (%s)", why);
	return 0;
}

static void lock_detach(void);

static int lock_attach(const struct source_env *env, char *why, size_t len)
{
	int err = attach_contention(why, len);

	if (!err)
		err = attach_mutexes(env, why, len);
	if (!err && !kernel_contention && probes.nlinks == 0) {
		snprintf(why, len, "no lock:contention tracepoints and %s", mutex_state);
		err = -ENOENT;
	}
	if (!err)
		err = syscall_prog_attach(PERFCAP_SRC_LOCK, why, len);
	if (err)
		lock_detach();
	return err;
}

static void lock_detach(void)
{
	mutex_uprobes_detach(&probes);
	if (skel)
		lock_bpf__detach(skel);
	syscall_prog_detach(PERFCAP_SRC_LOCK); /* no-op unless lock holds it */
}

static void lock_destroy(void)
{
	lock_detach();
	lock_bpf__destroy(skel);
	skel = NULL;
	syscall_prog_destroy(PERFCAP_SRC_LOCK);
}

/* ---- records ------------------------------------------------------------ */

static void handle_lock(struct consumer *c, const struct perfcap_lock *e)
{
	struct pc_rec_lock rec = {
		.h.type = PC_REC_LOCK,
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.lock = e->lock,
		.flags = e->flags,
		.ret = e->ret,
	};

	consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	rec.kstack = consumer_kernel_stack_id(c, PERFCAP_SRC_LOCK, e->kstack);
	if (consumer_add_event(c, PERFCAP_SRC_LOCK, &rec, sizeof(rec), e->h.ts) == 0)
		lock_records++;
}

static void handle_mutex(struct consumer *c, const struct perfcap_mutex *e)
{
	uint32_t aspace = consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	struct pc_rec_mutex rec = {
		.h.type = PC_REC_MUTEX,
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.addr = e->addr,
	};

	rec.ustack = consumer_user_stack_id(c, PERFCAP_SRC_LOCK, e->ustack, aspace, e->pid,
					    e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_LOCK, &rec, sizeof(rec), e->h.ts) == 0)
		mutex_records++;
}

static void lock_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (h->type == PERFCAP_EV_SYSCALL)
		syscall_prog_handle(c, rec, size);
	else if (h->type == PERFCAP_EV_LOCK && size >= sizeof(struct perfcap_lock))
		handle_lock(c, rec);
	else if (h->type == PERFCAP_EV_MUTEX && size >= sizeof(struct perfcap_mutex))
		handle_mutex(c, rec);
	else
		consumer_drop(c, PERFCAP_SRC_LOCK);
}

/* ---- metadata and counters ------------------------------------------------ */

static int lock_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = syscall_prog_meta(PERFCAP_SRC_LOCK, kv);

	err |= chunk_buffer_add_kv(kv, "lock.kernel_contention",
				   kernel_contention ? "tp_btf lock:contention_begin/end"
						     : "unavailable");
	err |= chunk_buffer_add_kv_u64(kv, "lock.min_ns", env->opts->lock_min_ns);
	err |= chunk_buffer_add_kv(kv, "lock.mutex_function", mutex_uprobe_functions[0]);
	err |= chunk_buffer_add_kv(kv, "lock.mutex_uprobes",
				   probes.desc[0] ? probes.desc : mutex_state);
	if (mutex_wanted) {
		err |= chunk_buffer_add_kv_u64(kv, "lock.mutex_probe_cost_ns", probe_cost_ns);
		err |= chunk_buffer_add_kv_u64(kv, "lock.mutex_min_ns", mutex_min_ns);
	}
	return err ? -ENOMEM : 0;
}

static int lock_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	static const char *const names[PERFCAP_LOCK_C_NR] = {
		"lock.contentions", "lock.contention_ns", "lock.contentions_below_min",
		"lock.unmatched_ends", "lock.nested_too_deep", "lock.mutex_calls",
		"lock.mutex_ns", "lock.mutex_calls_below_min",
	};
	uint64_t v[PERFCAP_LOCK_C_NR] = { 0 };
	int err = syscall_prog_stats(PERFCAP_SRC_LOCK, kv);

	(void)c;
	if (skel)
		percpu_counts_read(skel->maps.lock_counters, v, PERFCAP_LOCK_C_NR);
	for (int i = 0; i < PERFCAP_LOCK_C_NR; i++)
		err |= chunk_buffer_add_kv_u64(kv, names[i], v[i]);
	err |= chunk_buffer_add_kv_u64(kv, "lock.records", lock_records);
	err |= chunk_buffer_add_kv_u64(kv, "lock.mutex_records", mutex_records);
	return err ? -ENOMEM : 0;
}

/* The syscall program's windows (--syscall-rate): ticked and told by the
 * program's primary holder only (syscall_prog.c). */
static void lock_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	syscall_prog_tick(PERFCAP_SRC_LOCK, c, now_ns, final);
}

static void lock_note(char *buf, size_t len)
{
	syscall_prog_note(PERFCAP_SRC_LOCK, buf, len);
}

static const uint16_t lock_event_types[] = {
	PERFCAP_EV_LOCK, PERFCAP_EV_MUTEX, PERFCAP_EV_SYSCALL, 0
};

const struct source lock_source = {
	.summary = "kernel lock contention (>= --lock-min) with stacks, futex calls; "
		   "pthread_mutex_lock waits with --mutex-uprobes",
	.id = PERFCAP_SRC_LOCK,
	.event_types = lock_event_types,
	.load = lock_load,
	.attach = lock_attach,
	.detach = lock_detach,
	.destroy = lock_destroy,
	.handle = lock_handle,
	.meta = lock_meta,
	.stats = lock_stats,
	.tick = lock_tick,
	.summary_note = lock_note,
};
