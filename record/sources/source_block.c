/* source_block.c - the block source (`-e block`): one BLOCK record per
 * completed block I/O request (bpf/block.bpf.c), with its queue time
 * (insert -> issue) and service time (issue -> completion), attributed to
 * the task that submitted it: the task current when the bio became a
 * request (block_io_start), which is the writer itself for direct and
 * fsync'd writes, and the flusher or journal thread for writeback.
 *
 * Submitters are described like any traced task (PROC/THREAD records).
 * The kernel's blk_status_t becomes a negative errno, as the kernel's own
 * block_rq_complete trace event reports it.
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "block.skel.h"
#include "session/percpu_counts.h"
#include "session/preflight.h"
#include "source.h"

static struct block_bpf *skel;
static bool attribute_at_insert;  /* the kernel has no block_io_start */

/* ---- loading and attaching -------------------------------------------- */

static int block_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = block_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	/* block_io_start: Linux 6.5+; before, the first insert/issue in task context */
	attribute_at_insert = preflight_tracepoint_args("block_io_start") < 1;
	if (attribute_at_insert)
		bpf_program__set_autoload(skel->progs.on_io_start, false);
	skel->rodata->pc_config = *env->config;
	skel->rodata->start_at_insert = attribute_at_insert;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(block_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

static int block_attach(const struct source_env *env, char *why, size_t len)
{
	int err = block_bpf__attach(skel);

	(void)env;
	if (err)
		source_explain(why, len, "cannot attach block_rq_insert/issue/complete", err);
	return err;
}

static void block_detach(void)
{
	if (skel)
		block_bpf__detach(skel);
}

static void block_destroy(void)
{
	block_bpf__destroy(skel);
	skel = NULL;
}

/* ---- records ------------------------------------------------------------ */

/* blk_status_t -> -errno, as the kernel's blk_status_to_errno() (codes of
 * include/linux/blk_types.h; BLK_STS_INVAL was 19 in 6.11-6.17, then 18). */
static int32_t status_errno(uint32_t status)
{
	static const int map[] = {
		0, -EOPNOTSUPP, -ETIMEDOUT, -ENOSPC, -ENOLINK, -EREMOTEIO, -EBADE,
		-ENODATA, -EILSEQ, -ENOMEM, -EIO, -EREMCHG, -EAGAIN, -EBUSY,
		-ETOOMANYREFS, -EOVERFLOW, -ENODEV, -ETIME, -EINVAL, -EINVAL,
	};

	if (status < sizeof(map) / sizeof(map[0]))
		return map[status];
	return -EIO;
}

static void handle_block(struct consumer *c, const struct perfcap_block *e)
{
	struct pc_rec_block rec = {
		.h.type = PC_REC_BLOCK,
		.ts = e->h.ts,
		.queue_ns = e->queue_ns,
		.service_ns = e->service_ns,
		.pid = e->pid,
		.tid = e->tid,
		.dev = e->dev,
		.op = e->op,
		.sector = e->sector,
		.bytes = e->bytes,
		.error = status_errno(e->status),
	};

	if (e->pid)
		consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	consumer_add_event(c, PERFCAP_SRC_BLOCK, &rec, sizeof(rec), e->h.ts);
}

static void block_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (h->type != PERFCAP_EV_BLOCK || size < sizeof(struct perfcap_block)) {
		consumer_drop(c, PERFCAP_SRC_BLOCK);
		return;
	}
	handle_block(c, rec);
}

/* ---- metadata and counters ----------------------------------------------- */

static int block_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	(void)env;
	err |= chunk_buffer_add_kv(kv, "block.attribution",
				   attribute_at_insert ? "first insert or issue in task context"
						       : "block_io_start");
	err |= chunk_buffer_add_kv_u64(kv, "block.inflight_max", PERFCAP_BLOCK_INFLIGHT_MAX);
	return err ? -ENOMEM : 0;
}

static int block_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	static const char *const names[PERFCAP_BLOCK_CNT_NR] = {
		[PERFCAP_BLOCK_CNT_STARTED]   = "block.started",
		[PERFCAP_BLOCK_CNT_UNTRACED]  = "block.untraced",
		[PERFCAP_BLOCK_CNT_UNMATCHED] = "block.unmatched",
		[PERFCAP_BLOCK_CNT_FLUSH]     = "block.flush_internal",
		[PERFCAP_BLOCK_CNT_MERGED]    = "block.merged",
		[PERFCAP_BLOCK_CNT_PARTIAL]   = "block.partial",
		[PERFCAP_BLOCK_CNT_REQUEUED]  = "block.requeued",
	};
	uint64_t v[PERFCAP_BLOCK_CNT_NR];
	int err = 0;

	(void)c;
	if (!skel)
		return 0;
	percpu_counts_read(skel->maps.block_counts, v, PERFCAP_BLOCK_CNT_NR);
	for (int i = 0; i < PERFCAP_BLOCK_CNT_NR; i++)
		err |= chunk_buffer_add_kv_u64(kv, names[i], v[i]);
	return err ? -ENOMEM : 0;
}

static const uint16_t block_event_types[] = { PERFCAP_EV_BLOCK, 0 };

const struct source block_source = {
	.summary = "block I/O requests: device, sector, bytes, op, queue and service time, "
		   "by submitting thread",
	.id = PERFCAP_SRC_BLOCK,
	.default_on = true,
	.event_types = block_event_types,
	.load = block_load,
	.attach = block_attach,
	.detach = block_detach,
	.destroy = block_destroy,
	.handle = block_handle,
	.meta = block_meta,
	.stats = block_stats,
};
