/* load_events.c - decodes the event source records (types 9-20, format/
 * SPEC.md 2.3), stores each in its table in capture order and hands the
 * ones the correlations need (switches, wakeups, off-CPU intervals,
 * syscalls, block requests, sockets) to the correlator. OFFCPU rows are
 * written by the correlator once classified (waits.c). Records whose
 * interval would start before time 0 are counted as malformed. */
#include <arpa/inet.h>
#include <string.h>

#include "correlate/correlate.h"
#include "load_state.h"
#include "util/syscalls.h"

#define AF_INET_LINUX  2
#define AF_INET6_LINUX 10

static const struct {
	enum event_table table;
	const char *columns;
	int ncols;
} batch_tables[] = {
	{ ET_SWITCHES, "switches (ts, cpu, prev_pid, prev_tid, prev_state, next_pid,"
	  " next_tid, prev_prio, next_prio)", 9 },
	{ ET_WAKEUPS, "wakeups (ts, pid, tid, waker_pid, waker_tid, target_cpu, new)", 7 },
	{ ET_FORKS, "forks (ts, parent_pid, parent_tid, child_pid, child_tid, is_thread)", 6 },
	/* syscall_id is left to SQLite: rows come in id order, and an appended
	 * rowid needs no uniqueness probe (much faster than binding it) */
	{ ET_SYSCALLS, "syscalls (ts, duration, pid, tid, nr, ret, arg0, arg1, arg2,"
	  " ustack_id)", 10 },
	{ ET_BLOCK_IO, "block_io (ts, pid, tid, dev, op, sector, bytes, queue_ns,"
	  " service_ns, error)", 10 },
	{ ET_KERNEL_LOCKS, "kernel_locks (ts, duration, pid, tid, lock_addr, flags, ret,"
	  " kstack_id)", 8 },
	{ ET_USER_MUTEXES, "user_mutexes (ts, duration, pid, tid, addr, ustack_id)", 6 },
	{ ET_PAGE_FAULTS, "page_faults (ts, pid, tid, addr, ip, error_code, weight)", 7 },
	{ ET_SOCKETS, "sockets (ts, pid, tid, fd, origin, family, protocol, cookie, saddr,"
	  " sport, daddr, dport)", 12 },
	{ ET_TCP_STATES, "tcp_states (ts, pid, tid, cookie, family, saddr, sport, daddr,"
	  " dport, oldstate, newstate)", 11 },
	{ ET_TCP_RETRANSMITS, "tcp_retransmits (ts, pid, tid, cookie, family, saddr, sport,"
	  " daddr, dport, state)", 10 },
	{ ET_PROCESS_EVENTS, "process_events (ts, kind, pid, tid, comm)", 5 },
};

int load_events_prepare(struct loader *L)
{
	for (size_t i = 0; i < sizeof(batch_tables) / sizeof(batch_tables[0]); i++) {
		struct batch_insert *b = &L->st.ev[batch_tables[i].table];
		if (batch_init(b, L->db, batch_tables[i].columns, batch_tables[i].ncols) < 0)
			return -1;
	}
	return 0;
}

int load_events_flush(struct loader *L)
{
	for (int i = 0; i < ET_COUNT; i++)
		if (batch_flush(&L->st.ev[i]) < 0)
			return -1;
	return 0;
}

void load_events_finalize(struct loader *L)
{
	for (int i = 0; i < ET_COUNT; i++)
		batch_free(&L->st.ev[i]);
}

static void commit(struct loader *L, struct batch_insert *b)
{
	if (batch_commit_row(b) < 0)
		L->failed = 1;
}

static void correlate(struct loader *L, const struct tl_event *ev)
{
	if (correlator_add(L->corr, ev) < 0)
		L->failed = 1;
}

/* A stack id column: NULL for "none"; marks the stack used at ts. */
static void stack_column(struct loader *L, int64_t *row, uint8_t *kind, int col,
			 uint32_t id, uint64_t ts, uint32_t pid)
{
	row[col] = id;
	if (id == PC_STACK_NONE)
		kind[col] = BATCH_NULL;
	else if (stack_store_use(&L->stacks, id, ts, pid, 0) < 0)
		L->failed = 1;
}

static void load_switch(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_switch s;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_SWITCHES], &kind);

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	row[0] = (int64_t)s.ts;
	row[1] = s.cpu;
	row[2] = s.prev_pid;
	row[3] = s.prev_tid;
	row[4] = s.prev_state;
	row[5] = s.next_pid;
	row[6] = s.next_tid;
	row[7] = s.prev_prio;
	row[8] = s.next_prio;
	commit(L, &L->st.ev[ET_SWITCHES]);
	correlate(L, &(struct tl_event){
		.type = TL_SWITCH, .flags = rec->flags, .key = s.ts, .start = s.ts, .tid = s.prev_tid,
		.pid = s.prev_pid, .tid2 = s.next_tid, .pid2 = s.next_pid,
		.u1 = s.cpu, .u2 = s.prev_state });
}

static void load_wakeup(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_wakeup w;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_WAKEUPS], &kind);
	int is_new = (rec->flags & PC_WAKEUP_F_NEW) != 0;

	pc_rec_copy(rec, &w, sizeof(w), &tail);
	row[0] = (int64_t)w.ts;
	row[1] = w.pid;
	row[2] = w.tid;
	row[3] = w.waker_pid;
	row[4] = w.waker_tid;
	row[5] = w.target_cpu;
	row[6] = is_new;
	commit(L, &L->st.ev[ET_WAKEUPS]);
	correlate(L, &(struct tl_event){
		.type = TL_WAKEUP, .key = w.ts, .start = w.ts, .tid = w.tid, .pid = w.pid,
		.tid2 = w.waker_tid, .pid2 = w.waker_pid, .u1 = w.target_cpu,
		.flags = is_new ? TL_F_NEW : 0 });
}

static void load_offcpu(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_offcpu o;
	size_t tail;

	pc_rec_copy(rec, &o, sizeof(o), &tail);
	if (o.duration > o.ts) {
		L->counts.records_malformed++;
		return;
	}
	if ((o.ustack != PC_STACK_NONE &&
	     stack_store_use(&L->stacks, o.ustack, o.ts, o.pid, 0) < 0) ||
	    (o.kstack != PC_STACK_NONE &&
	     stack_store_use(&L->stacks, o.kstack, o.ts, o.pid, 0) < 0))
		L->failed = 1;
	correlate(L, &(struct tl_event){
		.type = TL_OFFCPU, .key = o.ts, .start = o.ts - o.duration, .tid = o.tid,
		.pid = o.pid, .u1 = o.state, .u2 = o.waker_tid, .id = ++L->noffcpu,
		.arg = (uint64_t)o.ustack << 32 | o.kstack });
}

static void load_fork(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_fork f;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_FORKS], &kind);

	pc_rec_copy(rec, &f, sizeof(f), &tail);
	row[0] = (int64_t)f.ts;
	row[1] = f.parent_pid;
	row[2] = f.parent_tid;
	row[3] = f.child_pid;
	row[4] = f.child_tid;
	row[5] = (rec->flags & PC_FORK_F_THREAD) != 0;
	commit(L, &L->st.ev[ET_FORKS]);
}

static void load_syscall(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_syscall s;
	size_t tail;
	uint8_t *kind;
	int64_t *row;

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	if (s.ts + s.duration < s.ts) {
		L->counts.records_malformed++;
		return;
	}
	if (!syscall_info(s.nr)->name)
		L->syscalls_unknown_nr++;
	if (s.nr < SYSCALL_NR_COUNTED)
		L->counts.syscalls_by_nr[s.nr]++;
	row = batch_row(&L->st.ev[ET_SYSCALLS], &kind);
	L->nsyscalls++;    /* its syscall_id */
	row[0] = (int64_t)s.ts;
	row[1] = (int64_t)s.duration;
	row[2] = s.pid;
	row[3] = s.tid;
	row[4] = s.nr;
	row[5] = s.ret;
	row[6] = (int64_t)s.args[0];
	row[7] = (int64_t)s.args[1];
	row[8] = (int64_t)s.args[2];
	stack_column(L, row, kind, 9, s.ustack, s.ts, s.pid);
	commit(L, &L->st.ev[ET_SYSCALLS]);
	correlate(L, &(struct tl_event){
		.type = TL_SYSCALL, .key = s.ts + s.duration, .start = s.ts, .tid = s.tid,
		.pid = s.pid, .u1 = s.nr, .u2 = (uint32_t)s.args[1], .arg = s.args[0],
		.ret = s.ret, .id = L->nsyscalls });
}

static void load_block(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_block b;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_BLOCK_IO], &kind);

	pc_rec_copy(rec, &b, sizeof(b), &tail);
	row[0] = (int64_t)b.ts;
	row[1] = b.pid;
	row[2] = b.tid;
	row[3] = b.dev;
	row[4] = b.op;
	row[5] = (int64_t)b.sector;
	row[6] = b.bytes;
	row[7] = (int64_t)b.queue_ns;
	row[8] = (int64_t)b.service_ns;
	row[9] = b.error;
	commit(L, &L->st.ev[ET_BLOCK_IO]);
	correlate(L, &(struct tl_event){
		.type = TL_BLOCK, .key = b.ts, .start = b.ts, .tid = b.tid, .pid = b.pid,
		.u1 = b.bytes, .arg = b.queue_ns, .ret = (int64_t)b.service_ns });
}

/* Text form of an address of family (Linux AF_* numbers); NULL otherwise. */
static const char *format_addr(char *buf, size_t len, uint16_t family, const uint8_t *addr)
{
	if (family == AF_INET_LINUX)
		return inet_ntop(AF_INET, addr, buf, (socklen_t)len);
	if (family == AF_INET6_LINUX)
		return inet_ntop(AF_INET6, addr, buf, (socklen_t)len);
	return NULL;
}

/* Sets (family, saddr, sport, daddr, dport) from column col on. */
static void endpoint_columns(struct batch_insert *b, int64_t *row, uint8_t *kind, int col,
			     uint16_t family, const uint8_t *saddr, uint16_t sport,
			     const uint8_t *daddr, uint16_t dport)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	row[col] = family;
	batch_text_copy(b, row, kind, col + 1, format_addr(s, sizeof(s), family, saddr));
	row[col + 2] = sport;
	batch_text_copy(b, row, kind, col + 3, format_addr(d, sizeof(d), family, daddr));
	row[col + 4] = dport;
}

static const char *socket_origin(uint16_t flags)
{
	if (flags & PC_SOCK_F_ACCEPTED)
		return "accepted";
	if (flags & PC_SOCK_F_CONNECTED)
		return "connected";
	if (flags & PC_SOCK_F_DISCOVERED)
		return "discovered";
	return NULL;
}

static void load_socket(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_socket s;
	size_t tail;
	struct batch_insert *b = &L->st.ev[ET_SOCKETS];
	uint8_t *kind;
	int64_t *row = batch_row(b, &kind);
	char sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN];

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	row[0] = (int64_t)s.ts;
	row[1] = s.pid;
	row[2] = s.tid;
	row[3] = s.fd;
	batch_text(row, kind, 4, socket_origin(rec->flags));
	row[5] = s.family;
	row[6] = s.protocol;
	row[7] = (int64_t)s.cookie;
	batch_text_copy(b, row, kind, 8, format_addr(sa, sizeof(sa), s.family, s.saddr));
	row[9] = s.sport;
	batch_text_copy(b, row, kind, 10, format_addr(da, sizeof(da), s.family, s.daddr));
	row[11] = s.dport;
	commit(L, b);
	correlate(L, &(struct tl_event){
		.type = TL_SOCKET, .key = s.ts, .start = s.ts, .tid = s.tid, .pid = s.pid,
		.u1 = (uint32_t)s.fd });
}

static void load_tcp_state(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_tcp_state t;
	size_t tail;
	struct batch_insert *b = &L->st.ev[ET_TCP_STATES];
	uint8_t *kind;
	int64_t *row = batch_row(b, &kind);

	pc_rec_copy(rec, &t, sizeof(t), &tail);
	row[0] = (int64_t)t.ts;
	row[1] = t.pid;
	row[2] = t.tid;
	row[3] = (int64_t)t.cookie;
	endpoint_columns(b, row, kind, 4, t.family, t.saddr, t.sport, t.daddr, t.dport);
	row[9] = t.oldstate;
	row[10] = t.newstate;
	commit(L, b);
}

static void load_tcp_retrans(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_tcp_retrans t;
	size_t tail;
	struct batch_insert *b = &L->st.ev[ET_TCP_RETRANSMITS];
	uint8_t *kind;
	int64_t *row = batch_row(b, &kind);

	pc_rec_copy(rec, &t, sizeof(t), &tail);
	row[0] = (int64_t)t.ts;
	row[1] = t.pid;
	row[2] = t.tid;
	row[3] = (int64_t)t.cookie;
	endpoint_columns(b, row, kind, 4, t.family, t.saddr, t.sport, t.daddr, t.dport);
	row[9] = t.state;
	commit(L, b);
}

static void load_lock(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_lock k;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_KERNEL_LOCKS], &kind);

	pc_rec_copy(rec, &k, sizeof(k), &tail);
	row[0] = (int64_t)k.ts;
	row[1] = (int64_t)k.duration;
	row[2] = k.pid;
	row[3] = k.tid;
	row[4] = (int64_t)k.lock;
	row[5] = k.flags;
	row[6] = k.ret;
	stack_column(L, row, kind, 7, k.kstack, k.ts, k.pid);
	commit(L, &L->st.ev[ET_KERNEL_LOCKS]);
}

static void load_mutex(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_mutex m;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_USER_MUTEXES], &kind);

	pc_rec_copy(rec, &m, sizeof(m), &tail);
	row[0] = (int64_t)m.ts;
	row[1] = (int64_t)m.duration;
	row[2] = m.pid;
	row[3] = m.tid;
	row[4] = (int64_t)m.addr;
	stack_column(L, row, kind, 5, m.ustack, m.ts, m.pid);
	commit(L, &L->st.ev[ET_USER_MUTEXES]);
}

static void load_fault(struct loader *L, const struct pc_rec *rec)
{
	struct pc_rec_fault f;
	size_t tail;
	uint8_t *kind;
	int64_t *row = batch_row(&L->st.ev[ET_PAGE_FAULTS], &kind);

	pc_rec_copy(rec, &f, sizeof(f), &tail);
	row[0] = (int64_t)f.ts;
	row[1] = f.pid;
	row[2] = f.tid;
	row[3] = (int64_t)f.addr;
	row[4] = (int64_t)f.ip;
	row[5] = f.error_code;
	row[6] = f.weight;
	L->fault_weight += f.weight;
	commit(L, &L->st.ev[ET_PAGE_FAULTS]);
}

void load_event(struct loader *L, const struct pc_rec *rec)
{
	switch (rec->type) {
	case PC_REC_SWITCH:      load_switch(L, rec); break;
	case PC_REC_WAKEUP:      load_wakeup(L, rec); break;
	case PC_REC_OFFCPU:      load_offcpu(L, rec); break;
	case PC_REC_FORK:        load_fork(L, rec); break;
	case PC_REC_SYSCALL:     load_syscall(L, rec); break;
	case PC_REC_BLOCK:       load_block(L, rec); break;
	case PC_REC_SOCKET:      load_socket(L, rec); break;
	case PC_REC_TCP_STATE:   load_tcp_state(L, rec); break;
	case PC_REC_TCP_RETRANS: load_tcp_retrans(L, rec); break;
	case PC_REC_LOCK:        load_lock(L, rec); break;
	case PC_REC_MUTEX:       load_mutex(L, rec); break;
	case PC_REC_FAULT:       load_fault(L, rec); break;
	default:                 break;
	}
}
