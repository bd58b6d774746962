/* cmd_query.c - "perfcap-analyze query DB|CAP SQL": runs SQL read-only on
 * a database made by "import" (opened SQLITE_OPEN_READONLY) or on a
 * capture imported into memory (then PRAGMA query_only), and prints each
 * statement's rows as tab-separated text, CSV or JSON (query_output.c).
 * A statement that would write, or any SQL error, is one line on stderr
 * and exit status 1. */
#include <argp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "load_options.h"
#include "db/db.h"
#include "import/open_input.h"
#include "query/query_output.h"

static const char query_doc[] =
"Run SQL on a database made by 'perfcap-analyze import', or on a capture "
"(imported into memory first). Read-only. Prints the column names, then "
"one line per row. Tables and views: docs/schema.md."
"\v"
"Formats: tab (default; NULL is empty, tab/newline/backslash escaped as \\t "
"\\n \\\\), csv (RFC 4180), json (an array of objects with typed values). "
"Several statements separated by ';' print one result each.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze query run.db 'SELECT name, count(*) FROM syscall_intervals"
" GROUP BY name ORDER BY 2 DESC LIMIT 10'\n"
"  perfcap-analyze query run.perfcap 'SELECT * FROM data_quality' --format csv\n"
"  perfcap-analyze query run.db 'SELECT tid, state, sum(duration) FROM"
" thread_states GROUP BY 1, 2' --format json\n";

static const struct argp_option query_options[] = {
	{ "format", 'F', "FORMAT", 0, "tab (default), csv or json", 0 },
	{ 0 },
};

struct query_args {
	const char *input;
	const char *sql;
	enum query_format format;
	struct load_args load;
};

static error_t parse_query(int key, char *arg, struct argp_state *state)
{
	struct query_args *args = state->input;

	switch (key) {
	case 'F':
		if (query_format_parse(arg, &args->format) < 0)
			argp_error(state, "--format: '%s' is not tab, csv or json", arg);
		return 0;
	case ARGP_KEY_INIT: load_args_attach(state, &args->load); return 0;
	case ARGP_KEY_ARG:
		if (!args->input)
			args->input = arg;
		else if (!args->sql)
			args->sql = arg;
		else
			argp_error(state, "too many arguments (quote the SQL)");
		return 0;
	case ARGP_KEY_END:
		if (!args->input || !args->sql)
			argp_error(state, "need DB|CAPTURE and SQL");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int sql_error(sqlite3 *db)
{
	fprintf(stderr, "perfcap-analyze: query: %s\n", sqlite3_errmsg(db));
	return 1;
}

/* Prepares, checks and prints each statement of sql in turn. */
static int run_statements(sqlite3 *db, const char *sql, enum query_format format)
{
	const char *next = sql;

	while (next && *next) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (sqlite3_prepare_v2(db, next, -1, &st, &next) != SQLITE_OK)
			return sql_error(db);
		if (!st)          /* only whitespace or comments left */
			break;
		if (!sqlite3_stmt_readonly(st)) {
			sqlite3_finalize(st);
			fprintf(stderr, "perfcap-analyze: query: only read-only statements"
				" are allowed\n");
			return 1;
		}
		rc = query_print(st, format, stdout);
		sqlite3_finalize(st);
		if (rc != 0)
			return sql_error(db);
	}
	return 0;
}

int cmd_query(int argc, char **argv)
{
	const struct argp argp = {
		.options = query_options, .parser = parse_query,
		.args_doc = "DB|CAPTURE SQL", .doc = query_doc,
		.children = load_options_children(LOAD_HELP_QUERY)
	};
	struct query_args args = { 0 };
	int status = 0;
	sqlite3 *db;

	if (argp_parse(&argp, argc, argv, 0, NULL, &args) != 0)
		return EXIT_USAGE;
	db = open_input(args.input, &args.load.opts, args.load.given, &status);
	if (!db)
		return status;
	if (db_exec(db, "PRAGMA query_only=1") < 0)
		status = 1;
	else
		status = run_statements(db, args.sql, args.format);
	if (fflush(stdout) != 0)
		status = fail_file("stdout", "write error");
	sqlite3_close(db);
	return status;
}
