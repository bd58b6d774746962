/* record_types.c - one row per record type (perf's feat_ops[] pattern):
 * its id, name, source, the size of its struct, its decoder, and the
 * table and columns its rows are batched into. The row drives the
 * decoders' dispatch (load_records.c), the batched INSERTs of the tables
 * (prepared here) and the names info and the quality table print. Adding a
 * record type: its PC_REC_* and struct in format/, a decoder, one row
 * here (and its CREATE TABLE in db/schema.c). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "db/sql_writer.h"
#include "load_state.h"
#include "record_types.h"

/* sizeof(T), refused at compile time when T outgrows RECORD_BODY_MAX. */
#define BODY_SIZE(T) (sizeof(T) + 0 * sizeof(char[sizeof(T) <= RECORD_BODY_MAX ? 1 : -1]))

/* thread_metrics' histogram: one column per PC_METRIC_HIST bucket */
#define METRIC_HIST_COLUMNS "h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13," \
	" h14, h15, h16, h17, h18, h19, h20, h21, h22, h23, h24, h25, h26, h27, h28, h29," \
	" h30, h31"

#define TYPE(id_, name_, source_, T, decoder) \
	[id_] = { .id = id_, .name = name_, .source = source_, .size = BODY_SIZE(T), \
		  .decode = decoder

/* The three records of a thread at a sched window's edge (sched_tasks). */
#define SCHED_TASK_TYPE(id_, name_) \
	TYPE(id_, name_, "sched", struct pc_rec_sched_task, decode_sched_task), \
	  .table = "sched_tasks", .columns = "ts, pid, tid, state_code, task_state, cpu," \
	  " runtime_ns, run_delay_ns, edge, nvcsw", .ncols = 10 }

static const struct record_type types[RECORD_TYPE_MAX + 1] = {
	TYPE(PC_REC_SAMPLE, "sample", "cpu", struct pc_rec_sample, decode_sample),
	  .table = "samples", .columns = "ts, pid, tid, cpu, ustack_id, kstack_id", .ncols = 6 },
	TYPE(PC_REC_STACK, "stack", NULL, struct pc_rec_stack, decode_stack) },
	TYPE(PC_REC_PROC, "proc", NULL, struct pc_rec_proc, decode_process) },
	TYPE(PC_REC_THREAD, "thread", NULL, struct pc_rec_thread, decode_thread) },
	TYPE(PC_REC_MAP, "map", NULL, struct pc_rec_map, decode_map) },
	TYPE(PC_REC_MODULE, "module", NULL, struct pc_rec, decode_module) },
	TYPE(PC_REC_EXEC, "exec", "proc", struct pc_rec_exec, decode_exec),
	  .table = "process_events", .columns = "ts, kind, pid, tid, comm", .ncols = 5 },
	TYPE(PC_REC_EXIT, "exit", "proc", struct pc_rec_exit, decode_exit),
	  .table = "process_events", .columns = "ts, kind, pid, tid, comm", .ncols = 5 },
	TYPE(PC_REC_SWITCH, "switch", "sched", struct pc_rec_switch, decode_switch),
	  .table = "switches", .columns = "ts, cpu, prev_pid, prev_tid, prev_state, next_pid,"
	  " next_tid, prev_prio, next_prio", .ncols = 9 },
	TYPE(PC_REC_WAKEUP, "wakeup", "sched", struct pc_rec_wakeup, decode_wakeup),
	  .table = "wakeups", .columns = "ts, pid, tid, waker_pid, waker_tid, target_cpu, new,"
	  " context, softirq, irq_pid, irq_tid", .ncols = 11 },
	/* OFFCPU rows are written by the correlator once classified */
	TYPE(PC_REC_OFFCPU, "offcpu", "sched", struct pc_rec_offcpu, decode_offcpu) },
	TYPE(PC_REC_FORK, "fork", "sched", struct pc_rec_fork, decode_fork),
	  .table = "forks", .columns = "ts, parent_pid, parent_tid, child_pid, child_tid,"
	  " is_thread", .ncols = 6 },
	/* syscall_id is the rowid SQLite appends (rows come in id order; the
	 * view syscalls names it, db/schema.c) */
	TYPE(PC_REC_SYSCALL, "syscall", "syscall", struct pc_rec_syscall, decode_syscall),
	  .table = "syscall_rows", .columns = "ts, duration, pid, tid, nr, ret, arg0, arg1, arg2,"
	  " ustack_id, window_ts, io_calls", .ncols = 12 },
	TYPE(PC_REC_BLOCK, "block", "block", struct pc_rec_block, decode_block),
	  .table = "block_io", .columns = "ts, pid, tid, dev, op, sector, bytes, queue_ns,"
	  " service_ns, error", .ncols = 10 },
	/* flag SNAPSHOT (1.4): a row of connections instead (decode_socket) */
	TYPE(PC_REC_SOCKET, "socket", "net", struct pc_rec_socket, decode_socket),
	  .table = "sockets", .columns = "ts, pid, tid, fd, origin, family, protocol, cookie,"
	  " saddr, sport, daddr, dport", .ncols = 12 },
	TYPE(PC_REC_TCP_STATE, "tcp_state", "net", struct pc_rec_tcp_state, decode_tcp_state),
	  .table = "tcp_states", .columns = "ts, pid, tid, cookie, family, saddr, sport, daddr,"
	  " dport, oldstate, newstate", .ncols = 11 },
	TYPE(PC_REC_TCP_RETRANS, "tcp_retrans", "net", struct pc_rec_tcp_retrans,
	     decode_tcp_retrans),
	  .table = "tcp_retransmits", .columns = "ts, pid, tid, cookie, family, saddr, sport,"
	  " daddr, dport, state", .ncols = 10 },
	TYPE(PC_REC_LOCK, "lock", "lock", struct pc_rec_lock, decode_lock),
	  .table = "kernel_locks", .columns = "ts, duration, pid, tid, lock_addr, flags, ret,"
	  " kstack_id", .ncols = 8 },
	TYPE(PC_REC_MUTEX, "mutex", "lock", struct pc_rec_mutex, decode_mutex),
	  .table = "user_mutexes", .columns = "ts, duration, pid, tid, addr, ustack_id",
	  .ncols = 6 },
	TYPE(PC_REC_FAULT, "fault", "mem", struct pc_rec_fault, decode_fault),
	  .table = "page_faults", .columns = "ts, pid, tid, addr, ip, error_code, weight",
	  .ncols = 7 },
	/* format 1.2: unwound at import (ustack_unwind.c), no table of their own */
	TYPE(PC_REC_USTACK, "ustack", NULL, struct pc_rec, decode_ustack) },
	TYPE(PC_REC_UNWIND, "unwind", NULL, struct pc_rec, decode_unwind) },
	/* format 1.3: sums of the agg source (load_aggregates.c) */
	TYPE(PC_REC_THREAD_METRIC, "thread_metric", "agg", struct pc_rec_thread_metric,
	     decode_thread_metric),
	  .table = "thread_metrics", .columns = "window_start, window_end, pid, tid, class,"
	  " kind, key, calls, errors, total_ns, bytes, " METRIC_HIST_COLUMNS, .ncols = 43 },
	/* format 1.5: user probes; their `probes` table is built from META and
	 * STATS after the events (load_probes.c) */
	TYPE(PC_REC_PROBE, "probe", "probe", struct pc_rec_probe, decode_probe),
	  .table = "probe_hits", .columns = "ts, duration, pid, tid, probe_id, arg0, arg1, arg2,"
	  " ustack_id", .ncols = 9 },
	/* format 1.7: requests inferred in the kernel; rows written by the
	 * requests pass (load_requests.c) */
	TYPE(PC_REC_REQUEST, "request", "req", struct pc_rec_request, decode_request) },
	/* format 1.8: up to 8 requests of a connection, expanded as REQUESTs */
	TYPE(PC_REC_REQUEST_BATCH, "request_batch", "req", struct pc_rec_request_batch,
	     decode_request_batch) },
	/* format 1.10: the req source's windows; request_windows is written
	 * by the requests pass */
	TYPE(PC_REC_REQUEST_WINDOW, "request_window", "req", struct pc_rec_request_window,
	     decode_request_window) },
	/* format 1.12: the sched source's windows (sched_windows.c) */
	TYPE(PC_REC_SCHED_GAP, "sched_gap", "sched", struct pc_rec_sched_gap, decode_sched_gap),
	  .table = "sched_gaps", .columns = "start_ts, end_ts", .ncols = 2 },
	SCHED_TASK_TYPE(PC_REC_SCHED_TASK, "sched_task"),
	/* format 1.13: the same at each gap's start, and at an exit inside one */
	SCHED_TASK_TYPE(PC_REC_SCHED_TASK_CLOSE, "sched_task_close"),
	SCHED_TASK_TYPE(PC_REC_SCHED_TASK_EXIT, "sched_task_exit"),
	/* format 1.14: the syscall program's windows (syscall_windows.c);
	 * syscall_windows is written after the last chunk */
	TYPE(PC_REC_SYSCALL_WINDOW, "syscall_window", "syscall", struct pc_rec_syscall_window,
	     decode_syscall_window) },
	/* format 1.15: connections' byte streams as req windows open
	 * (request_pace.c) */
	TYPE(PC_REC_REQUEST_MARK, "request_mark", "req", struct pc_rec_request_mark,
	     decode_request_mark),
	  .table = "request_marks", .columns = "ts, cookie, conn_ts, pid, copied, read, kind",
	  .ncols = 7 },
};

const struct record_type *record_type_get(uint16_t type)
{
	return type <= RECORD_TYPE_MAX && types[type].decode ? &types[type] : NULL;
}

const char *record_type_name(uint16_t type)
{
	return type <= RECORD_TYPE_MAX ? types[type].name : NULL;
}

const char *record_type_source(uint16_t type)
{
	return type <= RECORD_TYPE_MAX ? types[type].source : NULL;
}

/* The batch of an earlier type with the same table (EXEC and EXIT share
 * process_events, in capture order), or NULL. */
static struct batch_insert *shared_batch(struct load_statements *s, uint16_t type)
{
	for (uint16_t t = 1; t < type; t++)
		if (types[t].table && strcmp(types[t].table, types[type].table) == 0)
			return s->batch[t];
	return NULL;
}

int record_batches_prepare(struct loader *L)
{
	struct load_statements *s = &L->st;
	char spec[512];

	for (uint16_t t = 1; t <= RECORD_TYPE_MAX; t++) {
		if (!types[t].table)
			continue;
		s->batch[t] = shared_batch(s, t);
		if (s->batch[t])
			continue;
		s->batch[t] = &s->batches[t];
		snprintf(spec, sizeof(spec), "%s (%s)", types[t].table, types[t].columns);
		if (batch_init(s->batch[t], L->db, spec, types[t].ncols) < 0)
			return -1;
	}
	return batch_init(&s->connections, L->db, "connections (ts, pid, fd, family, protocol,"
			  " laddr, lport, raddr, rport, state, peer, inode)", 12);
}

/* 1 if type t owns its batch (the first type of its table). */
static int owns_batch(const struct load_statements *s, uint16_t t)
{
	return s->batch[t] == &s->batches[t];
}

int record_batches_flush(struct loader *L)
{
	for (uint16_t t = 1; t <= RECORD_TYPE_MAX; t++)
		if (owns_batch(&L->st, t) && batch_flush(L->st.batch[t]) < 0)
			return -1;
	return batch_flush(&L->st.connections);
}

void record_batches_use_writer(struct loader *L, struct sql_writer *w)
{
	for (uint16_t t = 1; t <= RECORD_TYPE_MAX; t++)
		if (owns_batch(&L->st, t))
			batch_use_writer(L->st.batch[t], w, BATCH_RING_CHUNK);
	batch_use_writer(&L->st.connections, w, BATCH_RING_CHUNK);
}

void record_batches_free(struct loader *L)
{
	for (uint16_t t = 1; t <= RECORD_TYPE_MAX; t++)
		if (owns_batch(&L->st, t))
			batch_free(L->st.batch[t]);
	batch_free(&L->st.connections);
}
