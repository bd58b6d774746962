/* conn_relation.c - prints what analyze/query/connections.c says of two
 * processes of an imported database, for conn_snapshot.sh:
 *   conn_relation DB SERVICE_PID PEER_PID
 *     -> "KIND ADDR CLIENT_CONNS UPSTREAM_CONNS" (ADDR "-" when none)
 *   conn_relation DB PID
 *     -> one "ADDR CONNECTIONS OWNER_PID" line per outbound destination */
#include <stdio.h>
#include <stdlib.h>

#include "query/connections.h"

int main(int argc, char **argv)
{
	struct conn_relation r;
	struct conn_peer *peers;
	sqlite3 *db;
	size_t n;
	int rc = 1;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: conn_relation DB SERVICE_PID [PEER_PID]\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	if (argc == 4 && connections_relation(db, (uint32_t)atoi(argv[2]),
					      (uint32_t)atoi(argv[3]), &r) == 0) {
		printf("%s %s %lld %lld\n", conn_kind_name(r.kind), r.addr[0] ? r.addr : "-",
		       (long long)r.client_conns, (long long)r.upstream_conns);
		rc = 0;
	} else if (argc == 3 &&
		   connections_outbound(db, (uint32_t)atoi(argv[2]), &peers, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			printf("%s %lld %u\n", peers[i].addr, (long long)peers[i].connections,
			       peers[i].pid);
		free(peers);
		rc = 0;
	}
	sqlite3_close(db);
	return rc;
}
