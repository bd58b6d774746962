/* source_waits.c - the waits source (`-e waits`, in the default set): the
 * time each traced thread spends blocked, by the system call it blocked in
 * (futex wait per address, poll/epoll per epoll fd, socket receive/send
 * per fd, file read/write per inode, other), and the futex wakeups each
 * thread did per address, summed in the kernel (bpf/waits.bpf.c) at
 * context switches and wakeups only, so it costs nothing per system call.
 * Written as THREAD_METRIC records with flag WAIT, window by window
 * (metrics_drain.c). Exact per-call counts and times need `-e agg`.
 * With the sched source loaded (the default set), sched's programs make
 * the sums into its maps, which this source's object reuses, loading none
 * of its own programs (source_sched.h; META waits.in_sched).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "waits.skel.h"
#include "session/percpu_counts.h"
#include "source.h"
#include "session/preflight.h"
#include "metrics_drain.h"
#include "source_sched.h"
#include "util/util.h"
#include "common/units.h"

static struct waits_bpf *skel;
static struct metrics_drain drainer = { .map_fd = -1, .source = PERFCAP_SRC_WAITS };
static uint64_t last_unclosed;     /* waits.unclosed, as waits_stats last read it */
static bool in_sched;              /* the sched programs make the sums (source_sched.h) */

/* With the sched source loaded, its programs make the sums into its maps:
 * this object reuses them and loads no program of its own. */
static int share_sched_maps(char *why, size_t len)
{
	struct bpf_map *sums, *counters;
	int err;

	in_sched = sched_waits_maps(&sums, &counters) == 0;
	if (!in_sched)
		return 0;
	err = bpf_map__reuse_fd(skel->maps.agg_metrics, bpf_map__fd(sums));
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.agg_counters, bpf_map__fd(counters));
	if (err)
		source_explain(why, len, "cannot share the sched source's maps", err);
	bpf_program__set_autoload(skel->progs.waits_switch, false);
	bpf_program__set_autoload(skel->progs.waits_waking, false);
	return err;
}

static int waits_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = waits_bpf__open();
	if (!skel) {
		err = -errno;
		source_explain(why, len, "cannot open the BPF object", err);
		return err;
	}
	skel->rodata->pc_config = *env->config;
	/* sched_switch(preempt, prev, next, prev_state) since Linux 5.18 */
	skel->rodata->switch_has_prev_state = preflight_tracepoint_args("sched_switch") >= 4;
	metrics_classes_fill(skel->rodata->agg_class_of);
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = share_sched_maps(why, len);
	if (err)
		return err;
	err = waits_bpf__load(skel);
	if (err)
		source_explain(why, len, "cannot load the BPF programs", err);
	return err;
}

static int waits_attach(const struct source_env *env, char *why, size_t len)
{
	int err;

	drainer.origin_ns = env->start_ns;
	drainer.map_fd = bpf_map__fd(skel->maps.agg_metrics);
	skel->bss->agg_origin_ns = env->start_ns;
	if (in_sched) { /* the sched source attached before: its programs sum */
		if (sched_attached())
			return 0;
		snprintf(why, len, "its sums are made by the sched source's programs, "
			 "which are not attached");
		return -ENOENT;
	}
	err = waits_bpf__attach(skel);
	if (err)
		source_explain(why, len, "cannot attach sched_switch/sched_waking", err);
	return err;
}

static void waits_detach(void)
{
	if (skel)
		waits_bpf__detach(skel);
}

static void waits_destroy(void)
{
	waits_bpf__destroy(skel);
	skel = NULL;
	in_sched = false;
	drainer.map_fd = -1;
}

static void waits_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	if (skel)
		metrics_drain_tick(&drainer, c, now_ns, final);
}

static void waits_handle(struct consumer *c, const void *data, size_t size)
{
	(void)data;
	(void)size;
	consumer_drop(c, PERFCAP_SRC_WAITS); /* it sends no kernel records */
}

static int waits_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	(void)env;
	err |= metrics_meta_kv(kv, "waits", drainer.origin_ns);
	err |= chunk_buffer_add_kv_u64(kv, "waits.in_sched", in_sched);
	return err ? -ENOMEM : 0;
}

static int waits_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	uint64_t v[PERFCAP_AGG_C_NR] = { 0 };
	int err = 0;

	(void)c;
	if (!skel)
		return 0;
	metrics_read_counters(skel->maps.agg_counters, "waits", "waits", v);
	last_unclosed = v[PERFCAP_AGG_C_UNCLOSED];
	err |= chunk_buffer_add_kv_u64(kv, "waits.summed", v[PERFCAP_AGG_C_CALLS]);
	err |= chunk_buffer_add_kv_u64(kv, "waits.map_full.waits", v[PERFCAP_AGG_C_FULL_CALLS]);
	err |= chunk_buffer_add_kv_u64(kv, "waits.map_full.ns", v[PERFCAP_AGG_C_FULL_NS]);
	err |= chunk_buffer_add_kv_u64(kv, "waits.no_storage", v[PERFCAP_AGG_C_NO_STORAGE]);
	err |= chunk_buffer_add_kv_u64(kv, "waits.not_syscall", v[PERFCAP_AGG_C_NOT_SYSCALL]);
	err |= chunk_buffer_add_kv_u64(kv, "waits.unclosed", v[PERFCAP_AGG_C_UNCLOSED]);
	err |= metrics_drain_stats(&drainer, kv, "waits");
	return err ? -ENOMEM : 0;
}

/* Waits not summed because their end was not seen (a full sums map is a
 * loss: the summary's loss line has it). */
static void waits_summary_note(char *buf, size_t len)
{
	char n[32];

	if (last_unclosed)
		snprintf(buf, len, "not summed: %s waits whose end was not seen "
			 "(STATS waits.unclosed)", fmt_count(n, sizeof(n), last_unclosed));
}

static const uint16_t waits_event_types[] = { 0 };

const struct source waits_source = {
	.summary = "blocked time per thread, 1 s window and the call it blocked in (futex "
		   "per address, epoll per fd, socket recv/send per fd, file read/write per "
		   "inode, other), futex wakes per address; summed in the kernel at context "
		   "switches, nothing per system call",
	.id = PERFCAP_SRC_WAITS,
	.default_on = true,
	.event_types = waits_event_types,
	.load = waits_load,
	.attach = waits_attach,
	.detach = waits_detach,
	.destroy = waits_destroy,
	.handle = waits_handle,
	.meta = waits_meta,
	.stats = waits_stats,
	.summary_note = waits_summary_note,
	.tick = waits_tick,
};
