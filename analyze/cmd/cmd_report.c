/* cmd_report.c - "perfcap-analyze report FILE|DB": the text report, the
 * JSON report (--json) or folded stacks (--folded), and with --html FILE
 * the same report as a self-contained page; text, JSON and page are
 * renderings of one report model, computed once. A capture is first imported
 * into a temporary database, then the same queries run as for a database
 * made by "import", so both print the same thing. */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "load_options.h"
#include "db/db.h"
#include "report/html_page.h"
#include "import/loader.h"
#include "import/open_input.h"
#include "report/report.h"

static const char report_doc[] =
"Where the time goes and why: a verdict naming the main causes with their "
"evidence (compute-bound functions, CPU contention, lock contention, disk I/O, "
"network waits, thread pools, memory pressure, the latency spike window), then "
"method and scope, latency, CPU hot paths, I/O, contention and scheduling, "
"evidence tables, data quality and how to reproduce. FILE is a capture or a "
"database made by 'perfcap-analyze import'."
"\v"
"Causes are ranked by the share of the affected threads' time they explain; "
"docs/report-json.md defines every cause and key number. --from and --to take "
"an offset from the capture's start with a unit (2s, 500ms, 250us, 10ns) or an "
"absolute CLOCK_MONOTONIC time in nanoseconds (digits only). Self counts a "
"sample for the innermost frame of its stack (kernel frames on top of user "
"frames); total counts it once for every function on the stack. CPU time is "
"estimated as samples / sampling frequency.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze report run.perfcap\n"
"  perfcap-analyze report --json run.perfcap > report.json\n"
"  perfcap-analyze report --html report.html run.perfcap   # flame graph, timeline\n"
"  perfcap-analyze report --from 2s --to 3500ms run.perfcap    # a window\n"
"  perfcap-analyze report --top 50 run.db\n"
"  perfcap-analyze report --pid 4242 run.perfcap\n"
"  perfcap-analyze report --tid 4250 --from 1s run.perfcap\n"
"  perfcap-analyze report --comm nginx run.perfcap\n"
"  perfcap-analyze report --no-local-files run.perfcap   # capture symbols only\n"
"  perfcap-analyze report --folded run.perfcap > out.folded\n"
"  flamegraph.pl out.folded > cpu.svg\n";

enum { OPT_FOLDED = 0x100, OPT_JSON, OPT_FROM, OPT_TO, OPT_HTML };

static const struct argp_option report_options[] = {
	{ "top", 'n', "N", 0, "List the top N rows per table (default 20)", 0 },
	{ "pid", 'p', "PID", 0, "Only process PID", 0 },
	{ "tid", 't', "TID", 0, "Only thread TID", 0 },
	{ "comm", 'c', "NAME", 0, "Only processes or threads named NAME", 0 },
	{ "from", OPT_FROM, "TIME", 0,
	  "Start of the window: offset from the capture start (2s, 500ms) or absolute ns", 0 },
	{ "to", OPT_TO, "TIME", 0, "End of the window (exclusive), same forms as --from", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print the report as JSON (docs/report-json.md)", 0 },
	{ "html", OPT_HTML, "FILE", 0,
	  "Also write the report as one self-contained HTML page to FILE", 0 },
	{ "folded", OPT_FOLDED, NULL, 0,
	  "Print folded stacks (comm;outer;...;inner count) for flame graphs", 0 },
	{ 0 },
};

struct report_args {
	const char *input;
	int folded;
	int json;
	const char *html;
	struct report_options report;
	struct load_args load;
};

static error_t parse_report(int key, char *arg, struct argp_state *state)
{
	struct report_args *args = state->input;
	unsigned long long value;

	switch (key) {
	case 'n':
		if (parse_number(arg, 1, 1000000, &value) < 0)
			argp_error(state, "--top: '%s' is not a number from 1 to 1000000", arg);
		args->report.top = (int)value;
		return 0;
	case 'p':
		if (parse_number(arg, 0, UINT32_MAX, &value) < 0)
			argp_error(state, "--pid: '%s' is not a process id", arg);
		args->report.has_pid = 1;
		args->report.pid = (uint32_t)value;
		return 0;
	case 't':
		if (parse_number(arg, 0, UINT32_MAX, &value) < 0)
			argp_error(state, "--tid: '%s' is not a thread id", arg);
		args->report.has_tid = 1;
		args->report.tid = (uint32_t)value;
		return 0;
	case 'c': args->report.comm = arg; return 0;
	case OPT_FROM:
	case OPT_TO:
		if (report_parse_time_bound(arg, key == OPT_FROM ? &args->report.from
								 : &args->report.to) < 0)
			argp_error(state, "--%s: '%s' is neither an offset such as 2s or 500ms nor"
				   " a time in ns", key == OPT_FROM ? "from" : "to", arg);
		return 0;
	case OPT_JSON: args->json = 1; return 0;
	case OPT_HTML: args->html = arg; return 0;
	case OPT_FOLDED: args->folded = 1; return 0;
	case ARGP_KEY_INIT: load_args_attach(state, &args->load); return 0;
	case ARGP_KEY_ARG: take_one_file(state, &args->input, arg); return 0;
	case ARGP_KEY_END:
		if (!args->input)
			argp_error(state, "FILE is missing");
		if (args->json && args->folded)
			argp_error(state, "--json and --folded exclude each other");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* Returns 0, or EXIT_DAMAGED after warning about damage. */
static int warn_if_damaged(sqlite3 *db, const char *path)
{
	char *damage = db_lookup_text(db, "SELECT value FROM quality"
				      " WHERE source = ?1 AND key = ?2", "file", "damage");
	int status = damage ? warn_damage(path, damage) : 0;

	free(damage);
	return status;
}

/* The command line as typed (words with spaces or quotes single-quoted),
 * for the Reproduce block. malloc'd, or NULL. */
static char *command_line(int argc, char **argv)
{
	size_t len = sizeof("perfcap-analyze");
	char *line, *p;

	for (int i = 0; i < argc; i++)
		len += 4 * strlen(argv[i]) + 3;
	line = malloc(len);
	if (!line)
		return NULL;
	p = line + sprintf(line, "perfcap-analyze");
	for (int i = 0; i < argc; i++) {
		const char *a = i == 0 ? "report" : argv[i];
		int quote = a[0] == '\0' || strpbrk(a, " \t'\"$\\;&|<>*?()") != NULL;
		*p++ = ' ';
		if (quote)
			*p++ = '\'';
		for (; *a; a++) {
			if (quote && *a == '\'') {
				memcpy(p, "'\\''", 4);
				p += 4;
			} else {
				*p++ = *a;
			}
		}
		if (quote)
			*p++ = '\'';
	}
	*p = '\0';
	return line;
}

/* The model's JSON inside the HTML page at path. 0 or -1 (reported). */
static int write_html(const struct report_model *m, const char *path)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	int rc;

	if (!mem) {
		fail_file(path, "out of memory");
		return -1;
	}
	rc = report_model_json(m, mem);
	if (fclose(mem) != 0 && rc == 0) {
		fail_file(path, "out of memory");
		rc = -1;
	}
	if (rc == 0)
		rc = html_page_write_file(path, "perfcap report", json, len);
	free(json);
	return rc;
}

/* The page (with --html) and stdout, from one model: the report is
 * computed once however many times it is written. 0 or -1. */
static int write_outputs(sqlite3 *db, const struct report_args *args)
{
	struct report_model *m = NULL;
	int rc = 0;

	if (args->html || !args->folded) {
		m = report_model_build(db, &args->report);
		if (!m) {
			fprintf(stderr, "perfcap-analyze: out of memory\n");
			return -1;
		}
	}
	/* the page first: a reader of stdout that quits early (| head) must
	 * not cost the file */
	if (args->html && write_html(m, args->html) < 0)
		rc = -1;
	if (args->folded ? report_folded(db, &args->report, stdout) < 0
	    : args->json ? report_model_json(m, stdout) < 0 : report_model_text(m, stdout) < 0)
		rc = -1;
	report_model_free(m);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	const struct argp argp = {
		.options = report_options, .parser = parse_report,
		.args_doc = "FILE|DB", .doc = report_doc,
		.children = load_options_children(LOAD_HELP_REPORT)
	};
	struct report_args args = { .report = { .top = 20 } };
	int status = 0;
	char *command;
	sqlite3 *db;

	const char *why = NULL;

	if (argp_parse(&argp, argc, argv, 0, NULL, &args) != 0)
		return EXIT_USAGE;
	if (args.html && !html_page_available(&why)) {
		fprintf(stderr, "perfcap-analyze was built without HTML support: %s\n", why);
		return 1;
	}
	db = open_input(args.input, &args.load.opts, args.load.given, &status);
	if (!db)
		return status;
	status = warn_if_damaged(db, args.input);
	args.report.input_path = args.input;
	args.report.analyze_command = command = command_line(argc, argv);
	if (write_outputs(db, &args) < 0)
		status = 1;
	free(command);
	if (fflush(stdout) != 0)
		status = fail_file("stdout", "write error");
	sqlite3_close(db);
	return status;
}
