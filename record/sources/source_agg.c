/* source_agg.c - the agg source (`-e agg`): exact per-thread
 * system call metrics summed in the kernel (bpf/agg.bpf.c) and written as
 * THREAD_METRIC records, one per (thread, 1 s window, class, key), plus a
 * SYSCALL record (flag SUMMED) for each call of at least --slow-call.
 *
 * Windows start at record.start_ns and are drained by metrics_drain.c.
 * Every call that found the map full is counted with its ns
 * (agg.map_full.*): totals never shrink silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "agg.skel.h"
#include "session/percpu_counts.h"
#include "source.h"
#include "metrics_drain.h"
#include "syscall_sets.h"
#include "util/util.h"

static struct agg_bpf *skel;
static uint64_t slow_ns;
static struct metrics_drain drainer = { .map_fd = -1, .source = PERFCAP_SRC_AGG };

/* ---- loading and attaching ------------------------------------------------ */

static int agg_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = agg_bpf__open();
	if (!skel) {
		err = -errno;
		source_explain(why, len, "cannot open the BPF object", err);
		return err;
	}
	skel->rodata->pc_config = *env->config;
	metrics_classes_fill(skel->rodata->agg_class_of);
	slow_ns = env->opts->agg_slow_ns;
	if (syscall_sets_wanted(env->selected))
		slow_ns = UINT64_MAX; /* the raw syscall sources record calls: no duplicates */
	skel->rodata->agg_slow_ns = slow_ns;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (err)
		return err;
	err = agg_bpf__load(skel);
	if (err)
		source_explain(why, len, "cannot load the BPF programs", err);
	return err;
}

/* The exit before the entry: an entry is only written when its exit runs. */
static int agg_attach(const struct source_env *env, char *why, size_t len)
{
	int err = 0;

	drainer.origin_ns = env->start_ns;
	drainer.map_fd = bpf_map__fd(skel->maps.agg_metrics);
	skel->bss->agg_origin_ns = env->start_ns;
	skel->links.agg_exit = bpf_program__attach(skel->progs.agg_exit);
	if (!skel->links.agg_exit)
		err = -errno;
	if (!err) {
		skel->links.agg_enter = bpf_program__attach(skel->progs.agg_enter);
		if (!skel->links.agg_enter)
			err = -errno;
	}
	if (err) {
		source_explain(why, len, "cannot attach sys_enter/sys_exit", err);
		agg_bpf__detach(skel);
	}
	return err;
}

static void agg_detach(void)
{
	if (skel)
		agg_bpf__detach(skel);
}

static void agg_destroy(void)
{
	agg_bpf__destroy(skel);
	skel = NULL;
	drainer.map_fd = -1;
}

static void agg_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	if (skel)
		metrics_drain_tick(&drainer, c, now_ns, final);
}

/* ---- slow calls -------------------------------------------------------------- */

static void agg_handle(struct consumer *c, const void *data, size_t size)
{
	const struct perfcap_syscall *e = data;
	struct pc_rec_syscall rec;

	if (size < sizeof(*e)) {
		consumer_drop(c, PERFCAP_SRC_AGG);
		return;
	}
	consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	rec = (struct pc_rec_syscall){
		.h.type = PC_REC_SYSCALL,
		.h.flags = PC_SYSCALL_F_SUMMED,
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.nr = e->nr,
		.ustack = PC_STACK_NONE,
		.ret = e->ret,
		.args = { e->args[0], e->args[1], 0 }, /* the third is not kept */
	};
	consumer_add_event(c, PERFCAP_SRC_AGG, &rec, sizeof(rec), e->h.ts);
}

/* ---- metadata ------------------------------------------------------------------ */

static int agg_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	(void)env;
	err |= metrics_meta_kv(kv, "agg", drainer.origin_ns);
	err |= chunk_buffer_add_kv_u64(kv, "agg.slow_ns", slow_ns);
	return err ? -ENOMEM : 0;
}

static int agg_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	uint64_t v[PERFCAP_AGG_C_NR] = { 0 };
	int err = 0;

	(void)c;
	if (!skel)
		return 0;
	metrics_read_counters(skel->maps.agg_counters, "agg", "calls", v);
	err |= chunk_buffer_add_kv_u64(kv, "agg.calls", v[PERFCAP_AGG_C_CALLS]);
	err |= chunk_buffer_add_kv_u64(kv, "agg.map_full.calls", v[PERFCAP_AGG_C_FULL_CALLS]);
	err |= chunk_buffer_add_kv_u64(kv, "agg.map_full.ns", v[PERFCAP_AGG_C_FULL_NS]);
	err |= chunk_buffer_add_kv_u64(kv, "agg.slow_calls", v[PERFCAP_AGG_C_SLOW]);
	err |= chunk_buffer_add_kv_u64(kv, "agg.unmatched", v[PERFCAP_AGG_C_UNMATCHED]);
	err |= chunk_buffer_add_kv_u64(kv, "agg.no_storage", v[PERFCAP_AGG_C_NO_STORAGE]);
	err |= metrics_drain_stats(&drainer, kv, "agg");
	return err ? -ENOMEM : 0;
}

static const uint16_t agg_event_types[] = { PERFCAP_EV_AGG_CALL, 0 };

const struct source agg_source = {
	.summary = "every system call summed in the kernel per thread, 1 s window and class "
		   "(futex wait/wake per address, poll per epoll fd, socket recv/send per fd, "
		   "file read/write per inode, other): calls, errors, ns, bytes, log2 "
		   "histogram; calls >= --slow-call also recorded one by one",
	.id = PERFCAP_SRC_AGG,
	.event_types = agg_event_types,
	.load = agg_load,
	.attach = agg_attach,
	.detach = agg_detach,
	.destroy = agg_destroy,
	.handle = agg_handle,
	.meta = agg_meta,
	.stats = agg_stats,
	.tick = agg_tick,
};
