/* test_exe_alias.c - the main executable is named as it was started
 * (analyze/import/exe_alias.c): Debian's redis-server symlink, a process
 * title rewritten into argv[0], and the cases that must keep the resolved
 * name. */
#include <criterion/criterion.h>

#include "import/exe_alias.h"

static const char *alias(const char *exe, const char *argv0, const char *comm)
{
	static char out[256];

	return exe_alias_of(exe, argv0, comm, out, sizeof(out)) ? out : NULL;
}

Test(exe_alias, symlinked_server_started_by_bare_name)
{
	/* redis rewrites argv[0] into its title "redis-server 127.0.0.1:6379" */
	cr_expect_str_eq(alias("/usr/bin/redis-check-rdb", "redis-server 127.0.0.1:6379",
			       "redis-server"), "/usr/bin/redis-server");
}

Test(exe_alias, started_by_absolute_path)
{
	cr_expect_str_eq(alias("/usr/lib/postgresql/15/bin/postgres", "/usr/bin/pg", "pg"),
			 "/usr/bin/pg");
}

Test(exe_alias, same_name_or_untrusted_argv0_keep_the_file)
{
	cr_expect_null(alias("/usr/bin/nginx", "nginx: worker process", "nginx"));
	cr_expect_null(alias("/tmp/app", "./app", "app"));
	/* argv[0] does not agree with comm (set by the kernel from the path
	 * given to execve): a rewritten title, not a name */
	cr_expect_null(alias("/usr/bin/postgres", "postgres: checkpointer", "postgres"));
	cr_expect_null(alias("/usr/bin/python3.11", "myscript", "python3"));
	cr_expect_null(alias("/usr/bin/x", "", "x"));
	cr_expect_null(alias("relative/x", "y", "y"));
}

Test(exe_alias, comm_truncated_to_15_bytes)
{
	cr_expect_str_eq(alias("/opt/a/real-binary", "a-very-long-server-name --flag",
			       "a-very-long-ser"), "/opt/a/a-very-long-server-name");
}

/* exe_aliases_init reads every process at once: each pid's alias comes
 * from its last processes row (by ts, whatever the rows' order), a pid
 * without one, or whose last row has none, gets NULL, and only the
 * executable's own path is renamed. */
Test(exe_alias, every_pid_from_its_last_row)
{
	sqlite3 *db = NULL;
	struct exe_aliases a;

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db,
		"CREATE TABLE processes (ts INTEGER, pid INTEGER, ppid INTEGER, start_ns INTEGER,"
		" comm TEXT, exe TEXT, cmdline TEXT);"
		/* 10: redis started as redis-server, the later row first in the table */
		"INSERT INTO processes VALUES (20, 10, 1, 0, 'redis-server',"
		" '/usr/bin/redis-check-rdb', 'redis-server 127.0.0.1:6379');"
		"INSERT INTO processes VALUES (5, 10, 1, 0, 'x', '/usr/bin/x', 'x');"
		/* 11: aliased first, then exec'd into something that is not */
		"INSERT INTO processes VALUES (1, 11, 1, 0, 'redis-server',"
		" '/usr/bin/redis-check-rdb', 'redis-server');"
		"INSERT INTO processes VALUES (9, 11, 1, 0, 'sh', '/usr/bin/dash', 'sh -c x');",
		NULL, NULL, NULL), SQLITE_OK);
	cr_assert_eq(exe_aliases_init(&a, db), 0);
	cr_expect_str_eq(exe_alias(&a, 10, "/usr/bin/redis-check-rdb"), "/usr/bin/redis-server");
	cr_expect_null(exe_alias(&a, 10, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	cr_expect_null(exe_alias(&a, 11, "/usr/bin/redis-check-rdb"));
	cr_expect_null(exe_alias(&a, 12, "/usr/bin/redis-check-rdb"));
	exe_aliases_free(&a);
	sqlite3_close(db);
}
