// SPDX-License-Identifier: GPL-2.0-only
/* block.bpf.c - kernel side of the block source: one BLOCK record per
 * completed block I/O request, with its queue and service time, attributed
 * to the task that submitted it.
 *
 * A request is followed in `inflight` (key: the struct request address)
 * from its start to its completion:
 *   block_io_start    the bio became a request (blk_mq_bio_to_request). It
 *                     always runs in the submitting task (or the kernel
 *                     thread doing writeback / journalling), so that task is
 *                     the submitter: pid, tid, thread name, whether it
 *                     passed the filters at that moment; and the op flags
 *                     as submitted (REQ_PREFLUSH, REQ_FUA are cleared later).
 *   block_rq_insert   entered the I/O scheduler: insert time (the first one;
 *                     a requeued request keeps it).
 *   block_rq_issue    sent to the driver: issue time, sector, bytes.
 *   block_rq_requeue  sent back by the driver: issue time forgotten.
 *   block_rq_merge    merged into another request and freed: forgotten.
 *   block_rq_complete the final completion (nr_bytes covers what is left):
 *                     one record if the submitter was traced.
 * Issue and completion often run in kblockd or in interrupt context, so
 * the filter is applied to the submitter, never to the completing task.
 * Every request is followed (traced or not) so that a completion without a
 * start really means "started before the recording" (block.unmatched) and
 * is never given an invented start. Kernels without block_io_start (< 6.5)
 * take the task current at the first insert or issue instead: usually the
 * submitter, but kblockd when dispatch was deferred (META block.attribution
 * says which rule a capture used).
 *
 * Only tp_btf programs: no tracefs, kprobes or trampolines.
 */
#include "perfcap_common.bpf.h"

char LICENSE[] SEC("license") = "GPL";

#define MINORBITS      20

/* Set by user space: the kernel has no block_io_start tracepoint. */
const volatile bool start_at_insert = false;

struct inflight {
	__u64 start_ts;
	__u64 insert_ts;        /* 0: not inserted */
	__u64 issue_ts;         /* 0: not issued (yet, or since a requeue) */
	__u64 sector;           /* at issue */
	__u32 bytes;            /* at issue */
	__u32 pid, tid;
	__u32 op;               /* cmd_flags at the start: the flush machinery
				   clears REQ_PREFLUSH/REQ_FUA later */
	__u8  traced;
	__u8  reserved[3];
	char  comm[PERFCAP_COMM_LEN];
};

/* An LRU: a request freed without any tracepoint (none known) is evicted
 * first when the map fills; a live one evicted shows up as unmatched. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERFCAP_BLOCK_INFLIGHT_MAX);
	__type(key, __u64);     /* struct request address */
	__type(value, struct inflight);
} inflight SEC(".maps");

PC_COUNTERS(block_counts, PERFCAP_BLOCK_CNT_NR); /* enum perfcap_block_count */

static __always_inline void count(__u32 what)
{
	pc_counter_add(&block_counts, what, 1);
}

/* ---- following a request ------------------------------------------------- */

static __always_inline struct inflight *start_request(struct request *rq, __u64 now)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inflight e = { .start_ts = now };
	__u64 key = (__u64)rq;

	e.pid = task->tgid;
	e.tid = task->pid;
	e.op = BPF_CORE_READ(rq, cmd_flags);
	e.traced = pc_task_traced(task);
	pc_copy_comm(e.comm, task->comm);
	if (bpf_map_update_elem(&inflight, &key, &e, BPF_ANY)) {
		pc_count(PERFCAP_SRC_BLOCK, PERFCAP_LOSS_MAP_FULL);
		return NULL;
	}
	count(PERFCAP_BLOCK_CNT_STARTED);
	return bpf_map_lookup_elem(&inflight, &key);
}

/* The request's state; on old kernels, started at its first insert/issue. */
static __always_inline struct inflight *find_request(struct request *rq, __u64 now)
{
	__u64 key = (__u64)rq;
	struct inflight *e = bpf_map_lookup_elem(&inflight, &key);

	if (!e && start_at_insert)
		e = start_request(rq, now);
	return e;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(on_io_start, struct request *rq)
{
	start_request(rq, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(on_insert, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct inflight *e = find_request(rq, now);

	if (e && !e->insert_ts)
		e->insert_ts = now;
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_issue, struct request *rq)
{
	__u64 now = bpf_ktime_get_ns();
	struct inflight *e = find_request(rq, now);

	if (!e)
		return 0;
	e->issue_ts = now;
	e->sector = BPF_CORE_READ(rq, __sector);
	e->bytes = BPF_CORE_READ(rq, __data_len);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(on_requeue, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct inflight *e = bpf_map_lookup_elem(&inflight, &key);

	count(PERFCAP_BLOCK_CNT_REQUEUED);
	if (e)
		e->issue_ts = 0;
	return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(on_merge, struct request *rq)
{
	__u64 key = (__u64)rq;

	if (bpf_map_delete_elem(&inflight, &key) == 0)
		count(PERFCAP_BLOCK_CNT_MERGED);
	return 0;
}

/* ---- completion ------------------------------------------------------------- */

static __always_inline __u32 request_dev(struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);

	if (!disk)
		return 0;
	return (__u32)BPF_CORE_READ(disk, major) << MINORBITS | BPF_CORE_READ(disk, first_minor);
}

static __always_inline void fill_times(struct perfcap_block *r, const struct inflight *e,
				       __u64 now)
{
	__u64 from = e->issue_ts;

	r->queue_ns = e->insert_ts && e->issue_ts > e->insert_ts ? e->issue_ts - e->insert_ts : 0;
	if (!from) {
		r->h.flags |= PERFCAP_BLOCK_F_NO_ISSUE;
		from = e->insert_ts ? e->insert_ts : e->start_ts;
	}
	if (e->insert_ts)
		r->h.flags |= PERFCAP_BLOCK_F_INSERTED;
	r->service_ns = now > from ? now - from : 0;
}

static __always_inline void emit_block(struct request *rq, const struct inflight *e,
				       __u8 status, __u64 now)
{
	void *ring = pc_ring(PERFCAP_SRC_BLOCK);
	struct perfcap_block *r;

	if (!ring)
		return;
	r = pc_reserve(ring, PERFCAP_SRC_BLOCK, sizeof(*r));
	if (!r)
		return;
	pc_header(&r->h, PERFCAP_EV_BLOCK, now);
	fill_times(r, e, now);
	r->sector = e->issue_ts ? e->sector : BPF_CORE_READ(rq, __sector);
	r->bytes = e->issue_ts ? e->bytes : BPF_CORE_READ(rq, __data_len);
	r->pid = e->pid;
	r->tid = e->tid;
	r->dev = request_dev(rq);
	r->op = e->op;
	r->status = status;
	__builtin_memcpy(r->comm, e->comm, sizeof(r->comm));
	pc_submit(ring, r);
}

/* A completion without a start: the flush machinery's own request, or one
 * in flight since before the recording. */
static __always_inline void count_unmatched(struct request *rq)
{
	__u32 flush_seq = 1u << 4; /* RQF_FLUSH_SEQ before Linux 6.8 */

	if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		flush_seq = 1u << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);

	if (BPF_CORE_READ(rq, rq_flags) & flush_seq)
		count(PERFCAP_BLOCK_CNT_FLUSH);
	else
		count(PERFCAP_BLOCK_CNT_UNMATCHED);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_complete, struct request *rq, blk_status_t status, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 key = (__u64)rq;
	struct inflight *e;

	if (nr_bytes < BPF_CORE_READ(rq, __data_len)) {
		count(PERFCAP_BLOCK_CNT_PARTIAL); /* the request goes on */
		return 0;
	}
	e = bpf_map_lookup_elem(&inflight, &key);
	if (!e) {
		count_unmatched(rq);
		return 0;
	}
	if (!e->traced)
		count(PERFCAP_BLOCK_CNT_UNTRACED);
	else if (pc_admit(PERFCAP_SRC_BLOCK, now))
		emit_block(rq, e, status, now);
	bpf_map_delete_elem(&inflight, &key);
	return 0;
}
