/* connections.h - who is a client of a process and who is an upstream it
 * depends on, from the connections table (the recorder's /proc socket
 * snapshots, in every default recording since format 1.4; docs/schema.md).
 *
 * A peer is a CLIENT of the service when it holds a TCP connection to a
 * port the service listens on (its wakeups of the service mean "work
 * arrived"); an UPSTREAM when the service holds an outbound connection to
 * a port the peer listens on, or to a socket the peer holds (the service
 * waits for it: a cause, named by addr). Both sides may hold several
 * connections; each distinct tuple counts once across snapshots. A
 * database without the table (imported before) answers CONN_UNKNOWN. */
#ifndef ANALYZE_QUERY_CONNECTIONS_H
#define ANALYZE_QUERY_CONNECTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#define CONN_ADDR_LEN 64   /* "[ffff:...:ffff]:65535" fits */

enum conn_kind {
	CONN_UNKNOWN = 0,      /* no connection between them was seen */
	CONN_CLIENT,           /* the peer connected to the service */
	CONN_UPSTREAM,         /* the service connected to the peer */
	CONN_BOTH,
};

struct conn_relation {
	enum conn_kind kind;
	char addr[CONN_ADDR_LEN]; /* upstream: the address the service connects to,
				   * "127.0.0.1:8081" ("[::1]:8081"), the one with most
				   * connections; else "" */
	int64_t client_conns;     /* the peer's connections to the service's ports (a
				   * listening socket shared by several workers: all
				   * of them, whichever worker holds the other end) */
	int64_t upstream_conns;   /* the service's connections to the peer */
};

/* Relation of peer_pid to service_pid. 0, or -1 on a database error. */
int connections_relation(sqlite3 *db, uint32_t service_pid, uint32_t peer_pid,
			 struct conn_relation *out);

/* One destination of a process's outbound TCP connections. */
struct conn_peer {
	char addr[CONN_ADDR_LEN]; /* remote address:port */
	int64_t connections;      /* distinct connections to it */
	uint32_t pid;             /* a process listening there or holding the other
				   * end, 0 if not seen (remote host, or not found) */
};

/* The outbound destinations of pid, most connections first, in a malloc'd
 * array (*n entries; NULL when none). 0, or -1 on a database error. */
int connections_outbound(sqlite3 *db, uint32_t pid, struct conn_peer **out, size_t *n);

/* "client", "upstream", "both", "unknown" */
const char *conn_kind_name(enum conn_kind kind);

#endif /* ANALYZE_QUERY_CONNECTIONS_H */
