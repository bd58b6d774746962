/* connections.c - the role of each row of connections (the sockets the
 * recorder's /proc snapshots saw, format 1.4), decided once every row is
 * in, since a process's listening socket may come after its connections:
 *   listen    a TCP socket in LISTEN
 *   bound     a UDP socket with no remote end
 *   inbound   its local port is one a recorded process listens on (TCP
 *             LISTEN, or bound UDP), in any snapshot: a client connected
 *             to it. Any process, not only its own: a pre-forking server
 *             (postgres, Apache's prefork) accepts in one process and
 *             serves in a child that has closed the listening socket; an
 *             outbound connection's local port is an ephemeral one, which
 *             the kernel does not hand out while a socket listens on it
 *   outbound  otherwise: the process connected out
 * query/connections.c reads the table. */
#include "db/db.h"
#include "load_state.h"

static const char roles_sql[] =
	"CREATE INDEX IF NOT EXISTS connections_by_pid ON connections (pid, lport);"
	"UPDATE connections SET role = CASE"
	"  WHEN protocol = 6 AND state = 10 THEN 'listen'"
	"  WHEN protocol = 17 AND rport = 0 THEN 'bound'"
	"  WHEN (protocol, lport) IN (SELECT protocol, lport FROM connections"
	"    WHERE (protocol = 6 AND state = 10) OR (protocol = 17 AND rport = 0))"
	"    THEN 'inbound'"
	"  ELSE 'outbound' END;";

int connections_set_roles(sqlite3 *db)
{
	return db_exec(db, roles_sql);
}
