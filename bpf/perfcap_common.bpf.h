/* perfcap_common.bpf.h - what every BPF object of perfcap shares: the
 * configuration, the shared maps, the filters and the emit helpers.
 *
 * User space creates the shared maps once (record/session/shared_maps.c) and makes
 * every object reuse them before load, so all sources write to the same
 * sharded ring buffers, count losses in one array, follow one set of
 * target processes and put stacks into one stack map.
 *
 * An event source's program does, in order:
 *   if (!pc_task_traced(task)) return 0;          filters (pid, comm, cgroup)
 *   if (!pc_admit(SRC, now)) return 0;            --sample and --rate-cap
 *   ring = pc_ring(SRC); rec = pc_reserve(ring, SRC, sizeof(*rec));
 *   pc_header(&rec->h, PERFCAP_EV_X, now); ...fill...; pc_submit(ring, rec);
 * Every way a record can be dropped is counted in `losses` per CPU, per
 * source and per reason.
 */
#ifndef PERFCAP_COMMON_BPF_H
#define PERFCAP_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "perfcap_bpf.h"

#define PC_EEXIST 17            /* vmlinux.h has no errno values */
#define PC_NS_PER_SEC 1000000000ull

/* Set by user space before load (record/session/shared_maps.c fills it). */
const volatile struct perfcap_config pc_config = {
	.nr_rings = 1,
	.sample_one_in = 1,
};

/* ---- shared maps (created by user space; see perfcap_bpf.h for caps) -- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERFCAP_TARGETS_MAX);
	__type(key, __u32);  /* tgid */
	__type(value, __u8); /* unused */
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* user space: pid_max / 64 words */
	__type(key, __u32);
	__type(value, __u64);   /* bit tgid % 64 of word tgid / 64 */
} target_bits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, PERFCAP_RINGS_MAX);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, 1 << 22);
	});
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERFCAP_LOSS_SLOTS);
	__type(key, __u32);  /* PERFCAP_LOSS_INDEX(source, reason) */
	__type(value, __u64);
} losses SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, PERFCAP_STACKMAP_ENTRIES);
	__type(key, __u32);
	__uint(value_size, PERFCAP_STACK_MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/* Per CPU and source: the 1-in-N sequence and the rate cap's window. */
struct pc_source_rate {
	__u64 seq;
	__u64 window_start;
	__u64 window_count;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERFCAP_SRC_MAX);
	__type(key, __u32);  /* source id */
	__type(value, struct pc_source_rate);
} source_rates SEC(".maps");

/* ---- counters ------------------------------------------------------------ */

/* A source's own counters (its STATS keys): a per-CPU array of u64,
 * summed by user space (record/session/percpu_counts.c). Per CPU: a
 * counter bumped on every event must not bounce one cache line between
 * CPUs. */
#define PC_COUNTERS(name, n)                          \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); \
		__uint(max_entries, n);               \
		__type(key, __u32);                   \
		__type(value, __u64);                 \
	} name SEC(".maps")

/* Adds n to counter which of such a map. Atomic: a program may be
 * interrupted on its CPU by another one counting too. */
static __always_inline void pc_counter_add(void *counters, __u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(counters, &which);

	if (v)
		__sync_fetch_and_add(v, n);
}

/* ---- loss counting ------------------------------------------------------ */

static __always_inline void pc_count(__u32 source, __u32 reason)
{
	pc_counter_add(&losses, PERFCAP_LOSS_INDEX(source, reason), 1);
}

/* Counts n lost at once (a record that carried n events). */
static __always_inline void pc_count_n(__u32 source, __u32 reason, __u64 n)
{
	pc_counter_add(&losses, PERFCAP_LOSS_INDEX(source, reason), n);
}

/* ---- filters ------------------------------------------------------------ */

/* The process name (the thread group leader's comm) equals --comm. */
static __always_inline bool pc_comm_matches(struct task_struct *task)
{
	char comm[PERFCAP_COMM_LEN];

	if (bpf_probe_read_kernel(comm, sizeof(comm), task->group_leader->comm))
		return false;
	for (int i = 0; i < PERFCAP_COMM_LEN; i++) {
		if (comm[i] != pc_config.comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* Kernels before 6.1 kept ancestor ids, not pointers. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The task's cgroup (v2) is --cgroup or below it. */
static __always_inline bool pc_cgroup_matches(struct task_struct *task)
{
	struct cgroup *cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	__u32 level = pc_config.cgroup_level;
	struct cgroup *ancestor = NULL;
	__u64 id = 0;

	if (!cgrp || BPF_CORE_READ(cgrp, level) < (int)level)
		return false;
	if (bpf_core_field_exists(cgrp->ancestors)) {
		if (bpf_probe_read_kernel(&ancestor, sizeof(ancestor), &cgrp->ancestors[level]))
			return false;
		id = BPF_CORE_READ(ancestor, kn, id);
	} else {
		struct cgroup___ids *old = (void *)cgrp;

		if (bpf_probe_read_kernel(&id, sizeof(id), &old->ancestor_ids[level]))
			return false;
	}
	return id == pc_config.cgroup_id;
}

/* Whether tgid is followed (`target_bits`, else `targets`). */
static __always_inline bool pc_tgid_followed(__u32 tgid)
{
	__u32 word = tgid / 64;
	__u64 *bits = bpf_map_lookup_elem(&target_bits, &word);

	if (bits)
		return (*bits >> (tgid & 63)) & 1;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL; /* beyond the bitmap */
}

/* Follows tgid from now on (a fork of a followed process): 0 or -errno
 * (`targets` full). */
static __always_inline long pc_follow_tgid(__u32 tgid)
{
	__u32 word = tgid / 64;
	__u8 one = 1;
	__u64 *bits;
	long err = bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);

	if (err)
		return err;
	bits = bpf_map_lookup_elem(&target_bits, &word);
	if (bits)
		__sync_fetch_and_or(bits, 1ull << (tgid & 63));
	return 0;
}

/* A first filter, one inlined load: false when the pid filter is on and
 * task's process is not followed; true otherwise (the comm and cgroup
 * filters are not asked). For hot paths that look up per-task state
 * before filtering (sys_exit, socket calls): an untraced task leaves here. */
static __always_inline bool pc_task_maybe_traced(struct task_struct *task)
{
	return !pc_config.filter_pids || pc_tgid_followed(task->tgid);
}

/* Does task pass every filter (pid, comm, cgroup)? */
static __always_inline bool pc_task_traced(struct task_struct *task)
{
	if (pc_config.filter_pids) {
		__u32 tgid = task->tgid;

		/* the idle task (half of a quiet CPU's switches) is never a target */
		if (!tgid || !pc_tgid_followed(tgid))
			return false;
	}
	if (pc_config.filter_comm && !pc_comm_matches(task))
		return false;
	if (pc_config.filter_cgroup && !pc_cgroup_matches(task))
		return false;
	return true;
}

/* ---- sampling and rate cap (event sources, not CPU samples) ------------ */

static __always_inline __u64 pc_mix64(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* 1-in-N: the n-th record of a source on a CPU is kept when
 * mix(seed, cpu, n) % N == 0, so a seed reproduces the choice. */
static __always_inline bool pc_sampled_in(__u32 source, struct pc_source_rate *r)
{
	__u64 cpu = bpf_get_smp_processor_id();

	if (pc_config.sample_one_in <= 1)
		return true;
	if (pc_mix64(pc_config.sample_seed ^ cpu << 48 ^ r->seq++) % pc_config.sample_one_in == 0)
		return true;
	pc_count(source, PERFCAP_LOSS_SAMPLED_OUT);
	return false;
}

/* At most rate_cap records per second per CPU per source. */
static __always_inline bool pc_within_rate(__u32 source, struct pc_source_rate *r, __u64 now)
{
	if (!pc_config.rate_cap)
		return true;
	if (now - r->window_start >= PC_NS_PER_SEC) {
		r->window_start = now;
		r->window_count = 0;
	}
	if (r->window_count >= pc_config.rate_cap) {
		pc_count(source, PERFCAP_LOSS_RATE_CAPPED);
		return false;
	}
	r->window_count++;
	return true;
}

static __always_inline struct pc_source_rate *pc_rate_state(__u32 source)
{
	return bpf_map_lookup_elem(&source_rates, &source);
}

/* Sampling, then the rate cap: for high-volume records. */
static __always_inline bool pc_admit(__u32 source, __u64 now)
{
	struct pc_source_rate *r;

	if (pc_config.sample_one_in <= 1 && !pc_config.rate_cap)
		return true;
	r = pc_rate_state(source);
	if (!r)
		return true;
	return pc_sampled_in(source, r) && pc_within_rate(source, r, now);
}

/* The rate cap only: for records that are never sampled. */
static __always_inline bool pc_admit_unsampled(__u32 source, __u64 now)
{
	struct pc_source_rate *r;

	if (!pc_config.rate_cap)
		return true;
	r = pc_rate_state(source);
	return !r || pc_within_rate(source, r, now);
}

/* ---- emitting ------------------------------------------------------------ */

/* This CPU's ring: rings[cpu % nr_rings]. */
static __always_inline void *pc_ring(__u32 source)
{
	__u32 slot = bpf_get_smp_processor_id() % pc_config.nr_rings;
	void *ring = bpf_map_lookup_elem(&rings, &slot);

	if (!ring)
		pc_count(source, PERFCAP_LOSS_NO_RING);
	return ring;
}

static __always_inline void *pc_reserve(void *ring, __u32 source, __u64 size)
{
	void *rec = bpf_ringbuf_reserve(ring, size, 0);

	if (!rec)
		pc_count(source, PERFCAP_LOSS_RINGBUF);
	return rec;
}

/* Batched wakeups: the consumer is woken only once wakeup_bytes wait;
 * below that it finds the records at its next timed poll. */
static __always_inline __u64 pc_wakeup_flag(void *ring)
{
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= pc_config.wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void pc_submit(void *ring, void *rec)
{
	bpf_ringbuf_submit(rec, pc_wakeup_flag(ring));
}

static __always_inline void pc_header(struct perfcap_event_header *h, __u16 type, __u64 ts)
{
	h->type = type;
	h->flags = 0;
	h->cpu = bpf_get_smp_processor_id();
	h->ts = ts;
}

/* ---- stacks ------------------------------------------------------------- */

/* The current task's stack as an id in `stacks` (flags 0: kernel,
 * BPF_F_USER_STACK: user). Negative: no stack (errors are counted). */
static __always_inline __s32 pc_stack_id(void *ctx, __u32 source, __u64 flags)
{
	long id = bpf_get_stackid(ctx, &stacks, flags);

	if (id < 0)
		pc_count(source, id == -PC_EEXIST ? PERFCAP_LOSS_STACK_EXIST
						  : PERFCAP_LOSS_STACK_ERROR);
	return (__s32)id;
}

static __always_inline void pc_copy_comm(char *dst, const char *src)
{
	bpf_probe_read_kernel(dst, PERFCAP_COMM_LEN, src);
}

#endif /* PERFCAP_COMMON_BPF_H */
