/* socket_snapshot.c - the sockets of the traced processes and the
 * processes at the other end of their local connections, read from /proc
 * (socket_snapshot.h says what and when).
 *
 * One snapshot:
 *   1. for each traced pid: the tables of its network namespace (read once
 *      per namespace) indexed by inode; its socket fds looked up there, one
 *      SOCKET record each (unix and other sockets are not in the tables and
 *      are skipped);
 *   2. for each TCP connection of theirs, the reverse tuple in the same
 *      table: found, with an inode no traced process holds, it is the end
 *      of a local peer, to be found; and every listening TCP socket of the
 *      namespace that no traced process holds (who listens is a server,
 *      an upstream the service may connect to between two snapshots);
 *   3. one pass over /proc/(pid)/fd of every other process, until every end
 *      is found or the budget is spent: a process holding one gets SOCKET
 *      records (PEER) for it and for its listening sockets, and a PROC.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "socket_snapshot.h"
#include "util/sockinfo.h"
#include "util/util.h"

/* The sockets of one network namespace. */
struct ns_table {
	uint64_t netns;
	struct sock_entry *e;
	uint32_t n, cap;
	struct u64_table by_inode;  /* inode -> index */
	struct u64_table by_tuple;  /* tuple_hash -> index (collisions: scan) */
	bool loaded;
};

/* A local connection end to find an owner for. */
struct wanted {
	uint64_t inode;
	uint32_t ns;                /* index of its ns_table */
	bool found;
};

/* One socket fd of a process being scanned. */
struct fd_inode {
	int fd;
	uint64_t inode;
};

struct snapshot_run {
	struct socket_snapshot *s;
	struct consumer *c;
	uint64_t ts;
	struct ns_table *ns;
	uint32_t nns, ns_cap;
	struct u64_table traced;    /* pid -> 1: the processes of this snapshot */
	struct u64_table followed;  /* pid -> 1: other followed processes (a
				     * snapshot of new ones only): their ends are
				     * found, not written */
	struct u64_table owned;     /* inodes held by traced processes -> 1 */
	struct wanted *want;
	uint32_t nwant, want_cap, nfound;
	struct u64_table want_by_inode; /* inode -> index in want */
	/* the process being read */
	struct fd_inode *fds;
	uint32_t nfds, fds_cap;
};

void socket_snapshot_init(struct socket_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void socket_snapshot_free(struct socket_snapshot *s)
{
	u64_table_free(&s->described);
	u64_table_free(&s->known);
	memset(s, 0, sizeof(*s));
}

/* ---- addresses ------------------------------------------------------------ */

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The address as compared across families: an IPv4-mapped IPv6 address
 * (a v6 socket talking to a v4 one) is its IPv4 address. */
static void norm_addr(const struct sock_entry *e, const uint8_t *addr, uint8_t out[17])
{
	memset(out, 0, 17);
	if (e->family == 10 && memcmp(addr, v4_mapped, 12) != 0) {
		out[0] = 6;
		memcpy(out + 1, addr, 16);
	} else {
		out[0] = 4;
		memcpy(out + 1, e->family == 10 ? addr + 12 : addr, 4);
	}
}

/* FNV-1a over (protocol, local, remote) as normalized. */
static uint64_t tuple_hash(uint16_t protocol, const uint8_t l[17], uint16_t lport,
			   const uint8_t r[17], uint16_t rport)
{
	uint64_t h = 1469598103934665603ull;
	uint8_t buf[2 + 17 + 2 + 17 + 2];

	memcpy(buf, &protocol, 2);
	memcpy(buf + 2, l, 17);
	memcpy(buf + 19, &lport, 2);
	memcpy(buf + 21, r, 17);
	memcpy(buf + 38, &rport, 2);
	for (size_t i = 0; i < sizeof(buf); i++)
		h = (h ^ buf[i]) * 1099511628211ull;
	return h;
}

static uint64_t entry_hash(const struct sock_entry *e)
{
	uint8_t l[17], r[17];

	norm_addr(e, e->laddr, l);
	norm_addr(e, e->raddr, r);
	return tuple_hash(e->protocol, l, e->lport, r, e->rport);
}

/* True if b is a's connection seen from the other end. */
static bool is_reverse(const struct sock_entry *a, const struct sock_entry *b)
{
	uint8_t al[17], ar[17], bl[17], br[17];

	norm_addr(a, a->laddr, al);
	norm_addr(a, a->raddr, ar);
	norm_addr(b, b->laddr, bl);
	norm_addr(b, b->raddr, br);
	return a->protocol == b->protocol && a->lport == b->rport && a->rport == b->lport &&
	       memcmp(al, br, 17) == 0 && memcmp(ar, bl, 17) == 0;
}

/* ---- namespace tables ------------------------------------------------------ */

static int add_entry(void *ctx, const struct sock_entry *e)
{
	struct ns_table *t = ctx;
	struct sock_entry *grown = array_reserve(t->e, &t->cap, t->n + 1, sizeof(*t->e));

	if (!grown)
		return -ENOMEM;
	t->e = grown;
	t->e[t->n] = *e;
	if (e->inode && u64_table_put(&t->by_inode, e->inode, t->n))
		return -ENOMEM;
	if (u64_table_get(&t->by_tuple, entry_hash(e)) == U64_TABLE_EMPTY &&
	    u64_table_put(&t->by_tuple, entry_hash(e), t->n))
		return -ENOMEM;
	t->n++;
	return 0;
}

/* Reads t's tables through pid's /proc/PID/net (again, if an earlier
 * reader exited half-way). */
static bool load_table(struct ns_table *t, uint32_t pid)
{
	t->n = 0;
	u64_table_free(&t->by_inode);
	u64_table_free(&t->by_tuple);
	t->loaded = sockinfo_for_each_entry(pid, add_entry, t) == 0;
	return t->loaded;
}

/* The index of pid's namespace table, read on first use; UINT32_MAX if
 * it cannot be read. */
static uint32_t ns_of(struct snapshot_run *r, uint32_t pid)
{
	uint64_t netns = sockinfo_netns(pid);
	struct ns_table *t, *grown;

	if (!netns)
		return UINT32_MAX;
	for (uint32_t i = 0; i < r->nns; i++)
		if (r->ns[i].netns == netns)
			return r->ns[i].loaded || load_table(&r->ns[i], pid) ? i : UINT32_MAX;
	grown = array_reserve(r->ns, &r->ns_cap, r->nns + 1, sizeof(*r->ns));
	if (!grown) {
		r->s->stats.records_failed++;
		return UINT32_MAX;
	}
	r->ns = grown;
	t = &r->ns[r->nns++];
	memset(t, 0, sizeof(*t));
	t->netns = netns;
	return load_table(t, pid) ? r->nns - 1 : UINT32_MAX;
}

static const struct sock_entry *by_inode(const struct ns_table *t, uint64_t inode)
{
	uint32_t i = u64_table_get(&t->by_inode, inode);

	return i == U64_TABLE_EMPTY ? NULL : &t->e[i];
}

/* The other end of connection e in t, or NULL. */
static const struct sock_entry *reverse_of(const struct ns_table *t, const struct sock_entry *e)
{
	uint8_t l[17], r[17];
	uint32_t i;

	norm_addr(e, e->laddr, l);
	norm_addr(e, e->raddr, r);
	i = u64_table_get(&t->by_tuple, tuple_hash(e->protocol, r, e->rport, l, e->lport));
	if (i != U64_TABLE_EMPTY && is_reverse(e, &t->e[i]))
		return &t->e[i];
	if (i == U64_TABLE_EMPTY)
		return NULL;
	for (i = 0; i < t->n; i++) /* a hash collision: rare */
		if (is_reverse(e, &t->e[i]))
			return &t->e[i];
	return NULL;
}

static void free_tables(struct snapshot_run *r)
{
	for (uint32_t i = 0; i < r->nns; i++) {
		free(r->ns[i].e);
		u64_table_free(&r->ns[i].by_inode);
		u64_table_free(&r->ns[i].by_tuple);
	}
	free(r->ns);
}

/* ---- records ----------------------------------------------------------------- */

static void emit(struct snapshot_run *r, uint32_t pid, int fd, const struct sock_entry *e,
		 uint16_t flags)
{
	struct pc_rec_socket rec = {
		.h.type = PC_REC_SOCKET,
		.h.flags = flags,
		.ts = r->ts,
		.pid = pid,
		.tid = pid,
		.fd = fd,
		.family = e->family,
		.protocol = e->protocol,
		.cookie = e->inode,
		.sport = e->lport,
		.dport = e->rport,
		.state = e->state,
	};

	memcpy(rec.saddr, e->laddr, sizeof(rec.saddr));
	memcpy(rec.daddr, e->raddr, sizeof(rec.daddr));
	if (consumer_add_event(r->c, PERFCAP_SRC_PROC, &rec, sizeof(rec), r->ts)) {
		r->s->stats.records_failed++;
		return;
	}
	if (flags & PC_SOCK_F_PEER)
		r->s->stats.peer_sockets++;
	else
		r->s->stats.sockets++;
}

/* ---- 1, 2: the traced processes ------------------------------------------------ */

static int want_end(struct snapshot_run *r, uint64_t inode, uint32_t ns)
{
	struct wanted *grown;

	if (u64_table_get(&r->want_by_inode, inode) != U64_TABLE_EMPTY)
		return 0;
	grown = array_reserve(r->want, &r->want_cap, r->nwant + 1, sizeof(*r->want));
	if (!grown)
		return -ENOMEM;
	r->want = grown;
	if (u64_table_put(&r->want_by_inode, inode, r->nwant))
		return -ENOMEM;
	r->want[r->nwant++] = (struct wanted){ .inode = inode, .ns = ns };
	return 0;
}

static int note_scanned_fd(void *ctx, int fd, uint64_t inode);

/* The socket fds of pid, then (only if it has any: reading a namespace's
 * tables walks the kernel's whole hash tables) their tuples. */
static void read_traced(struct snapshot_run *r, uint32_t pid)
{
	uint32_t ns;

	r->nfds = 0;
	if (sockinfo_for_each_socket_fd(pid, note_scanned_fd, r) < 0) {
		r->s->stats.procs_unreadable++;
		return;
	}
	if (r->nfds == 0)
		return;
	ns = ns_of(r, pid);
	if (ns == UINT32_MAX) {
		r->s->stats.procs_unreadable++;
		return;
	}
	for (uint32_t i = 0; i < r->nfds; i++) {
		const struct sock_entry *e = by_inode(&r->ns[ns], r->fds[i].inode);

		if (!e)
			continue; /* unix, netlink, ...: not in the inet tables */
		emit(r, pid, r->fds[i].fd, e, PC_SOCK_F_SNAPSHOT);
		if (u64_table_put(&r->owned, r->fds[i].inode, 1))
			r->s->stats.records_failed++;
	}
}

/* The local ends of the traced processes' TCP connections that no traced
 * process holds, and every TCP listening socket of their namespaces that
 * no traced process holds: who listens is what tells an upstream (a
 * server the service may connect to, even between snapshots) from a
 * client (which listens on nothing). */
static void find_local_ends(struct snapshot_run *r)
{
	for (uint32_t n = 0; n < r->nns; n++) {
		const struct ns_table *t = &r->ns[n];

		for (uint32_t i = 0; i < t->n; i++) {
			const struct sock_entry *e = &t->e[i], *other;

			if (e->protocol == 6 && e->state == SOCK_TCP_LISTEN && e->inode &&
			    u64_table_get(&r->owned, e->inode) == U64_TABLE_EMPTY) {
				if (want_end(r, e->inode, n))
					r->s->stats.records_failed++;
				continue;
			}
			if (e->protocol != 6 || e->state == SOCK_TCP_LISTEN || !e->inode ||
			    u64_table_get(&r->owned, e->inode) == U64_TABLE_EMPTY)
				continue;
			other = reverse_of(t, e);
			if (!other || !other->inode ||
			    u64_table_get(&r->owned, other->inode) != U64_TABLE_EMPTY)
				continue;
			if (want_end(r, other->inode, n))
				r->s->stats.records_failed++;
		}
	}
}

/* ---- 3: the peer scan ------------------------------------------------------------ */

static int note_scanned_fd(void *ctx, int fd, uint64_t inode)
{
	struct snapshot_run *r = ctx;
	struct fd_inode *grown = array_reserve(r->fds, &r->fds_cap, r->nfds + 1, sizeof(*r->fds));

	if (!grown)
		return -ENOMEM;
	r->fds = grown;
	r->fds[r->nfds++] = (struct fd_inode){ .fd = fd, .inode = inode };
	return 0;
}

/* pid holds some wanted ends: they are found; unless pid is followed,
 * its records (those ends, and its listening sockets in their namespace)
 * and a PROC record. */
static void emit_peer(struct snapshot_run *r, uint32_t pid)
{
	bool write = u64_table_get(&r->followed, pid) == U64_TABLE_EMPTY;
	uint32_t ns = UINT32_MAX;

	for (uint32_t i = 0; i < r->nfds; i++) {
		uint32_t w = u64_table_get(&r->want_by_inode, r->fds[i].inode);

		if (w == U64_TABLE_EMPTY)
			continue;
		ns = r->want[w].ns;
		if (write)
			emit(r, pid, r->fds[i].fd, by_inode(&r->ns[ns], r->fds[i].inode),
			     PC_SOCK_F_SNAPSHOT | PC_SOCK_F_PEER);
		if (!r->want[w].found) {
			r->want[w].found = true;
			r->nfound++;
		}
	}
	for (uint32_t i = 0; write && i < r->nfds; i++) {
		const struct sock_entry *e = by_inode(&r->ns[ns], r->fds[i].inode);

		/* listening sockets not already written as wanted ends */
		if (e && e->protocol == 6 && e->state == SOCK_TCP_LISTEN &&
		    u64_table_get(&r->want_by_inode, r->fds[i].inode) == U64_TABLE_EMPTY)
			emit(r, pid, r->fds[i].fd, e, PC_SOCK_F_SNAPSHOT | PC_SOCK_F_PEER);
	}
	if (write && u64_table_get(&r->s->described, pid) == U64_TABLE_EMPTY &&
	    processes_describe_untraced(&r->c->processes, pid, r->ts) &&
	    u64_table_put(&r->s->described, pid, 1))
		r->s->stats.records_failed++;
}

static bool holds_wanted(const struct snapshot_run *r)
{
	for (uint32_t i = 0; i < r->nfds; i++)
		if (u64_table_get(&r->want_by_inode, r->fds[i].inode) != U64_TABLE_EMPTY)
			return true;
	return false;
}

static void scan_peers(struct snapshot_run *r)
{
	uint32_t self = (uint32_t)getpid();
	uint64_t start = monotonic_ns(), fds = 0;
	struct dirent *de;
	DIR *proc;

	if (r->nwant == 0 || !(proc = opendir("/proc")))
		return;
	while (r->nfound < r->nwant && (de = readdir(proc))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		int seen;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || *end || pid == self ||
		    u64_table_get(&r->traced, pid) != U64_TABLE_EMPTY)
			continue;
		if (fds >= SNAPSHOT_BUDGET_FDS || monotonic_ns() - start >= SNAPSHOT_BUDGET_NS) {
			r->s->stats.budget_hits++;
			break;
		}
		r->nfds = 0;
		seen = sockinfo_for_each_socket_fd((uint32_t)pid, note_scanned_fd, r);
		if (seen > 0)
			fds += (uint64_t)seen;
		if (holds_wanted(r))
			emit_peer(r, (uint32_t)pid);
	}
	closedir(proc);
	r->s->stats.fds_scanned += fds;
}

/* ---- one snapshot -------------------------------------------------------------- */

/* -a: the live processes the recorder has seen. */
static uint32_t *live_processes(const struct process_table *pt, uint32_t *n)
{
	uint32_t *pids = calloc(pt->nprocs ? pt->nprocs : 1, sizeof(*pids));

	*n = 0;
	for (uint32_t i = 0; pids && i < pt->nprocs; i++)
		if (!pt->procs[i].exited && pt->procs[i].pid)
			pids[(*n)++] = pt->procs[i].pid;
	return pids;
}

/* A snapshot of pids; followed (may be NULL) are the other processes
 * followed, whose sockets this snapshot does not write. */
static void take(struct socket_snapshot *s, struct consumer *c, const uint32_t *pids,
		 uint32_t npids, const uint32_t *followed, uint32_t nfollowed)
{
	struct snapshot_run r = { .s = s, .c = c };
	uint64_t start = monotonic_ns(), took, traced_ns;
	uint32_t *own = NULL;

	r.ts = start;
	if (!pids) {
		own = live_processes(&c->processes, &npids);
		pids = own;
	}
	for (uint32_t i = 0; pids && i < npids; i++)
		if (u64_table_put(&r.traced, pids[i], 1) || u64_table_put(&s->known, pids[i], 0))
			s->stats.records_failed++;
	for (uint32_t i = 0; followed && i < nfollowed; i++)
		if (u64_table_get(&r.traced, followed[i]) == U64_TABLE_EMPTY &&
		    u64_table_put(&r.followed, followed[i], 1))
			s->stats.records_failed++;
	for (uint32_t i = 0; pids && i < npids; i++)
		read_traced(&r, pids[i]);
	find_local_ends(&r);
	traced_ns = monotonic_ns() - start;
	scan_peers(&r);
	s->stats.peers_resolved += r.nfound;
	s->stats.peers_unresolved += r.nwant - r.nfound;
	s->stats.snapshots++;
	took = monotonic_ns() - start;
	s->stats.ns_total += took;
	if (took > s->stats.ns_max)
		s->stats.ns_max = took;
	verbose_line("socket snapshot: %u processes, %u local ends, %u found, %.1f ms "
		     "(%.1f ms the traced processes and their tables, %.1f ms the peer scan)",
		     npids, r.nwant, r.nfound, (double)took / 1e6, (double)traced_ns / 1e6,
		     (double)(took - traced_ns) / 1e6);
	free_tables(&r);
	free(r.want);
	free(r.fds);
	free(own);
	u64_table_free(&r.traced);
	u64_table_free(&r.followed);
	u64_table_free(&r.owned);
	u64_table_free(&r.want_by_inode);
}

/* socket_snapshot.known counts time in these (u32: 13 years of uptime) */
#define KNOWN_TICK_NS (100ull * 1000 * 1000)

void socket_snapshot_take(struct socket_snapshot *s, struct consumer *c,
			  const uint32_t *pids, uint32_t npids)
{
	take(s, c, pids, npids, NULL, 0);
}

void socket_snapshot_new(struct socket_snapshot *s, struct consumer *c,
			 const uint32_t *followed, uint32_t n, uint64_t now_ns)
{
	uint32_t tick = (uint32_t)(now_ns / KNOWN_TICK_NS) + 1; /* 0: done */
	uint32_t *batch = calloc(n ? n : 1, sizeof(*batch)), nbatch = 0;

	for (uint32_t i = 0; batch && i < n; i++) {
		uint32_t seen = u64_table_get(&s->known, followed[i]);

		if (seen == U64_TABLE_EMPTY) {
			if (u64_table_put(&s->known, followed[i], tick))
				s->stats.records_failed++;
		} else if (seen != 0 && (uint64_t)(tick - seen) * KNOWN_TICK_NS >=
			   SNAPSHOT_NEW_AFTER_NS) {
			batch[nbatch++] = followed[i];
		}
	}
	if (nbatch)
		take(s, c, batch, nbatch, followed, n);
	free(batch);
}
