/* load_events.c - the decoders of the event source records (types 9-20,
 * format/SPEC.md 2.3): each fills its table's row (record_types.c names
 * the table and columns) in capture order and hands the records the
 * correlations need (switches, wakeups, off-CPU intervals, syscalls, block
 * requests, sockets) to the correlator. OFFCPU rows are written by the
 * correlator once classified (waits.c). Records whose interval would start
 * before time 0 are counted as malformed. */
#include <arpa/inet.h>
#include <string.h>

#include "correlate/correlate.h"
#include "load_state.h"
#include "ustack_unwind.h"
#include "util/syscalls.h"

#define AF_INET_LINUX  2
#define AF_INET6_LINUX 10

static void correlate(struct loader *L, const struct tl_event *ev)
{
	if (correlator_add(L->corr, ev) < 0)
		L->failed = 1;
}

/* Columns 0-2 of most event tables: ts, pid, tid. */
static void ts_pid_tid(const struct record_in *in, uint64_t ts, uint32_t pid, uint32_t tid)
{
	in->row[0] = (int64_t)ts;
	in->row[1] = pid;
	in->row[2] = tid;
}

/* A stack id column: NULL for "none"; marks the stack used at ts. */
static void stack_column(struct loader *L, const struct record_in *in, int col, uint32_t id,
			 uint64_t ts, uint32_t pid)
{
	in->row[col] = id;
	if (id == PC_STACK_NONE)
		in->kind[col] = BATCH_NULL;
	else if (stack_store_use(&L->stacks, id, ts, pid, 0) < 0)
		L->failed = 1;
}

int decode_switch(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_switch *s = in->body;
	int64_t *row = in->row;

	row[0] = (int64_t)s->ts;
	row[1] = s->cpu;
	row[2] = s->prev_pid;
	row[3] = s->prev_tid;
	row[4] = s->prev_state;
	row[5] = s->next_pid;
	row[6] = s->next_tid;
	row[7] = s->prev_prio;
	row[8] = s->next_prio;
	correlate(L, &(struct tl_event){
		.type = TL_SWITCH, .flags = in->rec->flags, .key = s->ts, .start = s->ts,
		.tid = s->prev_tid, .pid = s->prev_pid, .tid2 = s->next_tid,
		.pid2 = s->next_pid, .u1 = s->cpu, .u2 = s->prev_state });
	return 1;
}

/* The context a wakeup ran in (format 1.4; NULL before), its softirq
 * vector and the interrupted task: columns col .. col + 3. */
static void wake_context_columns(const struct loader *L, const struct record_in *in, int col,
				 uint16_t flags, uint32_t irq_pid, uint32_t irq_tid)
{
	in->row[col] = flags & PC_WAKE_F_SOFTIRQ ? 2 : flags & PC_WAKE_F_HARDIRQ ? 1 : 0;
	in->row[col + 1] = PC_WAKE_VEC(flags);
	in->row[col + 2] = irq_pid;
	in->row[col + 3] = irq_tid;
	if (L->format_minor < 4)
		in->kind[col] = BATCH_NULL;
	if (!(flags & PC_WAKE_F_SOFTIRQ))
		in->kind[col + 1] = BATCH_NULL;
	if (!(flags & (PC_WAKE_F_SOFTIRQ | PC_WAKE_F_HARDIRQ)))
		in->kind[col + 2] = in->kind[col + 3] = BATCH_NULL;
}

int decode_wakeup(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_wakeup *w = in->body;
	int is_new = (in->rec->flags & PC_WAKEUP_F_NEW) != 0;

	ts_pid_tid(in, w->ts, w->pid, w->tid);
	in->row[3] = w->waker_pid;
	in->row[4] = w->waker_tid;
	in->row[5] = w->target_cpu;
	in->row[6] = is_new;
	wake_context_columns(L, in, 7, in->rec->flags, w->irq_pid, w->irq_tid);
	correlate(L, &(struct tl_event){
		.type = TL_WAKEUP, .key = w->ts, .start = w->ts, .tid = w->tid, .pid = w->pid,
		.tid2 = w->waker_tid, .pid2 = w->waker_pid, .u1 = w->target_cpu,
		.flags = is_new ? TL_F_NEW : 0 });
	return 1;
}

/* An OFFCPU event to the correlator, its user stack marked used (also
 * called for the events held until their copy came: ustack_unwind.h). */
int offcpu_correlate(void *ctx, const struct tl_event *ev)
{
	struct loader *L = ctx;
	uint32_t ustack = (uint32_t)(ev->arg >> 32);

	if (ustack != PC_STACK_NONE && stack_store_use(&L->stacks, ustack, ev->key, ev->pid, 0) < 0)
		L->failed = 1;
	correlate(L, ev);
	return L->failed ? -1 : 0;
}

/* The user stack comes from the copy of the switch-out, when it was read
 * before (or, flag COPY_FOLLOWS, after) the record; with flag COPY_SAME
 * (1.9) from the thread's earlier copy at copy_ts, read before or after;
 * else the record's. */
int decode_offcpu(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_offcpu *o = in->body;
	int follows = (in->rec->flags & PC_OFFCPU_F_COPY_FOLLOWS) != 0;
	int same = !follows && (in->rec->flags & PC_OFFCPU_F_COPY_SAME) && o->copy_ts;
	uint64_t copy_ts = same ? o->copy_ts : o->ts - o->duration;
	uint32_t ustack;
	int held;

	if (o->duration > o->ts || (same && o->copy_ts >= o->ts - o->duration)) {
		L->counts.records_malformed++;
		return 0;
	}
	ustack = ustack_for_offcpu(L, o->tid, copy_ts, PC_STACK_NONE);
	if (same)
		ustack_offcpu_same(L, ustack != PC_STACK_NONE);
	if (follows && o->copy_ts && o->copy_ts < o->ts - o->duration &&
	    ustack_offcpu_refresh(L, o->tid, o->ts - o->duration, o->copy_ts) < 0)
		L->failed = 1;
	if (o->kstack != PC_STACK_NONE &&
	    stack_store_use(&L->stacks, o->kstack, o->ts, o->pid, 0) < 0)
		L->failed = 1;
	struct tl_event ev = {
		.type = TL_OFFCPU, .key = o->ts, .start = o->ts - o->duration, .tid = o->tid,
		.pid = o->pid, .u1 = o->state, .u2 = o->waker_tid, .id = ++L->noffcpu,
		.pid2 = o->waker_pid, .tid2 = o->irq_tid,
		.ret = (int64_t)((uint64_t)(in->rec->flags & PC_WAKE_F_MASK) << 32 | o->irq_pid),
		.arg = (uint64_t)(ustack != PC_STACK_NONE ? ustack : o->ustack) << 32 | o->kstack };
	held = ustack_offcpu_hold(L, &ev, (follows || same) && ustack == PC_STACK_NONE, copy_ts);
	if (held < 0)
		L->failed = 1;
	else if (!held)
		offcpu_correlate(L, &ev);
	return 0;
}

int decode_fork(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_fork *f = in->body;

	(void)L;
	in->row[0] = (int64_t)f->ts;
	in->row[1] = f->parent_pid;
	in->row[2] = f->parent_tid;
	in->row[3] = f->child_pid;
	in->row[4] = f->child_tid;
	in->row[5] = (in->rec->flags & PC_FORK_F_THREAD) != 0;
	return 1;
}

/* A gap between the sched source's windows (1.12): its end after its
 * start, within the capture's times. */
int decode_sched_gap(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_sched_gap *g = in->body;

	if (g->end_ts < g->ts || g->end_ts > (uint64_t)INT64_MAX) {
		L->counts.records_malformed++;
		return 0;
	}
	in->row[0] = (int64_t)g->ts;
	in->row[1] = (int64_t)g->end_ts;
	correlate(L, &(struct tl_event){
		.type = TL_GAP, .key = g->ts, .start = g->ts, .arg = g->end_ts });
	return 1;
}

/* A traced thread as a sched window opened (1.12), closed, or as it
 * exited between two (1.13). */
int decode_sched_task(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_sched_task *t = in->body;
	int code = sched_task_state_code(t->where, t->state);
	static const struct {
		const char *edge;
		uint16_t tl;
	} kinds[] = {   /* by record type, from PC_REC_SCHED_TASK */
		{ "open", TL_TASK }, { "close", TL_TASK_CLOSE }, { "exit", TL_TASK_EXIT },
	};
	_Static_assert(PC_REC_SCHED_TASK_CLOSE == PC_REC_SCHED_TASK + 1 &&
		       PC_REC_SCHED_TASK_EXIT == PC_REC_SCHED_TASK + 2, "kinds[] order");
	const typeof(kinds[0]) *k = &kinds[in->rec->type - PC_REC_SCHED_TASK];

	if (t->ts > (uint64_t)INT64_MAX || t->runtime_ns > (uint64_t)INT64_MAX ||
	    t->run_delay_ns > (uint64_t)INT64_MAX || t->where > PC_SCHED_TASK_QUEUED) {
		L->counts.records_malformed++;
		return 0;
	}
	ts_pid_tid(in, t->ts, t->pid, t->tid);
	in->row[3] = code;
	in->row[4] = t->state;
	in->row[5] = t->cpu;
	in->row[6] = (int64_t)t->runtime_ns;
	in->row[7] = (int64_t)t->run_delay_ns;
	batch_text(in->row, in->kind, 8, k->edge);
	/* (1.16) the voluntary switches; before, not recorded */
	in->row[9] = t->nvcsw > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t->nvcsw;
	if (L->format_minor < 16)
		in->kind[9] = BATCH_NULL;
	correlate(L, &(struct tl_event){
		.type = k->tl, .key = t->ts, .start = t->ts, .tid = t->tid, .pid = t->pid,
		.u1 = t->cpu, .u2 = (uint32_t)code, .arg = t->runtime_ns,
		.ret = (int64_t)t->run_delay_ns });
	return 1;
}

int decode_syscall(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_syscall *s = in->body;
	const struct syscall_window *win;

	if (s->ts + s->duration < s->ts) {
		L->counts.records_malformed++;
		return 0;
	}
	if (!syscall_info(s->nr)->name)
		L->syscalls_unknown_nr++;
	if (in->rec->flags & PC_SYSCALL_F_SUMMED)
		L->counts.syscalls_summed++;  /* filed under agg, not split by number */
	else if (s->nr < SYSCALL_NR_COUNTED)
		L->counts.syscalls_by_nr[s->nr]++;
	L->nsyscalls++;    /* its syscall_id */
	in->row[0] = (int64_t)s->ts;
	in->row[1] = (int64_t)s->duration;
	in->row[2] = s->pid;
	in->row[3] = s->tid;
	in->row[4] = s->nr;
	in->row[5] = s->ret;
	in->row[6] = (int64_t)s->args[0];
	in->row[7] = (int64_t)s->args[1];
	in->row[8] = (int64_t)s->args[2];
	stack_column(L, in, 9, s->ustack, s->ts, s->pid);
	win = syscall_windows_find(&L->scw, s->ts);
	in->row[10] = win ? (int64_t)win->ts : 0;
	if (!win)
		in->kind[10] = BATCH_NULL;    /* followed whole: weight 1 */
	in->row[11] = s->io_calls > INT64_MAX ? INT64_MAX : (int64_t)s->io_calls;
	if (!s->io_calls)
		in->kind[11] = BATCH_NULL;    /* not known (before 1.15, agg) */
	if (request_feed_syscall(&L->requests, (int64_t)L->nsyscalls, s->ts, s->duration,
				 s->pid, s->tid, s->nr, s->ret, s->args[0]) < 0)
		L->failed = 1;
	correlate(L, &(struct tl_event){
		.type = TL_SYSCALL, .key = s->ts + s->duration, .start = s->ts, .tid = s->tid,
		.pid = s->pid, .u1 = s->nr, .u2 = (uint32_t)s->args[1], .arg = s->args[0],
		.ret = s->ret, .id = L->nsyscalls,
		.weight = (float)syscall_window_weight(win, s->duration) });
	return 1;
}

int decode_syscall_window(struct loader *L, const struct record_in *in)
{
	int rc = syscall_windows_add(&L->scw, in->body);

	if (rc < 0)
		L->failed = 1;
	else if (rc == 0)
		L->counts.records_malformed++;
	return 0;
}

int decode_block(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_block *b = in->body;

	ts_pid_tid(in, b->ts, b->pid, b->tid);
	in->row[3] = b->dev;
	in->row[4] = b->op;
	in->row[5] = (int64_t)b->sector;
	in->row[6] = b->bytes;
	in->row[7] = (int64_t)b->queue_ns;
	in->row[8] = (int64_t)b->service_ns;
	in->row[9] = b->error;
	correlate(L, &(struct tl_event){
		.type = TL_BLOCK, .key = b->ts, .start = b->ts, .tid = b->tid, .pid = b->pid,
		.u1 = b->bytes, .arg = b->queue_ns, .ret = (int64_t)b->service_ns });
	return 1;
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
static void endpoint_columns(const struct record_in *in, int col, uint16_t family,
			     const uint8_t *saddr, uint16_t sport, const uint8_t *daddr,
			     uint16_t dport)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	in->row[col] = family;
	batch_text_copy(in->batch, in->row, in->kind, col + 1,
			format_addr(s, sizeof(s), family, saddr));
	in->row[col + 2] = sport;
	batch_text_copy(in->batch, in->row, in->kind, col + 3,
			format_addr(d, sizeof(d), family, daddr));
	in->row[col + 4] = dport;
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

/* Text of an endpoint address as connections stores it: an IPv4-mapped
 * IPv6 address (a v6 socket talking to a v4 one) as its IPv4 form, so
 * both ends of a connection compare equal. */
static const char *connection_addr(char *buf, size_t len, uint16_t family,
				   const uint8_t *addr)
{
	static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (family == AF_INET6_LINUX && memcmp(addr, v4_mapped, sizeof(v4_mapped)) == 0)
		return inet_ntop(AF_INET, addr + 12, buf, (socklen_t)len);
	return format_addr(buf, len, family, addr);
}

/* A SOCKET record of the /proc snapshots: a row of connections (role set
 * at the end, connections.c), not of sockets, and nothing for the
 * correlator (no fd lifetime starts here). */
static void decode_snapshot_socket(struct loader *L, const struct pc_rec_socket *s,
				   uint16_t flags)
{
	struct batch_insert *b = &L->st.connections;
	char la[INET6_ADDRSTRLEN], ra[INET6_ADDRSTRLEN];
	uint8_t *kind;
	int64_t *row = batch_row(b, &kind);

	L->counts.sockets_snapshot++;
	row[0] = (int64_t)s->ts;
	row[1] = s->pid;
	row[2] = s->fd;
	row[3] = s->family;
	row[4] = s->protocol;
	batch_text_copy(b, row, kind, 5, connection_addr(la, sizeof(la), s->family, s->saddr));
	row[6] = s->sport;
	batch_text_copy(b, row, kind, 7, connection_addr(ra, sizeof(ra), s->family, s->daddr));
	row[8] = s->dport;
	row[9] = s->state;
	row[10] = (flags & PC_SOCK_F_PEER) ? 1 : 0;
	row[11] = (int64_t)s->cookie;
	if (batch_commit_row(b) < 0)
		L->failed = 1;
}

int decode_socket(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_socket *s = in->body;
	char sa[INET6_ADDRSTRLEN], da[INET6_ADDRSTRLEN];

	if (in->rec->flags & PC_SOCK_F_SNAPSHOT) {
		decode_snapshot_socket(L, s, in->rec->flags);
		return 0;
	}
	ts_pid_tid(in, s->ts, s->pid, s->tid);
	in->row[3] = s->fd;
	batch_text(in->row, in->kind, 4, socket_origin(in->rec->flags));
	in->row[5] = s->family;
	in->row[6] = s->protocol;
	in->row[7] = (int64_t)s->cookie;
	batch_text_copy(in->batch, in->row, in->kind, 8,
			format_addr(sa, sizeof(sa), s->family, s->saddr));
	in->row[9] = s->sport;
	batch_text_copy(in->batch, in->row, in->kind, 10,
			format_addr(da, sizeof(da), s->family, s->daddr));
	in->row[11] = s->dport;
	if (request_feed_socket(&L->requests, s->ts, s->pid, s->fd, s->cookie,
				socket_origin(in->rec->flags)) < 0)
		L->failed = 1;
	correlate(L, &(struct tl_event){
		.type = TL_SOCKET, .key = s->ts, .start = s->ts, .tid = s->tid, .pid = s->pid,
		.u1 = (uint32_t)s->fd });
	return 1;
}

int decode_tcp_state(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_tcp_state *t = in->body;

	(void)L;
	ts_pid_tid(in, t->ts, t->pid, t->tid);
	in->row[3] = (int64_t)t->cookie;
	endpoint_columns(in, 4, t->family, t->saddr, t->sport, t->daddr, t->dport);
	in->row[9] = t->oldstate;
	in->row[10] = t->newstate;
	return 1;
}

int decode_tcp_retrans(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_tcp_retrans *t = in->body;

	(void)L;
	ts_pid_tid(in, t->ts, t->pid, t->tid);
	in->row[3] = (int64_t)t->cookie;
	endpoint_columns(in, 4, t->family, t->saddr, t->sport, t->daddr, t->dport);
	in->row[9] = t->state;
	return 1;
}

int decode_lock(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_lock *k = in->body;

	in->row[0] = (int64_t)k->ts;
	in->row[1] = (int64_t)k->duration;
	in->row[2] = k->pid;
	in->row[3] = k->tid;
	in->row[4] = (int64_t)k->lock;
	in->row[5] = k->flags;
	in->row[6] = k->ret;
	stack_column(L, in, 7, k->kstack, k->ts, k->pid);
	return 1;
}

int decode_mutex(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_mutex *m = in->body;

	in->row[0] = (int64_t)m->ts;
	in->row[1] = (int64_t)m->duration;
	in->row[2] = m->pid;
	in->row[3] = m->tid;
	in->row[4] = (int64_t)m->addr;
	stack_column(L, in, 5, m->ustack, m->ts, m->pid);
	return 1;
}

/* (1.5) PROBE: a uprobed call or a USDT hit; args past nargs are NULL. */
int decode_probe(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_probe *p = in->body;
	uint32_t nargs = p->nargs < PC_PROBE_ARGS ? p->nargs : PC_PROBE_ARGS;

	in->row[0] = (int64_t)p->ts;
	in->row[1] = (int64_t)p->duration;
	in->row[2] = p->pid;
	in->row[3] = p->tid;
	in->row[4] = p->probe;
	for (uint32_t i = 0; i < PC_PROBE_ARGS; i++) {
		in->row[5 + i] = (int64_t)p->args[i];
		if (i >= nargs)
			in->kind[5 + i] = BATCH_NULL;
	}
	stack_column(L, in, 8, p->ustack, p->ts, p->pid);
	return 1;
}

int decode_fault(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_fault *f = in->body;

	ts_pid_tid(in, f->ts, f->pid, f->tid);
	in->row[3] = (int64_t)f->addr;
	in->row[4] = (int64_t)f->ip;
	in->row[5] = f->error_code;
	in->row[6] = f->weight;
	L->fault_weight += f->weight;
	return 1;
}
