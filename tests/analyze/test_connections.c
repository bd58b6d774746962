/* test_connections.c - the socket snapshots (SOCKET flag SNAPSHOT, format
 * 1.4) land in connections, not sockets, with their role decided at
 * import (analyze/import/connections.c); query/connections.c tells a
 * client from an upstream and lists a process's outbound peers; the
 * records count under the proc source, so a default capture does not
 * look like one with the net source. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "db_check.h"
#include "event_builder.h"
#include "run_tool.h"
#include "query/connections.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)
#define SNAP PC_SOCK_F_SNAPSHOT
#define PEER (PC_SOCK_F_SNAPSHOT | PC_SOCK_F_PEER)
enum { ESTABLISHED = 1, LISTEN = 10 };
enum { SERVICE = 100, CLIENT = 200, UPSTREAM = 300, BOTH = 400, V6CLIENT = 500 };

/* The service listens on 127.0.0.1:8080 and [::]:8443; CLIENT holds two
 * connections to 8080, V6CLIENT one to 8443 through an IPv4 socket (the
 * service's end is ::ffff:127.0.0.1); the service connects to UPSTREAM
 * (listening on 0.0.0.0:8081) and to a remote database; BOTH is a client
 * (to 8080) and an upstream (listening on 127.0.0.1:9000). */
static void one_snapshot(struct event_capture *ev, uint64_t ts)
{
	ev_socket_snapshot(ev, ts, SERVICE, 3, SNAP, "127.0.0.1", 8080, "0.0.0.0", 0, LISTEN, 11);
	ev_socket_snapshot(ev, ts, SERVICE, 4, SNAP, "::", 8443, "::", 0, LISTEN, 12);
	ev_socket_snapshot(ev, ts, SERVICE, 5, SNAP, "127.0.0.1", 8080, "127.0.0.1", 40001,
			   ESTABLISHED, 13);
	ev_socket_snapshot(ev, ts, SERVICE, 6, SNAP, "127.0.0.1", 8080, "127.0.0.1", 40002,
			   ESTABLISHED, 14);
	ev_socket_snapshot(ev, ts, SERVICE, 7, SNAP, "127.0.0.1", 50001, "127.0.0.1", 8081,
			   ESTABLISHED, 15);
	ev_socket_snapshot(ev, ts, SERVICE, 8, SNAP, "10.0.0.5", 50002, "10.1.1.1", 5432,
			   ESTABLISHED, 16);
	ev_socket_snapshot(ev, ts, SERVICE, 9, SNAP, "::ffff:127.0.0.1", 8443,
			   "::ffff:127.0.0.1", 40003, ESTABLISHED, 17);
	ev_socket_snapshot(ev, ts, SERVICE, 10, SNAP, "127.0.0.1", 8080, "127.0.0.1", 40004,
			   ESTABLISHED, 18);
	ev_socket_snapshot(ev, ts, SERVICE, 11, SNAP, "127.0.0.1", 50005, "127.0.0.1", 9000,
			   ESTABLISHED, 19);
	ev_socket_snapshot(ev, ts, CLIENT, 3, PEER, "127.0.0.1", 40001, "127.0.0.1", 8080,
			   ESTABLISHED, 21);
	ev_socket_snapshot(ev, ts, CLIENT, 4, PEER, "127.0.0.1", 40002, "127.0.0.1", 8080,
			   ESTABLISHED, 22);
	ev_socket_snapshot(ev, ts, UPSTREAM, 3, PEER, "0.0.0.0", 8081, "0.0.0.0", 0, LISTEN, 31);
	ev_socket_snapshot(ev, ts, UPSTREAM, 4, PEER, "127.0.0.1", 8081, "127.0.0.1", 50001,
			   ESTABLISHED, 32);
	ev_socket_snapshot(ev, ts, V6CLIENT, 3, PEER, "127.0.0.1", 40003, "127.0.0.1", 8443,
			   ESTABLISHED, 51);
	ev_socket_snapshot(ev, ts, BOTH, 3, PEER, "127.0.0.1", 9000, "0.0.0.0", 0, LISTEN, 41);
	ev_socket_snapshot(ev, ts, BOTH, 4, PEER, "127.0.0.1", 9000, "127.0.0.1", 50005,
			   ESTABLISHED, 42);
	ev_socket_snapshot(ev, ts, BOTH, 5, PEER, "127.0.0.1", 40004, "127.0.0.1", 8080,
			   ESTABLISHED, 43);
}

#define RECORDS_PER_SNAPSHOT 17

static sqlite3 *import_topology(void)
{
	static struct event_capture ev;
	char *dir = scratch_dir();
	sqlite3 *db;

	ev_init(&ev, T(0), T(100), "cpu,sched,block,waits");
	one_snapshot(&ev, T(1));
	one_snapshot(&ev, T(99));
	pc_buf_add_kv_u64(&ev.stats, "proc.events", 2 * RECORDS_PER_SNAPSHOT);
	db = import_events(dir, "topology", &ev, NULL);
	ev_free(&ev);
	scratch_remove(dir);	/* the open database stays readable */
	return db;
}

Test(connections, snapshots_fill_connections_with_roles)
{
	sqlite3 *db = import_topology();

	expect_int(db, "SELECT count(*) FROM sockets", 0);
	expect_int(db, "SELECT count(*) FROM connections", 2 * RECORDS_PER_SNAPSHOT);
	expect_int(db, "SELECT count(*) FROM connections WHERE peer = 1", 2 * 8);
	expect_text(db, "SELECT group_concat(fd || ':' || role, ' ') FROM (SELECT fd, role"
		    " FROM connections WHERE pid = 100 AND ts = (SELECT min(ts) FROM connections)"
		    " ORDER BY fd)",
		    "3:listen 4:listen 5:inbound 6:inbound 7:outbound 8:outbound 9:inbound"
		    " 10:inbound 11:outbound");
	/* the v4-mapped end reads as IPv4, family as recorded */
	expect_text(db, "SELECT family || ' ' || laddr || ':' || lport || ' ' || raddr"
		    " FROM connections WHERE pid = 100 AND fd = 9 LIMIT 1",
		    "10 127.0.0.1:8443 127.0.0.1");
	expect_text(db, "SELECT group_concat(role, ' ') FROM (SELECT role FROM connections"
		    " WHERE pid = 400 AND ts = (SELECT min(ts) FROM connections) ORDER BY fd)",
		    "listen inbound outbound");
	expect_int(db, "SELECT state FROM connections WHERE pid = 300 AND fd = 3 LIMIT 1", LISTEN);
	expect_int(db, "SELECT inode FROM connections WHERE pid = 300 AND fd = 4 LIMIT 1", 32);
	sqlite3_close(db);
}

Test(connections, counted_under_proc_not_net)
{
	sqlite3 *db = import_topology();

	expect_int(db, "SELECT value FROM quality WHERE source = 'proc' AND key = 'records'",
		   2 * RECORDS_PER_SNAPSHOT);
	expect_int(db, "SELECT value FROM quality WHERE source = 'proc'"
		   " AND key = 'records.socket'", 2 * RECORDS_PER_SNAPSHOT);
	expect_int(db, "SELECT count(*) FROM quality WHERE source = 'net'", 0);
	expect_int(db, "SELECT lost_kernel + lost_user FROM data_quality WHERE source = 'proc'", 0);
	sqlite3_close(db);
}

Test(connections, relation_tells_clients_from_upstreams)
{
	sqlite3 *db = import_topology();
	struct conn_relation r;

	cr_assert_eq(connections_relation(db, SERVICE, CLIENT, &r), 0);
	cr_expect_eq(r.kind, CONN_CLIENT);
	cr_expect_eq(r.client_conns, 2);
	cr_expect_eq(r.upstream_conns, 0);
	cr_expect_str_eq(r.addr, "");

	cr_assert_eq(connections_relation(db, SERVICE, UPSTREAM, &r), 0);
	cr_expect_eq(r.kind, CONN_UPSTREAM);
	cr_expect_eq(r.upstream_conns, 1);
	cr_expect_str_eq(r.addr, "127.0.0.1:8081");

	cr_assert_eq(connections_relation(db, SERVICE, V6CLIENT, &r), 0);
	cr_expect_eq(r.kind, CONN_CLIENT, "a v4 client of a [::] listener: %s",
		     conn_kind_name(r.kind));

	cr_assert_eq(connections_relation(db, SERVICE, BOTH, &r), 0);
	cr_expect_eq(r.kind, CONN_BOTH);
	cr_expect_str_eq(r.addr, "127.0.0.1:9000");
	cr_expect_eq(r.client_conns, 1);
	cr_expect_eq(r.upstream_conns, 1);

	cr_assert_eq(connections_relation(db, SERVICE, 999, &r), 0);
	cr_expect_eq(r.kind, CONN_UNKNOWN);
	/* seen from the other side: the service is the upstream's client */
	cr_assert_eq(connections_relation(db, UPSTREAM, SERVICE, &r), 0);
	cr_expect_eq(r.kind, CONN_CLIENT);
	sqlite3_close(db);
}

Test(connections, outbound_lists_destinations_and_owners)
{
	sqlite3 *db = import_topology();
	struct conn_peer *p;
	size_t n;
	char line[512] = "";

	cr_assert_eq(connections_outbound(db, SERVICE, &p, &n), 0);
	for (size_t i = 0; i < n; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%s=%lld/%u",
			 i ? " " : "", p[i].addr, (long long)p[i].connections, p[i].pid);
	cr_expect_str_eq(line, "10.1.1.1:5432=1/0 127.0.0.1:8081=1/300 127.0.0.1:9000=1/400");
	free(p);
	sqlite3_close(db);
}
