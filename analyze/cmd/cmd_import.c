/* cmd_import.c - "perfcap-analyze import FILE -o DB": loads a capture into
 * a SQLite database (docs/schema.md). The database is built under a
 * temporary name next to DB and renamed into place only when complete, so
 * DB is never left half-written; an existing DB is replaced only with -f.
 * Importing the same capture with the same options gives the same rows. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "safe_file.h"
#include "load_options.h"
#include "db/db.h"
#include "util/fmt.h"
#include "import/loader.h"

static const char import_doc[] =
"Load a capture into a SQLite database: metadata, processes, maps, stacks, "
"resolved frames, samples, event records, their correlations (thread states, "
"off-CPU waits, time shares per window) and data-quality counters (schema: "
"docs/schema.md)."
"\v"
"Symbols come from the capture first, then from local files matched by "
"build-id (the recorded path, --symfs DIR, /usr/lib/debug), then debuginfod "
"if DEBUGINFOD_URLS is set.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze import run.perfcap -o run.db\n"
"  perfcap-analyze import run.perfcap -o run.db -f          # replace run.db\n"
"  perfcap-analyze import --symfs /srv/sysroot run.perfcap -o run.db\n"
"  perfcap-analyze import --window 100ms run.perfcap -o run.db\n"
"  sqlite3 run.db 'SELECT name, count(*) FROM frames GROUP BY name'\n";

static const struct argp_option import_options[] = {
	{ "output", 'o', "DB", 0, "Database to create (required)", 0 },
	{ "force", 'f', NULL, 0, "Overwrite DB if it exists", 0 },
	{ 0 },
};

struct import_args {
	const char *input;
	const char *output;
	int force;
	struct load_args load;
};

static error_t parse_import(int key, char *arg, struct argp_state *state)
{
	struct import_args *args = state->input;

	switch (key) {
	case 'o': args->output = arg; return 0;
	case 'f': args->force = 1; return 0;
	case ARGP_KEY_INIT: load_args_attach(state, &args->load); return 0;
	case ARGP_KEY_ARG: take_one_file(state, &args->input, arg); return 0;
	case ARGP_KEY_END:
		if (!args->input)
			argp_error(state, "FILE is missing");
		if (!args->output)
			argp_error(state, "-o DB is missing");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_done(const struct import_args *args, const struct load_summary *sum,
		       double seconds)
{
	char n[FMT_BUF], s[FMT_BUF], t[FMT_BUF], rate[FMT_BUF];

	printf("%s: imported %s events (%s samples) in %s (%s events/s)\n", args->output,
	       fmt_count(n, sizeof(n), sum->events), fmt_count(s, sizeof(s), sum->samples),
	       fmt_seconds(t, sizeof(t), seconds),
	       fmt_count(rate, sizeof(rate),
			 seconds > 0 ? (uint64_t)((double)sum->events / seconds) : 0));
}

/* Loads into tmp_path. 0, or the exit status. */
static int load_into_file(const struct import_args *args, const char *tmp_path,
			  struct load_summary *sum)
{
	char why[256] = "";
	sqlite3 *db = db_open_for_load(tmp_path);
	int rc;

	if (!db)
		return 1;
	rc = load_capture(db, args->input, &args->load.opts, sum, why, sizeof(why));
	if (sqlite3_close(db) != SQLITE_OK && rc == LOAD_OK)
		rc = LOAD_FAILED;
	if (rc == LOAD_NOT_CAPTURE)
		return fail_file(args->input, why);
	if (rc != LOAD_OK)
		return fail_file(args->input, "import failed");
	return 0;
}

int cmd_import(int argc, char **argv)
{
	const struct argp argp = {
		.options = import_options, .parser = parse_import,
		.args_doc = "FILE", .doc = import_doc,
		.children = load_options_children(LOAD_HELP_IMPORT)
	};
	struct import_args args = { 0 };
	struct load_summary sum;
	char *tmp_path;
	double start;
	const char *why;
	int fd, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, &args) != 0)
		return EXIT_USAGE;
	if (same_file(args.input, args.output))
		return fail_file(args.output, "is the input file");
	if ((why = pc_output_refusal(args.output)))
		return fail_file(args.output, why);
	if (!args.force && access(args.output, F_OK) == 0)
		return fail_file(args.output, "exists (use -f to overwrite)");
	if (asprintf(&tmp_path, "%s.tmp-XXXXXX", args.output) < 0)
		return fail_file(args.output, "out of memory");
	fd = mkstemp(tmp_path);
	if (fd < 0) {
		rc = fail_file(args.output, strerror(errno));
		free(tmp_path);
		return rc;
	}
	close(fd);
	start = now_seconds();
	rc = load_into_file(&args, tmp_path, &sum);
	if (rc == 0 && rename(tmp_path, args.output) < 0)
		rc = fail_file(args.output, strerror(errno));
	if (rc != 0)
		unlink(tmp_path);
	else {
		print_done(&args, &sum, now_seconds() - start);
		if (sum.damage[0])
			rc = warn_damage(args.input, sum.damage);
	}
	free(tmp_path);
	return rc;
}
