/* cmd_report.c - "perfcap-analyze report FILE|DB": the text report or
 * folded stacks. A capture is first imported into an in-memory database,
 * then the same queries run as for a database made by "import", so both
 * print the same thing. */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "db.h"
#include "loader.h"
#include "open_input.h"
#include "report.h"

static const char report_doc[] =
"Where CPU time goes: top functions (self and total share, estimated CPU "
"time), top stacks per process, and data quality (losses, truncated stacks, "
"unresolved frames, file damage). FILE is a capture or a database made by "
"'perfcap-analyze import'."
"\v"
"Self counts a sample for the innermost frame of its stack (kernel frames "
"on top of user frames); total counts it once for every function on the "
"stack. CPU time is estimated as samples / sampling frequency.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze report run.perfcap\n"
"  perfcap-analyze report --top 50 run.db\n"
"  perfcap-analyze report --pid 4242 run.perfcap\n"
"  perfcap-analyze report --comm nginx run.perfcap\n"
"  perfcap-analyze report --no-local-files run.perfcap   # capture symbols only\n"
"  perfcap-analyze report --folded run.perfcap > out.folded\n"
"  flamegraph.pl out.folded > cpu.svg\n";

enum { OPT_SYMFS = 0x100, OPT_NO_LOCAL_FILES, OPT_FOLDED };

static const struct argp_option report_options[] = {
	{ "top", 'n', "N", 0, "List the top N functions (default 20)", 0 },
	{ "pid", 'p', "PID", 0, "Only samples of process PID", 0 },
	{ "comm", 'c', "NAME", 0, "Only samples of processes or threads named NAME", 0 },
	{ "folded", OPT_FOLDED, NULL, 0,
	  "Print folded stacks (comm;outer;...;inner count) for flame graphs", 0 },
	{ "symfs", OPT_SYMFS, "DIR", 0,
	  "Look for binaries and debug files under DIR too (captures only)", 0 },
	{ "no-local-files", OPT_NO_LOCAL_FILES, NULL, 0,
	  "Use only the symbols embedded in the capture (captures only)", 0 },
	{ 0 },
};

struct report_args {
	const char *input;
	int folded;
	struct report_options report;
	struct load_options load;
	int load_options_given;
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
	case 'c': args->report.comm = arg; return 0;
	case OPT_FOLDED: args->folded = 1; return 0;
	case OPT_SYMFS: args->load.symfs = arg; args->load_options_given = 1; return 0;
	case OPT_NO_LOCAL_FILES:
		args->load.local_files = 0;
		args->load_options_given = 1;
		return 0;
	case ARGP_KEY_ARG:
		if (args->input)
			argp_error(state, "only one FILE");
		args->input = arg;
		return 0;
	case ARGP_KEY_END:
		if (!args->input)
			argp_error(state, "FILE is missing");
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

int cmd_report(int argc, char **argv)
{
	static const struct argp argp = { .options = report_options, .parser = parse_report,
					  .args_doc = "FILE|DB", .doc = report_doc };
	struct report_args args = { .report = { .top = 20 }, .load = { .local_files = 1 } };
	int status = 0;
	sqlite3 *db;

	if (argp_parse(&argp, argc, argv, 0, NULL, &args) != 0)
		return EXIT_USAGE;
	args.load.progress = isatty(STDERR_FILENO);
	db = open_input(args.input, &args.load, args.load_options_given, &status);
	if (!db)
		return status;
	status = warn_if_damaged(db, args.input);
	if (args.folded ? report_folded(db, &args.report, stdout) < 0
			: report_text(db, &args.report, stdout) < 0)
		status = 1;
	if (fflush(stdout) != 0)
		status = fail_file("stdout", "write error");
	sqlite3_close(db);
	return status;
}
