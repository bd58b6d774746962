/* test_query.c - "perfcap-analyze query": tab, CSV (RFC 4180) and JSON
 * output with a header and typed values, SQL errors as one line with exit
 * status 1, read-only on databases and on captures, the same rows from a
 * capture as from its database; and the import progress line, drawn only
 * on a terminal. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_builder.h"
#include "run_tool.h"

struct fixture {
	char *dir, *cap, *db;
};

static struct fixture make_fixture(void)
{
	struct fixture f = { .dir = scratch_dir() };
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;

	f.cap = scratch_path(f.dir, "q.perfcap");
	f.db = scratch_path(f.dir, "q.db");
	cr_assert_eq(build_capture(f.cap, &spec, NULL), 0);
	run_analyze(&r, "import", "--no-local-files", f.cap, "-o", f.db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	return f;
}

static void free_fixture(struct fixture *f)
{
	free(f->cap);
	free(f->db);
	scratch_remove(f->dir);
}

static void expect_query(const char *db, const char *sql, const char *format,
			 const char *want)
{
	struct tool_result r;

	if (format)
		run_analyze(&r, "query", db, sql, "--format", format, NULL);
	else
		run_analyze(&r, "query", db, sql, NULL);
	cr_expect_eq(r.status, 0, "%s: %s", sql, r.err);
	cr_expect_str_eq(r.out, want, "%s", sql);
	cr_expect_str_empty(r.err);
	tool_result_free(&r);
}

Test(query, tab_is_the_default)
{
	struct fixture f = make_fixture();

	expect_query(f.db, "SELECT 1 AS a, 'x y' AS b, NULL AS c", NULL, "a\tb\tc\n1\tx y\t\n");
	expect_query(f.db, "SELECT 'p' || char(9) || 'q' || char(10) || '\\' AS t", "tab",
		     "t\np\\tq\\n\\\\\n");
	expect_query(f.db, "SELECT count(*) AS n FROM samples", "tab", "n\n400\n");
	expect_query(f.db, "SELECT name FROM syscall_names WHERE nr < 2 ORDER BY nr", NULL,
		     "name\nread\nwrite\n");
	free_fixture(&f);
}

Test(query, csv_follows_rfc4180)
{
	struct fixture f = make_fixture();

	expect_query(f.db, "SELECT 'a,b' AS x, 'say \"hi\"' AS y, NULL AS z, '' AS w,"
		     " 'l1' || char(10) || 'l2' AS v, 2.5 AS r", "csv",
		     "x,y,z,w,v,r\r\n\"a,b\",\"say \"\"hi\"\"\",,\"\",\"l1\nl2\",2.5\r\n");
	free_fixture(&f);
}

Test(query, json_has_typed_values)
{
	struct fixture f = make_fixture();

	expect_query(f.db, "SELECT 1 AS i, 2.5 AS r, 'caf\xc3\xa9 \"q\"' AS t, NULL AS n,"
		     " x'00ff' AS b, CAST(x'ff41' AS TEXT) AS bad, 1e999 AS inf", "json",
		     "[\n{\"i\":1,\"r\":2.5,\"t\":\"caf\xc3\xa9 \\\"q\\\"\",\"n\":null,"
		     "\"b\":\"00ff\",\"bad\":\"\\ufffdA\",\"inf\":null}\n]\n");
	expect_query(f.db, "SELECT 1 WHERE 0", "json", "[]\n");
	expect_query(f.db, "SELECT pid, count(*) AS n FROM samples GROUP BY pid", "json",
		     "[\n{\"pid\":100,\"n\":400}\n]\n");
	free_fixture(&f);
}

Test(query, several_statements)
{
	struct fixture f = make_fixture();

	expect_query(f.db, "SELECT 1 AS a; SELECT 2 AS b;", NULL, "a\n1\nb\n2\n");
	free_fixture(&f);
}

static void expect_error(const char *input, const char *sql, const char *message)
{
	struct tool_result r;

	run_analyze(&r, "query", input, sql, NULL);
	cr_expect_eq(r.status, 1, "%s", sql);
	cr_expect(strstr(r.err, message), "%s: %s", sql, r.err);
	cr_expect_eq(count_lines_with(r.err, ""), 1, "one line: %s", r.err);
	cr_expect_str_empty(r.out);
	tool_result_free(&r);
}

Test(query, errors_are_one_line_and_exit_1)
{
	struct fixture f = make_fixture();
	struct tool_result r;

	expect_error(f.db, "SELECT * FROM nope", "perfcap-analyze: query: no such table: nope");
	expect_error(f.db, "SELEC 1", "syntax error");
	expect_error(f.db, "DELETE FROM samples", "only read-only statements");
	expect_error(f.cap, "CREATE TABLE t (x)", "only read-only statements");
	expect_error(f.db, "CREATE TEMP TABLE t (x)", "only read-only statements");
	run_analyze(&r, "query", f.db, "SELECT 1", "--format", "xml", NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	run_analyze(&r, "query", f.db, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	free_fixture(&f);
}

Test(query, capture_and_database_give_the_same_rows)
{
	struct fixture f = make_fixture();
	const char *sql = "SELECT f.name, sum(c.count) AS n FROM sample_counts c"
			  " JOIN stack_frames sf ON sf.stack_id = c.ustack_id AND sf.position = 0"
			  " JOIN frames f USING (frame_id) GROUP BY f.name ORDER BY n DESC";
	struct tool_result a, b;

	run_analyze(&a, "query", "--no-local-files", f.cap, sql, "--format", "csv", NULL);
	run_analyze(&b, "query", f.db, sql, "--format", "csv", NULL);
	cr_expect_eq(a.status, 0, "%s", a.err);
	cr_expect_str_eq(a.out, "name,n\r\nA,300\r\nB,100\r\n");
	cr_expect_str_eq(a.out, b.out);
	tool_result_free(&a);
	tool_result_free(&b);
	free_fixture(&f);
}

/* Runs import with stderr on a pseudo-terminal; returns what it printed. */
static char *import_on_terminal(const char *cap, const char *db)
{
	const char *tool = getenv("PERFCAP_ANALYZE");
	static char buf[8192];
	size_t len = 0;
	int master, status;
	ssize_t n;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);

	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(tool, tool, "import", "--no-local-files", "-f", cap, "-o", db, (char *)NULL);
		_exit(127);
	}
	while (len + 1 < sizeof(buf) && (n = read(master, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	waitpid(pid, &status, 0);
	close(master);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", buf);
	return buf;
}

Test(query, progress_line_only_on_a_terminal)
{
	struct fixture f = make_fixture();
	const char *err = import_on_terminal(f.cap, f.db);

	cr_expect(strstr(err, "importing: "), "%s", err);
	cr_expect(strstr(err, "events/s"), "%s", err);
	cr_expect(strstr(err, "\r\033[K"), "the line is erased at the end");
	free_fixture(&f);
}
