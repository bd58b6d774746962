/* connections.c - clients and upstreams of a process (connections.h),
 * from the roles import/connections.c gave the rows: a client's socket is
 * `outbound` and its remote port one the service has `listen` (or
 * `inbound`) rows for; an upstream's socket on that port is `listen` or
 * `inbound`. A wildcard listening address (0.0.0.0, ::) matches any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "connections.h"

/* Does process ?P (its rows p) serve the port of connection s? */
#define SERVES(P) \
	"EXISTS (SELECT 1 FROM connections p WHERE p.pid = " P " AND p.protocol = 6" \
	"  AND p.lport = s.rport AND p.role IN ('listen', 'inbound')" \
	"  AND (p.laddr = s.raddr OR (p.role = 'listen' AND p.laddr IN ('0.0.0.0', '::'))))"

/* distinct outbound TCP connections of ?1 */
#define OUTBOUND_OF_1 \
	"(SELECT DISTINCT laddr, lport, raddr, rport FROM connections" \
	"  WHERE pid = ?1 AND protocol = 6 AND role = 'outbound')"

static const char clients_sql[] =
	"SELECT count(*) FROM (SELECT DISTINCT laddr, lport, raddr, rport FROM connections"
	"  WHERE pid = ?2 AND protocol = 6 AND role = 'outbound') s"
	" WHERE " SERVES("?1");

static const char upstreams_sql[] =
	"SELECT s.raddr, s.rport, count(*) AS n FROM " OUTBOUND_OF_1 " s"
	" WHERE " SERVES("?2")
	" GROUP BY s.raddr, s.rport ORDER BY n DESC, s.raddr, s.rport";

static const char outbound_sql[] =
	"SELECT s.raddr, s.rport, count(*) AS n,"
	"  (SELECT p.pid FROM connections p WHERE p.pid != ?1 AND p.protocol = 6"
	"    AND p.lport = s.rport AND p.role IN ('listen', 'inbound')"
	"    AND (p.laddr = s.raddr OR (p.role = 'listen' AND p.laddr IN ('0.0.0.0', '::')))"
	"    ORDER BY p.role = 'inbound' DESC, p.peer, p.ts LIMIT 1)"
	" FROM " OUTBOUND_OF_1 " s"
	" GROUP BY s.raddr, s.rport ORDER BY n DESC, s.raddr, s.rport";

const char *conn_kind_name(enum conn_kind kind)
{
	switch (kind) {
	case CONN_CLIENT:   return "client";
	case CONN_UPSTREAM: return "upstream";
	case CONN_BOTH:     return "both";
	default:            return "unknown";
	}
}

static int has_table(sqlite3 *db)
{
	return db_lookup_int(db, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
			     " AND name = ?1", "connections", NULL, 0) == 1;
}

/* "addr:port", IPv6 in brackets. */
static void format_endpoint(char *buf, size_t len, const unsigned char *addr, int port)
{
	const char *a = addr ? (const char *)addr : "?";

	if (strchr(a, ':'))
		snprintf(buf, len, "[%s]:%d", a, port);
	else
		snprintf(buf, len, "%s:%d", a, port);
}

static sqlite3_stmt *prepare_pids(sqlite3 *db, const char *sql, uint32_t a, uint32_t b)
{
	sqlite3_stmt *st = db_prepare(db, sql);

	if (st) {
		sqlite3_bind_int64(st, 1, a);
		sqlite3_bind_int64(st, 2, b);
	}
	return st;
}

static int count_clients(sqlite3 *db, uint32_t service, uint32_t peer, int64_t *n)
{
	sqlite3_stmt *st = prepare_pids(db, clients_sql, service, peer);
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int count_upstream(sqlite3 *db, uint32_t service, uint32_t peer,
			  struct conn_relation *out)
{
	sqlite3_stmt *st = prepare_pids(db, upstreams_sql, service, peer);
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!out->addr[0])
			format_endpoint(out->addr, sizeof(out->addr), sqlite3_column_text(st, 0),
					sqlite3_column_int(st, 1));
		out->upstream_conns += sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int connections_relation(sqlite3 *db, uint32_t service_pid, uint32_t peer_pid,
			 struct conn_relation *out)
{
	memset(out, 0, sizeof(*out));
	if (!has_table(db))
		return 0;
	if (count_clients(db, service_pid, peer_pid, &out->client_conns) < 0 ||
	    count_upstream(db, service_pid, peer_pid, out) < 0)
		return -1;
	if (out->client_conns && out->upstream_conns)
		out->kind = CONN_BOTH;
	else if (out->client_conns)
		out->kind = CONN_CLIENT;
	else if (out->upstream_conns)
		out->kind = CONN_UPSTREAM;
	return 0;
}

int connections_outbound(sqlite3 *db, uint32_t pid, struct conn_peer **out, size_t *n)
{
	struct conn_peer *peers = NULL, *grown;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	*n = 0;
	if (!has_table(db))
		return 0;
	st = prepare_pids(db, outbound_sql, pid, 0);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(peers, cap * sizeof(*peers));
			if (!grown)
				break;
			peers = grown;
		}
		format_endpoint(peers[len].addr, sizeof(peers[len].addr),
				sqlite3_column_text(st, 0), sqlite3_column_int(st, 1));
		peers[len].connections = sqlite3_column_int64(st, 2);
		peers[len].pid = (uint32_t)sqlite3_column_int64(st, 3);
		len++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(peers);
		return -1;
	}
	*out = peers;
	*n = len;
	return 0;
}
