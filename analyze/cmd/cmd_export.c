/* cmd_export.c - "perfcap-analyze export --format FORMAT [-o FILE|DIR]
 * FILE|DB": the capture's data for the tools people already run (pprof,
 * speedscope, CSV/NDJSON tables, OpenMetrics, Perfetto), over the report's scope
 * options. A capture is imported into a temporary database first, as for
 * "report". The writers are in export/; docs/export.md describes them. */
#include <argp.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "load_options.h"
#include "db/db.h"
#include "export/export.h"
#include "import/loader.h"
#include "import/open_input.h"

static const char export_doc[] =
"Write a capture's data in a format other tools read. FILE is a capture or a "
"database made by 'perfcap-analyze import'. docs/export.md describes every "
"format: fields, units and the commands that load it."
"\v"
"FORMATS:\n"
"  pprof        gzip'd profile.proto: CPU samples, off-CPU, lock and I/O wait\n"
"               (go tool pprof, Pyroscope, Parca, Perfetto)\n"
"  speedscope   JSON: a sampled profile per thread, requests as events\n"
"  csv, tables  one CSV file per table in the directory -o DIR\n"
"  ndjson       one NDJSON file per table in the directory -o DIR\n"
"  openmetrics  per-window metrics with timestamps (promtool tsdb\n"
"               create-blocks-from openmetrics)\n"
"  prometheus   the same metrics in the Prometheus text format (ms timestamps)\n"
"  perfetto     a Perfetto trace: thread states, syscalls, requests, counters,\n"
"               CPU samples with callstacks (ui.perfetto.dev, trace_processor)\n"
"\n"
"Without -o the output goes to standard output (pprof and perfetto refuse a "
"terminal). "
"A file output is written under a temporary name and renamed into place when "
"complete, mode 0600; a symlink at its path is replaced, never followed. "
"--from and --to take an offset from the capture's start (2s, 500ms) or an "
"absolute CLOCK_MONOTONIC time in ns.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze export --format pprof -o cpu.pb.gz run.perfcap\n"
"  go tool pprof -top cpu.pb.gz\n"
"  perfcap-analyze export --format speedscope -o run.speedscope.json run.perfcap\n"
"  perfcap-analyze export --format csv -o tables/ run.db\n"
"  perfcap-analyze export --format ndjson --pid 4242 -o tables/ run.db\n"
"  perfcap-analyze export --format openmetrics -o run.om run.perfcap\n"
"  promtool tsdb create-blocks-from openmetrics run.om data/\n"
"  perfcap-analyze export --format pprof --from 2s --to 3s -o spike.pb.gz run.db\n"
"  perfcap-analyze export --format perfetto -o run.pftrace run.perfcap\n";

enum { OPT_FROM = 0x100, OPT_TO, OPT_RUN_ID };

static const struct argp_option export_options[] = {
	{ "format", 'f', "FORMAT", 0,
	  "pprof, speedscope, csv (or tables), ndjson, openmetrics, prometheus, perfetto", 0 },
	{ "output", 'o', "FILE|DIR", 0, "Write to FILE (a directory for csv and ndjson)", 0 },
	{ "pid", 'p', "PID", 0, "Only process PID", 0 },
	{ "tid", 't', "TID", 0, "Only thread TID", 0 },
	{ "comm", 'c', "NAME", 0, "Only processes or threads named NAME", 0 },
	{ "from", OPT_FROM, "TIME", 0,
	  "Start of the window: offset from the capture start (2s, 500ms) or absolute ns", 0 },
	{ "to", OPT_TO, "TIME", 0, "End of the window (exclusive), same forms as --from", 0 },
	{ "run-id", OPT_RUN_ID, "ID", 0,
	  "Run id written on every row (default: boot id and start time)", 0 },
	{ 0 },
};

struct export_args {
	const char *input;
	const char *format_name;
	struct export_request req;
	struct report_options scope;
	struct load_args load;      /* --symfs, --no-local-files (load_options.c) */
};

static void parse_id(struct argp_state *state, const char *what, const char *arg,
		     int *has, uint32_t *out)
{
	unsigned long long value;

	if (parse_number(arg, 0, UINT32_MAX, &value) < 0)
		argp_error(state, "--%s: '%s' is not a %s id", what, arg,
			   strcmp(what, "pid") == 0 ? "process" : "thread");
	*has = 1;
	*out = (uint32_t)value;
}

static void parse_bound(struct argp_state *state, int key, const char *arg,
			struct report_options *o)
{
	if (report_parse_time_bound(arg, key == OPT_FROM ? &o->from : &o->to) < 0)
		argp_error(state, "--%s: '%s' is neither an offset such as 2s or 500ms nor"
			   " a time in ns", key == OPT_FROM ? "from" : "to", arg);
}

static void check_args(struct argp_state *state, struct export_args *args)
{
	if (!args->input)
		argp_error(state, "FILE is missing");
	if (!args->format_name)
		argp_error(state, "--format is missing (pprof, speedscope, csv, ndjson,"
			   " openmetrics, prometheus, perfetto)");
	if (export_format_parse(args->format_name, &args->req.format) < 0)
		argp_error(state, "--format: unknown format '%s' (pprof, speedscope, csv,"
			   " tables, ndjson, openmetrics, prometheus, perfetto)", args->format_name);
	if (export_format_is_directory(args->req.format) && !args->req.output)
		argp_error(state, "--format %s writes one file per table: give -o DIR",
			   args->format_name);
}

static error_t parse_export(int key, char *arg, struct argp_state *state)
{
	struct export_args *args = state->input;

	switch (key) {
	case 'f': args->format_name = arg; return 0;
	case 'o': args->req.output = arg; return 0;
	case 'p': parse_id(state, "pid", arg, &args->scope.has_pid, &args->scope.pid); return 0;
	case 't': parse_id(state, "tid", arg, &args->scope.has_tid, &args->scope.tid); return 0;
	case 'c': args->scope.comm = arg; return 0;
	case OPT_FROM:
	case OPT_TO: parse_bound(state, key, arg, &args->scope); return 0;
	case OPT_RUN_ID: args->req.run_id = arg; return 0;
	case ARGP_KEY_INIT: load_args_attach(state, &args->load); return 0;
	case ARGP_KEY_ARG: take_one_file(state, &args->input, arg); return 0;
	case ARGP_KEY_END:
		check_args(state, args);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* 0 if the directory that will hold path (path itself for a directory
 * format) can be written, else 1 after one line: found before a long
 * import rather than after it. */
static int check_writable(const char *path, int directory)
{
	char *copy = strdup(path);
	const char *dir;
	struct stat st;
	int rc = 0, exists = lstat(path, &st) == 0;

	if (!copy)
		return fail_file(path, "out of memory");
	if (directory && exists && !S_ISDIR(st.st_mode)) {
		free(copy);
		return fail_file(path, "exists and is not a directory (a symlink is not followed)");
	}
	dir = directory && exists ? path : dirname(copy);
	if (access(dir, W_OK | X_OK) < 0)
		rc = fail_file(path, strerror(errno));
	free(copy);
	return rc;
}

/* Refuses what cannot work before the capture is imported. 0 or 1. */
static int check_output(const struct export_args *args)
{
	const char *why = NULL;
	const char *out = args->req.output;

	if (!export_format_available(args->req.format, &why)) {
		fprintf(stderr, "perfcap-analyze: --format %s: %s\n", args->format_name, why);
		return 1;
	}
	if (export_format_is_binary(args->req.format) &&
	    (!args->req.output || strcmp(args->req.output, "-") == 0) && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "perfcap-analyze: --format %s is binary: give -o FILE or"
			" redirect standard output\n", args->format_name);
		return EXIT_USAGE;
	}
	if (out && strcmp(out, "-") != 0)
		return check_writable(out, export_format_is_directory(args->req.format));
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const struct argp argp = { .options = export_options, .parser = parse_export,
				   .args_doc = "FILE|DB", .doc = export_doc,
				   .children = load_options_children(LOAD_HELP_REPORT) };
	struct export_args args = { 0 };
	int status = 0;
	sqlite3 *db;
	char *damage;

	if (argp_parse(&argp, argc, argv, 0, NULL, &args) != 0)
		return EXIT_USAGE;
	if ((status = check_output(&args)) != 0)
		return status;
	args.scope.input_path = args.input;
	args.req.opts = &args.scope;
	db = open_input(args.input, &args.load.opts, args.load.given, &status);
	if (!db)
		return status;
	damage = db_lookup_text(db, "SELECT value FROM quality WHERE source = ?1 AND key = ?2",
				"file", "damage");
	status = damage ? warn_damage(args.input, damage) : 0;
	free(damage);
	if (export_run(db, &args.req) != 0)
		status = 1;
	sqlite3_close(db);
	return status;
}
