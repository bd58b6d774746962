/* diagnose_wakers.c - causes read from what ended the scope's waits (book
 * 8.3, off-wake analysis): each blocked off-CPU interval is charged to its
 * last wakeup (offcpu waker and context, format 1.4), by the waker kind of
 * the view wakeup_edges (analyze/db/views/wakeup_edges.sql, the one
 * definition of the kinds, shared with wakeup_graph and the report's
 * wakeup graph), refined here:
 *
 *   timer     a hard interrupt or a timer softirq ended it (a sleep, a
 *             poll timeout, an event loop's tick): kind timer;
 *   device    a hard interrupt or the BLOCK softirq ended an I/O wait:
 *             kind device;
 *   thread    another thread of the same process (a queue, a condition):
 *             kind thread;
 *   service   another process of the same service: same executable name as
 *             the waiter's process, or its parent or child (postgres
 *             backends, nginx workers);
 *   peer      another process (kind process), or the task a NET_RX/NET_TX
 *             softirq ran on (kind softirq:NET_RX; a loopback send delivers
 *             its packet in the sender's context); a client if it holds a
 *             connection to a port the service listens on, an upstream if
 *             the service holds one to it (connections, from the recorder's
 *             socket snapshot);
 *   network   a packet from no known process (a remote peer), or a wakeup
 *             by ksoftirqd;
 *   kernel    a kernel thread (a workqueue: I/O completions are device);
 *   unknown   no wakeup seen (kind unknown), or another softirq.
 *
 * Causes:
 *   lock_contention (lock_source "wakeups")  waits ended by other processes
 *             of the service that themselves waited on the service: a
 *             convoy through a lock that is not a futex (PostgreSQL's row
 *             locks sleep on the process latch, in epoll); the holder is the
 *             process that woke the waiters most.
 *   upstream_wait  waits ended by an upstream: the service waited for a
 *             dependency, named by its address.
 *   idle      waits for work: ended by clients, by timers in poll/accept,
 *             or in poll/accept/receive with no wakeup seen. Not a problem:
 *             ranked last, said plainly when nothing else explains the time.
 * Same-process futex waits are the lock rule's (diagnose_locks.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "query/connections.h"
#include "util/fmt.h"

#define MAX_GROUPS      4096

enum ended_by { EB_TIMER, EB_DEVICE, EB_THREAD, EB_SERVICE, EB_CLIENT, EB_UPSTREAM, EB_PEER,
		EB_NETWORK, EB_KERNEL, EB_UNKNOWN, EB_RECORDER };

/* Kernel threads by name: their wakeups are the kernel's own work
 * (workqueues completing I/O, RCU, writeback), not a peer's. */
static int kernel_thread(const char *comm)
{
	static const char *const prefixes[] = { "kworker/", "ksoftirqd/", "kswapd", "jbd2/",
		"rcu_", "migration/", "irq/", "kthreadd", "khugepaged", "kcompactd",
		"writeback", "flush-", "xfsaild", "btrfs-" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(comm, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* One (waiter thread, class, waker) group of blocked off-CPU time. */
struct wake_group {
	uint32_t pid, tid;
	char wait_class[16];
	char kind[24];            /* wakeup_edges.waker_kind */
	uint32_t peer_pid, peer_tid;
	uint64_t ns, n;
	enum ended_by by;
};

struct wake_groups {
	struct wake_group *g;
	size_t len;
};

static int load_groups(const struct diag_input *in, struct wake_groups *w)
{
	char where[1024], sql[2048];
	sqlite3_stmt *st;
	int step, rc = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT pid, tid, wait_class, waker_kind, waker_pid, waker_tid,"
		 " sum(min(end_ts, :to) - max(start_ts, :from)), count(*)"
		 " FROM wakeup_edges WHERE %s"
		 " GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 7 DESC LIMIT %d",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "start_ts", "end_ts"),
		 MAX_GROUPS);
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	w->g = calloc(MAX_GROUPS, sizeof(*w->g));
	while (w->g && (step = sqlite3_step(st)) == SQLITE_ROW) {
		struct wake_group *g = &w->g[w->len++];
		const unsigned char *cls = sqlite3_column_text(st, 2);
		g->pid = (uint32_t)sqlite3_column_int64(st, 0);
		g->tid = (uint32_t)sqlite3_column_int64(st, 1);
		snprintf(g->wait_class, sizeof(g->wait_class), "%s", cls ? (const char *)cls : "");
		snprintf(g->kind, sizeof(g->kind), "%s", sqlite3_column_text(st, 3) ?
			 (const char *)sqlite3_column_text(st, 3) : "unknown");
		g->peer_pid = (uint32_t)sqlite3_column_int64(st, 4);
		g->peer_tid = (uint32_t)sqlite3_column_int64(st, 5);
		g->ns = (uint64_t)sqlite3_column_int64(st, 6);
		g->n = (uint64_t)sqlite3_column_int64(st, 7);
	}
	if (!w->g || (step != SQLITE_ROW && step != SQLITE_DONE)) {
		db_report_error(in->db, "offcpu wakers");
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

/* 1 if processes a and b belong to one service: the same process name, or
 * one the other's parent. */
static int same_service(const struct diag_input *in, uint32_t a, uint32_t b)
{
	char sql[512];
	sqlite3_stmt *st;
	int same = 0;

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM processes x, processes y WHERE x.pid = %u AND y.pid = %u"
		 " AND (x.comm = y.comm OR x.ppid = y.pid OR y.ppid = x.pid)", a, b);
	st = db_prepare(in->db, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW)
		same = sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	if (!same) { /* threads the capture names but whose process it does not */
		const char *na = names_thread(in->names, a, a), *nb = names_thread(in->names, b, b);
		same = na && nb && strcmp(na, nb) == 0;
	}
	return same;
}

/* No connection between them was in a snapshot (it came and went between
 * two): a peer that listens is a server, so an upstream of the service; a
 * peer that listens on nothing, when the snapshots saw every listener
 * (no budget hit) and the service listens, is a client (redis-cli, wrk,
 * pgbench connect and go). Else unknown. */
static enum ended_by role_by_listening(const struct diag_input *in, uint32_t pid, uint32_t peer,
				       char *addr, size_t len)
{
	char sql[512];
	sqlite3_stmt *st;
	int listens = 0, service_listens;

	snprintf(sql, sizeof(sql), "SELECT CASE WHEN family = 10 THEN '[' || laddr || ']'"
		 " ELSE laddr END || ':' || lport FROM connections WHERE pid = %u AND"
		 " role = 'listen' AND protocol = 6 ORDER BY lport LIMIT 1", peer);
	st = db_prepare(in->db, sql);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		listens = 1;
		snprintf(addr, len, "%s (listening; the connection came and went between"
			 " snapshots)", sqlite3_column_text(st, 0) ?
			 (const char *)sqlite3_column_text(st, 0) : "?");
	}
	sqlite3_finalize(st);
	if (listens)
		return EB_UPSTREAM;
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM connections WHERE pid = %u AND"
		 " role = 'listen'", pid);
	service_listens = db_query_int(in->db, sql, 0) > 0;
	if (service_listens && db_query_int(in->db, "SELECT count(*) FROM stats WHERE key ="
					    " 'sockets.snapshots' AND value > 0", 0) > 0 &&
	    db_query_int(in->db, "SELECT count(*) FROM stats WHERE key ="
			 " 'sockets.budget_hits' AND value > 0", 0) == 0)
		return EB_CLIENT;
	return EB_PEER;
}

/* The role of peer process peer for service pid by the socket snapshot
 * (query/connections.c): EB_CLIENT, EB_UPSTREAM or EB_PEER (unknown, or
 * both: a process that is client and upstream at once says nothing);
 * addr gets the upstream's address. */
static enum ended_by peer_role(const struct diag_input *in, uint32_t pid, uint32_t peer,
			       char *addr, size_t len)
{
	struct conn_relation rel;

	if (connections_relation(in->db, pid, peer, &rel) < 0)
		return EB_PEER;
	if (rel.kind == CONN_CLIENT)
		return EB_CLIENT;
	if (rel.kind == CONN_UPSTREAM) {
		snprintf(addr, len, "%s", rel.addr);
		return EB_UPSTREAM;
	}
	if (rel.kind == CONN_UNKNOWN)
		return role_by_listening(in, pid, peer, addr, len);
	return EB_PEER;
}

static int is_io(const char *cls)
{
	return strcmp(cls, "block_io") == 0;
}

/* The group's waker kind (wakeup_edges.sql) refined: a process into
 * service, or peer (client or upstream: decided per process below). */
static enum ended_by classify(const struct diag_input *in, struct wake_group *g)
{
	char comm[64];

	if (strcmp(g->kind, "timer") == 0)
		return EB_TIMER;
	if (strcmp(g->kind, "device") == 0)
		return EB_DEVICE;
	if (strcmp(g->kind, "thread") == 0)
		return EB_THREAD;
	if (strcmp(g->kind, "softirq:NET_RX") == 0 || strcmp(g->kind, "softirq:NET_TX") == 0) {
		if (!g->peer_pid || g->peer_pid == g->pid)
			return EB_NETWORK;
	} else if (strcmp(g->kind, "process") == 0) {
		if (in->recorder_pid && g->peer_pid == in->recorder_pid)
			return EB_RECORDER;  /* the observer: not the workload's */
		diag_comm(in, g->peer_pid, g->peer_tid, comm, sizeof(comm));
		if (strncmp(comm, "ksoftirqd", 9) == 0)
			return EB_NETWORK;
		if (kernel_thread(comm)) /* completions run from workqueues */
			return is_io(g->wait_class) ? EB_DEVICE : EB_KERNEL;
	} else {
		return EB_UNKNOWN;     /* no wakeup seen, the idle task, other softirqs */
	}
	return EB_PEER;    /* service, client or upstream: relation_of() */
}

/* What peer process peer is to the waiter's process pid: the same service,
 * else its client or upstream (peer_role); asked once per pair (a busy
 * server has thousands of groups and a handful of peers). network: a
 * packet's softirq ran on peer, which is then never the service. */
static enum ended_by relation_of(const struct diag_input *in, struct hmap *seen, uint32_t pid,
				 uint32_t peer, int network, char *addr, size_t len)
{
	int created = 0;
	uint64_t *slot = hmap_upsert(seen, (uint64_t)network << 32 | pid, peer, 0, &created);
	enum ended_by by;
	char a[64] = "";

	if (slot && !created)
		return (enum ended_by)*slot;
	if (!network && same_service(in, pid, peer))
		by = EB_SERVICE;
	else
		by = peer_role(in, pid, peer, a, sizeof(a));
	if (by == EB_UPSTREAM && !addr[0])
		snprintf(addr, len, "%s", a);
	if (slot)
		*slot = by;
	return by;
}

static int waits_for_work(const char *cls)
{
	return strcmp(cls, "poll") == 0 || strcmp(cls, "accept") == 0 ||
	       strcmp(cls, "net") == 0 || strcmp(cls, "unknown") == 0;
}

/* Sums over groups matching a predicate, with the threads involved. */
struct charge {
	uint64_t ns, n, observed;
	int threads;
	uint32_t top_peer_pid, top_peer_tid;
	uint64_t top_peer_n;
	char tids[512];
};

static void add_thread(const struct diag_input *in, struct charge *c, uint32_t tid)
{
	char one[16];

	snprintf(one, sizeof(one), ",%u,", tid);
	{
		char padded[520];
		snprintf(padded, sizeof(padded), ",%s,", c->tids);
		if (strstr(padded, one))
			return;
	}
	if (strlen(c->tids) + 12 < sizeof(c->tids))
		snprintf(c->tids + strlen(c->tids), sizeof(c->tids) - strlen(c->tids), "%s%u",
			 c->tids[0] ? "," : "", tid);
	c->threads++;
	c->observed += diag_observed_ns(in, tid);
}

static void charge(const struct diag_input *in, struct charge *c, const struct wake_group *g)
{
	c->ns += g->ns;
	c->n += g->n;
	add_thread(in, c, g->tid);
	if (g->n > c->top_peer_n && g->peer_pid) {
		c->top_peer_n = g->n;
		c->top_peer_pid = g->peer_pid;
		c->top_peer_tid = g->peer_tid;
	}
}

static struct diag_cause *claim(const struct diag_input *in, struct diagnosis *d,
				const char *kind, const char *key, const struct charge *ch)
{
	struct diag_cause *c;

	if (ch->ns < 1000000 || ch->observed == 0 || !diag_material(in, ch->ns) ||
	    (double)ch->ns / (double)ch->observed < 0.05)
		return NULL;
	c = diag_add_cause(d, kind);
	if (!c)
		return NULL;
	c->score = (double)ch->ns / (double)ch->observed;
	if (c->score > 1)
		c->score = 1;
	c->key_name = key;
	c->key_value = (double)ch->ns;
	c->key_unit = "ns";
	c->sources = "sched";
	return c;
}

/* Convoy test: most processes that woke the waiters were waiters too. */
static int convoy(const struct wake_groups *w, const struct charge *ch)
{
	int wakers = 0, waiting = 0;
	uint32_t seen[64];
	int nseen = 0;
	char padded[520];

	snprintf(padded, sizeof(padded), ",%s,", ch->tids);
	for (size_t i = 0; i < w->len && nseen < 64; i++) {
		const struct wake_group *g = &w->g[i];
		char one[16];
		int dup = 0;
		if (g->by != EB_SERVICE)
			continue;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == g->peer_tid;
		if (dup)
			continue;
		seen[nseen++] = g->peer_tid;
		wakers++;
		snprintf(one, sizeof(one), ",%u,", g->peer_tid);
		waiting += strstr(padded, one) != NULL;
	}
	return wakers > 0 && waiting * 2 >= wakers;
}

static void service_contention(const struct diag_input *in, struct diagnosis *d,
			       const struct wake_groups *w)
{
	struct charge ch = { 0 };
	struct diag_cause *c;
	char comm[64], a[FMT_BUF], pct[FMT_BUF];

	for (size_t i = 0; i < w->len; i++)
		if (w->g[i].by == EB_SERVICE && !is_io(w->g[i].wait_class))
			charge(in, &ch, &w->g[i]);
	if (!convoy(w, &ch) || !(c = claim(in, d, "lock_contention", "wait_total", &ch)))
		return;
	diag_comm(in, ch.top_peer_pid, ch.top_peer_tid, comm, sizeof(comm));
	snprintf(c->title, sizeof(c->title), "contention between processes of %.32s: %d waited"
		 " %s for each other (woken by the holder)",
		 comm, ch.threads, fmt_duration_ns(a, sizeof(a), ch.ns));
	diag_int(&c->subject, "pid", w->g[0].pid);
	diag_text(&c->subject, "address", "");
	diag_text(&c->subject, "lock_source", "wakeups");
	diag_int(&c->subject, "waiters", ch.threads);
	diag_text(&c->subject, "waiter_tids", ch.tids);
	diag_int(&c->subject, "waits", (int64_t)ch.n);
	diag_int(&c->subject, "holder_tid", ch.top_peer_tid);
	diag_text(&c->subject, "holder_comm", comm);
	diag_evidence(c, "%llu waits of %d processes of the service were ended by another"
		      " process of the service (%s of their time); the wakers waited on the"
		      " others in turn (a convoy)", (unsigned long long)ch.n, ch.threads,
		      fmt_percent(pct, sizeof(pct), ch.ns, ch.observed));
	diag_evidence(c, "holder: pid %u (%s) woke them most often (%llu wakes)", ch.top_peer_pid,
		      comm, (unsigned long long)ch.top_peer_n);
}

static void upstream(const struct diag_input *in, struct diagnosis *d,
		     const struct wake_groups *w, const char *addr)
{
	struct charge ch = { 0 };
	struct diag_cause *c;
	char comm[64], a[FMT_BUF], pct[FMT_BUF];

	for (size_t i = 0; i < w->len; i++)
		if (w->g[i].by == EB_UPSTREAM)
			charge(in, &ch, &w->g[i]);
	if (!(c = claim(in, d, "upstream_wait", "wait_total", &ch)))
		return;
	diag_comm(in, ch.top_peer_pid, ch.top_peer_tid, comm, sizeof(comm));
	snprintf(c->title, sizeof(c->title), "waiting on upstream %s (%s, pid %u): %d thread(s)"
		 " waited %s", addr, comm, ch.top_peer_pid, ch.threads,
		 fmt_duration_ns(a, sizeof(a), ch.ns));
	diag_text(&c->subject, "peer", addr);
	diag_int(&c->subject, "peer_pid", ch.top_peer_pid);
	diag_text(&c->subject, "peer_comm", comm);
	diag_text(&c->subject, "waiter_tids", ch.tids);
	diag_evidence(c, "%llu waits ended by a packet or wakeup from pid %u (%s), to which the"
		      " service holds a connection (%s); %s of the waiters' time",
		      (unsigned long long)ch.n, ch.top_peer_pid, comm, addr,
		      fmt_percent(pct, sizeof(pct), ch.ns, ch.observed));
}

static void idle(const struct diag_input *in, struct diagnosis *d, const struct wake_groups *w)
{
	struct charge ch = { 0 };
	struct diag_cause *c;
	char a[FMT_BUF];

	for (size_t i = 0; i < w->len; i++) {
		const struct wake_group *g = &w->g[i];
		if (!waits_for_work(g->wait_class))
			continue;
		if (g->by == EB_CLIENT || g->by == EB_TIMER ||
		    (g->by == EB_UNKNOWN && strcmp(g->wait_class, "unknown") != 0) ||
		    (g->by == EB_NETWORK && strcmp(g->wait_class, "unknown") != 0) ||
		    strcmp(g->wait_class, "accept") == 0)
			charge(in, &ch, g);
	}
	if (!(c = claim(in, d, "idle", "idle_share", &ch)))
		return;
	c->key_value = 100.0 * c->score;
	c->key_unit = "percent";
	c->rank_last = 1;
	snprintf(c->title, sizeof(c->title), "idle: %d thread(s) waited for work %.0f%% of their"
		 " time (%s; woken by clients or their own timeouts): not loaded, not a"
		 " resource problem", ch.threads, 100.0 * c->score,
		 fmt_duration_ns(a, sizeof(a), ch.ns));
	diag_int(&c->subject, "threads", ch.threads);
	diag_text(&c->subject, "thread_tids", ch.tids);
	diag_int(&c->subject, "wait_ns", (int64_t)ch.ns);
	diag_evidence(c, "%llu waits in poll/accept/receive ended by clients, timeouts, or with no"
		      " wakeup seen", (unsigned long long)ch.n);
}

/* What the waits could not be charged to: peers of unknown role and
 * waits with no wakeup seen, as caveats that lower the confidence; and
 * the waits the recorder itself ended, as a caveat that names it. */
static void unexplained(const struct diag_input *in, struct diagnosis *d,
			const struct wake_groups *w)
{
	uint64_t observed = 0, peer = 0, none = 0, recorder = 0;
	struct charge all = { 0 };
	uint32_t peers[4] = { 0 };
	char names[128] = "", comm[64], pct[FMT_BUF];
	int npeers = 0;

	for (size_t i = 0; i < w->len; i++) {
		const struct wake_group *g = &w->g[i];
		add_thread(in, &all, g->tid);
		if (g->by == EB_UNKNOWN && strcmp(g->wait_class, "unknown") == 0)
			none += g->ns;
		if (g->by == EB_RECORDER)
			recorder += g->ns;
		if (g->by != EB_PEER)
			continue;
		peer += g->ns;
		if (npeers < 4 && (npeers == 0 || peers[npeers - 1] != g->peer_pid)) {
			peers[npeers++] = g->peer_pid;
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 npeers > 1 ? ", " : "",
				 diag_comm(in, g->peer_pid, g->peer_tid, comm, sizeof(comm)));
		}
	}
	/* shares of the observed time of the threads that had waits */
	observed = all.observed;
	if (observed && peer * 5 >= observed) {
		diag_caveat(d, "%s of the waiting threads' time was ended by other processes (%s)"
			    " whose role, client or upstream, the capture cannot tell (no socket"
			    " snapshot of them)", fmt_percent(pct, sizeof(pct), peer, observed),
			    names);
		d->unexplained = peer * 2 >= observed ? 2 : 1;
	}
	if (observed && none * 5 >= observed) {
		diag_caveat(d, "%s of the waiting threads' time has neither a known wait nor a"
			    " recorded wakeup", fmt_percent(pct, sizeof(pct), none, observed));
		if (d->unexplained < 1)
			d->unexplained = 1;
	}
	if (observed && recorder * 20 >= observed)
		diag_caveat(d, "%s of the waiting threads' time was ended by the recorder itself"
			    " (pid %u, META record.pid), which reads the traced processes' memory"
			    " maps in /proc: the observer's effect, not the workload's",
			    fmt_percent(pct, sizeof(pct), recorder, observed), in->recorder_pid);
}

int diagnose_wakers(const struct diag_input *in, struct diagnosis *d)
{
	struct wake_groups w = { 0 };
	struct hmap seen;          /* (network << 32 | pid, peer) -> enum ended_by */
	char addr[64] = "";

	if (!in->has_sched || !report_has_object(in->db, "wakeup_edges"))
		return 0;          /* no scheduler events, or imported before the view */
	if (load_groups(in, &w) < 0) {
		free(w.g);
		return -1;
	}
	hmap_init(&seen);
	for (size_t i = 0; i < w.len; i++) {
		struct wake_group *g = &w.g[i];
		g->by = classify(in, g);
		if (g->by == EB_PEER || (g->by == EB_NETWORK && g->peer_pid))
			g->by = relation_of(in, &seen, g->pid, g->peer_pid, g->by == EB_NETWORK,
					    addr, sizeof(addr));
	}
	hmap_free(&seen);
	service_contention(in, d, &w);
	upstream(in, d, &w, addr);
	idle(in, d, &w);
	unexplained(in, d, &w);
	free(w.g);
	return 0;
}
