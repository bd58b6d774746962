/* ustack_copy.c - PERFCAP_EV_USTACK kernel records into PC_REC_USTACK
 * capture records (format/SPEC.md). Only the part of the window the kernel
 * could read is written; zstd then shares what consecutive copies of a
 * thread have in common. Copies that filled the window (maybe cut), ended
 * at an unreadable page, or held nothing are counted (STATS ustack.*).
 */
#include <errno.h>
#include <string.h>

#include "consumer.h"
#include "ustack_copy.h"
#include "ustack_scan.h"
#include "util/u64_table.h"

static struct ustack_copy_stats stats;
static struct u64_table pids_with_copies;

static bool well_formed(const struct perfcap_ustack *u, size_t size)
{
	return size >= PERFCAP_USTACK_HEADER_SIZE && u->size <= PERFCAP_USTACK_MAX &&
	       size >= PERFCAP_USTACK_HEADER_SIZE + (size_t)u->size;
}

static void count_copy(const struct perfcap_ustack *u)
{
	stats.copies++;
	stats.bytes += u->size;
	stats.full += (u->h.flags & PERFCAP_USTACK_F_FULL) != 0;
	stats.faulted += (u->h.flags & PERFCAP_USTACK_F_FAULT) != 0;
	stats.at_start += (u->h.flags & PERFCAP_USTACK_F_START) != 0;
	stats.empty += u->size == 0;
}

static uint16_t capture_flags(uint16_t kernel_flags)
{
	uint16_t f = 0;

	if (kernel_flags & PERFCAP_USTACK_F_FULL)
		f |= PC_USTACK_F_FULL;
	if (kernel_flags & PERFCAP_USTACK_F_FAULT)
		f |= PC_USTACK_F_FAULT;
	if (kernel_flags & PERFCAP_USTACK_F_OFFCPU)
		f |= PC_USTACK_F_OFFCPU;
	if (kernel_flags & PERFCAP_USTACK_F_START)
		f |= PC_USTACK_F_START;
	return f;
}

void ustack_copy_handle(struct consumer *c, int source, const void *rec, size_t size)
{
	const struct perfcap_ustack *u = rec;
	struct pc_rec_ustack out = { .h.type = PC_REC_USTACK };

	if (!well_formed(u, size)) {
		stats.malformed++;
		consumer_drop(c, source);
		return;
	}
	out.h.flags = capture_flags(u->h.flags);
	out.ts = u->h.ts;
	out.pid = u->pid;
	out.tid = u->tid;
	out.size = u->size;
	out.window = u->window;
	for (int i = 0; i < PC_UREG_NR && i < PERFCAP_UREG_NR; i++)
		out.regs[i] = u->regs[i];
	if (chunk_buffer_add_rec(&c->events, &out, sizeof(out), u->data, u->size, NULL, 0,
				 u->h.ts)) {
		c->lost_user[source]++;
		return;
	}
	count_copy(u);
	ustack_scan(&c->processes, u->pid, u->h.ts, u->regs[PERFCAP_UREG_IP], u->data, u->size);
	if (u64_table_get(&pids_with_copies, u->pid) == U64_TABLE_EMPTY &&
	    u64_table_put(&pids_with_copies, u->pid, 1))
		stats.malformed++; /* out of memory: this process gets no tables */
}

bool ustack_copy_has_pid(uint32_t pid)
{
	return u64_table_get(&pids_with_copies, pid) != U64_TABLE_EMPTY;
}

const struct ustack_copy_stats *ustack_copy_stats(void)
{
	return &stats;
}

int ustack_copy_stats_kv(struct chunk_buffer *kv)
{
	int err = 0;

	if (!stats.copies && !stats.malformed)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "ustack.copies", stats.copies);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.bytes", stats.bytes);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.window_full", stats.full);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.page_faults", stats.faulted);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.at_start", stats.at_start);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.empty", stats.empty);
	err |= chunk_buffer_add_kv_u64(kv, "ustack.malformed", stats.malformed);
	return err ? -ENOMEM : ustack_scan_stats_kv(kv);
}

void ustack_copy_free(void)
{
	u64_table_free(&pids_with_copies);
	memset(&stats, 0, sizeof(stats));
	ustack_scan_free();
}
