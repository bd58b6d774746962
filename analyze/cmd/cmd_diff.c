/* cmd_diff.c - "perfcap-analyze diff BASE NEW" and "diff --base A B C
 * --new D E F": compares a baseline with a new run (or groups of runs),
 * prints text, JSON, folded pairs or an HTML page, and evaluates
 * --fail-on rules for CI. Exit status: 0 no rule matched, 1 a rule
 * matched (regression), 2 usage or input error. */
#include <argp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "load_options.h"
#include "diff/diff.h"
#include "report/html_page.h"
#include "import/loader.h"
#include "import/open_input.h"
#include "util/temp_file.h"

#define DIFF_MAX_RUNS 64
#define DIFF_MAX_RULES 32
#define EXIT_REGRESSION 1
#define EXIT_DIFF_ERROR 2

static const char diff_doc[] =
"Compare a baseline with a new run, or a group of baseline runs with a group "
"of new runs: CPU time per function (self and total, aligned by name and "
"source file, never by address) and per stack, system call, request, lock "
"and device latency distributions, per-thread time shares (threads aligned "
"by name) and event rates. Each input is a capture or a database made by "
"'perfcap-analyze import'."
"\v"
"Values are normalized per request when every run has requests "
"(request_spans), else per second of capture; CPU time is samples divided "
"by the sampling frequency. Each comparison gets a test (Poisson rate "
"ratio for sample counts; for latencies of one run a side Welch t on the "
"medians of 10 consecutive blocks of each run, Mann-Whitney U when too few; "
"Welch t on per-run values when both sides have several runs), Benjamini-Hochberg control of "
"the false discovery rate, an effect with a 95% interval and a noise floor. "
"A finding is significant only when q < --alpha, |effect| >= --min-effect and "
"above its noise floor, and its impact is above the practical minimum; "
"findings are ranked by the time they add. A warning marks the comparison "
"conditional when kernels, eBPF programs, filters, sampling or data quality "
"differ.\n"
"\n"
"Exit status: 0 no --fail-on rule matched; 1 a rule matched (regression); "
"2 usage or input error.\n"
"\n"
"RULES (--fail-on, repeatable):\n"
"  func:NAME:+P%          NAME's self CPU time grew by P% or more\n"
"  p99:request:+P%        request latency p99 grew by P% or more\n"
"  p99:syscall:NAME:+P%   system call NAME's p99 grew by P% or more\n"
"  lock:+P%, lock:SITE:+P% a lock's median wait grew by P% or more\n"
"  any:significant        any significant finding that adds time\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze diff base.perfcap new.perfcap\n"
"  perfcap-analyze diff --base b1.perfcap b2.perfcap b3.perfcap \\\n"
"                       --new n1.perfcap n2.perfcap n3.perfcap\n"
"  perfcap-analyze diff --json base.db new.db > diff.json\n"
"  perfcap-analyze diff --folded base.perfcap new.perfcap > pairs.folded\n"
"  flamegraph.pl pairs.folded > differential.svg\n"
"  perfcap-analyze diff --html diff.html base.perfcap new.perfcap\n"
"  perfcap-analyze diff --fail-on 'func:parse_json:+5%' \\\n"
"                       --fail-on 'p99:request:+10%' base.perfcap new.perfcap\n"
"  perfcap-analyze diff --fail-on any:significant base.db new.db || exit 1\n";

enum { OPT_BASE = 0x100, OPT_NEW, OPT_JSON, OPT_FOLDED, OPT_HTML, OPT_FAIL_ON, OPT_ALPHA,
       OPT_MIN_EFFECT, OPT_MIN_IMPACT, OPT_ALL };

static const struct argp_option diff_options_doc[] = {
	{ "base", OPT_BASE, NULL, 0, "The files that follow are baseline runs", 0 },
	{ "new", OPT_NEW, NULL, 0, "The files that follow are new runs", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print JSON (docs/diff-json.md)", 0 },
	{ "folded", OPT_FOLDED, NULL, 0,
	  "Print folded stack pairs (\"stack base new\", sample counts)", 0 },
	{ "html", OPT_HTML, "FILE", 0, "Also write an HTML page to FILE", 0 },
	{ "fail-on", OPT_FAIL_ON, "RULE", 0, "Exit 1 if RULE matches (repeatable)", 0 },
	{ "alpha", OPT_ALPHA, "Q", 0, "False discovery rate (default 0.01)", 0 },
	{ "min-effect", OPT_MIN_EFFECT, "P%", 0,
	  "Smallest relative change called significant (default 10%)", 0 },
	{ "min-impact", OPT_MIN_IMPACT, "P%", 0,
	  "Smallest time added called significant, as a share of the base's mean request "
	  "latency, or of a second (default 1%)", 0 },
	{ "top", 'n', "N", 0, "Findings to list (default 20)", 0 },
	{ "all", OPT_ALL, NULL, 0, "List non-significant comparisons too", 0 },
	{ 0 },
};

struct diff_args {
	const char *inputs[2][DIFF_MAX_RUNS];
	size_t ninputs[2];
	const char *plain[DIFF_MAX_RUNS];
	size_t nplain;
	int target;               /* -1: plain positional arguments */
	int grouped;
	int json, folded;
	const char *html;
	struct diff_rule rules[DIFF_MAX_RULES];
	size_t nrules;
	struct diff_options opts;
	struct load_args load;
};

static int parse_percent(const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (strcmp(end, "%") != 0 && *end != '\0') || v < 0 || v > 1000)
		return -1;
	*out = v / 100;
	return 0;
}

static void add_input(struct diff_args *args, struct argp_state *state, const char *arg)
{
	if (args->target < 0) {
		if (args->nplain == DIFF_MAX_RUNS)
			argp_error(state, "too many files");
		args->plain[args->nplain++] = arg;
		return;
	}
	if (args->ninputs[args->target] == DIFF_MAX_RUNS)
		argp_error(state, "at most %d runs per side", DIFF_MAX_RUNS);
	args->inputs[args->target][args->ninputs[args->target]++] = arg;
}

static void finish_inputs(struct diff_args *args, struct argp_state *state)
{
	if (!args->grouped) {
		if (args->nplain != 2)
			argp_error(state, "give BASE and NEW, or --base FILES... --new FILES...");
		args->inputs[0][0] = args->plain[0];
		args->inputs[1][0] = args->plain[1];
		args->ninputs[0] = args->ninputs[1] = 1;
		return;
	}
	if (args->nplain)
		argp_error(state, "'%s': with --base/--new every file follows one of them",
			   args->plain[0]);
	if (!args->ninputs[0] || !args->ninputs[1])
		argp_error(state, "--base and --new each need at least one file");
}

static error_t parse_diff(int key, char *arg, struct argp_state *state)
{
	struct diff_args *args = state->input;
	unsigned long long n;
	const char *why;

	switch (key) {
	case OPT_BASE: args->target = 0; args->grouped = 1; return 0;
	case OPT_NEW: args->target = 1; args->grouped = 1; return 0;
	case OPT_JSON: args->json = 1; return 0;
	case OPT_FOLDED: args->folded = 1; return 0;
	case OPT_HTML: args->html = arg; return 0;
	case OPT_ALL: args->opts.all = 1; return 0;
	case OPT_FAIL_ON:
		if (args->nrules == DIFF_MAX_RULES)
			argp_error(state, "at most %d --fail-on rules", DIFF_MAX_RULES);
		if (diff_rule_parse(arg, &args->rules[args->nrules], &why) < 0)
			argp_error(state, "--fail-on '%s': %s", arg, why);
		args->nrules++;
		return 0;
	case OPT_ALPHA: {
		char *end;

		args->opts.alpha = strtod(arg, &end);
		if (end == arg || *end || !(args->opts.alpha > 0 && args->opts.alpha < 1))
			argp_error(state, "--alpha: '%s' is not a number between 0 and 1", arg);
		return 0;
	}
	case OPT_MIN_EFFECT:
		if (parse_percent(arg, &args->opts.min_effect) < 0)
			argp_error(state, "--min-effect: '%s' is not a percentage (10%%)", arg);
		return 0;
	case OPT_MIN_IMPACT:
		if (parse_percent(arg, &args->opts.min_impact_share) < 0)
			argp_error(state, "--min-impact: '%s' is not a percentage (1%%)", arg);
		return 0;
	case 'n':
		if (parse_number(arg, 1, 1000000, &n) < 0)
			argp_error(state, "--top: '%s' is not a number from 1 to 1000000", arg);
		args->opts.top = (int)n;
		return 0;
	case ARGP_KEY_INIT: load_args_attach(state, &args->load); return 0;
	case ARGP_KEY_ARG: add_input(args, state, arg); return 0;
	case ARGP_KEY_END: finish_inputs(args, state); return 0;
	default: return ARGP_ERR_UNKNOWN;
	}
}

/* ---- reading the runs ----------------------------------------------------
 *
 * Reading a run's database into its series (diff_run_load) is most of a
 * diff: 1.7 s a side for a 5 s every-source redis capture, and a diff of a
 * capture against itself reads it twice. Each run has its own connection
 * and its own series, so the runs are read on threads, up to one per
 * online CPU, LOAD_WAVE at most at once (each holds its connection's
 * page cache). The inputs are opened one by one first, in order: a
 * capture given instead of a database is imported then, with its
 * progress and messages as before. */
#define LOAD_WAVE 8

struct load_job {
	struct diff_run *run;
	sqlite3 *db;
	const char *path;
	int rc;
	pthread_t thread;
	int threaded;
};

static void *load_job_main(void *arg)
{
	struct load_job *j = arg;

	j->rc = diff_run_load(j->run, j->db, j->path);
	return NULL;
}

/* Reads jobs[0..n) at once: the first on this thread, the others on
 * threads of their own (inline when a thread cannot start). */
static void load_wave(struct load_job *jobs, size_t n)
{
	for (size_t i = 1; i < n; i++)
		jobs[i].threaded = pthread_create(&jobs[i].thread, NULL, load_job_main,
						  &jobs[i]) == 0;
	load_job_main(&jobs[0]);
	for (size_t i = 1; i < n; i++) {
		if (jobs[i].threaded)
			pthread_join(jobs[i].thread, NULL);
		else
			load_job_main(&jobs[i]);
	}
}

static size_t load_workers(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 1 ? 1 : cpus > LOAD_WAVE ? LOAD_WAVE : (size_t)cpus;
}

/* Reads every run of both sides; loaded[side] counts the runs to free. */
static int load_runs(const struct diff_args *args, struct diff_run *runs[2], size_t loaded[2])
{
	struct load_job jobs[LOAD_WAVE];
	size_t workers = load_workers(), n = 0;
	int failed = 0;

	for (int side = 0; side < 2 && !failed; side++) {
		for (size_t i = 0; i < args->ninputs[side] && !failed; i++) {
			const char *path = args->inputs[side][i];
			int status = 0;
			sqlite3 *db = open_input(path, &args->load.opts, args->load.given,
						 &status);

			if (!db) {
				failed = 1;
				break;
			}
			jobs[n++] = (struct load_job){ .run = &runs[side][i], .db = db,
						      .path = path };
			loaded[side]++;
			if (n == workers || (side == 1 && i + 1 == args->ninputs[1])) {
				load_wave(jobs, n);
				for (size_t k = 0; k < n; k++) {
					failed |= jobs[k].rc < 0;
					sqlite3_close(jobs[k].db);
				}
				n = 0;
			}
		}
	}
	for (size_t k = 0; k < n; k++)   /* opened before a failure, not read */
		sqlite3_close(jobs[k].db);
	return failed ? -1 : 0;
}

/* The latency values the runs may keep in memory, in equal shares: 256 MiB
 * (PERFCAP_DIFF_LATENCY_BYTES); a run past its share spills the rest to a
 * temporary database (diff/diff_spill.h), with the same answers. */
static void set_latency_memory(const struct diff_args *args, struct diff_run *runs[2])
{
	size_t bytes = temp_file_run_size("PERFCAP_DIFF_LATENCY_BYTES", (size_t)256 << 20);
	size_t nruns = args->ninputs[0] + args->ninputs[1];
	uint64_t share = bytes / sizeof(uint64_t) / (nruns ? nruns : 1);

	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < args->ninputs[side]; i++) {
			runs[side][i].latency_max = share ? share : 1;
			/* one run a side: latencies compared by block medians */
			runs[side][i].want_blocks = args->ninputs[0] == 1 && args->ninputs[1] == 1;
		}
}

static int write_html(const struct diff_result *res, const char *path)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	int rc;

	if (!mem || diff_json(res, mem, 0) < 0 || fclose(mem) != 0) {
		free(json);
		return fail_file(path, "out of memory");
	}
	rc = html_page_write_file(path, "perfcap diff", json, len);
	free(json);
	return rc < 0 ? 1 : 0;
}

static int print_outputs(const struct diff_args *args, const struct diff_result *res)
{
	int rc;

	/* the page first: a reader of stdout that quits early (| head) must
	 * not cost the file */
	if (args->html && write_html(res, args->html) != 0)
		return -1;
	if (args->json)
		rc = diff_json(res, stdout, 1);
	else if (args->folded)
		rc = diff_folded(res, stdout);
	else
		rc = diff_text(res, stdout);
	if (fflush(stdout) != 0) {
		fail_file("stdout", "write error");
		rc = -1;
	}
	return rc;
}

/* Evaluates the rules; names each one that matched (stderr, and stdout
 * after the text output). Returns the number that matched. */
static int check_rules(const struct diff_args *args, const struct diff_result *res)
{
	int matched = 0;

	for (size_t i = 0; i < args->nrules; i++) {
		char why[768];

		if (!diff_rule_check(&args->rules[i], res, why, sizeof(why)))
			continue;
		matched++;
		fprintf(stderr, "perfcap-analyze diff: FAIL %s\n", why);
		if (!args->json && !args->folded)
			printf("FAIL --fail-on %s\n", why);
	}
	if (args->nrules && !matched && !args->json && !args->folded)
		printf("PASS: no --fail-on rule matched (%zu rule%s)\n", args->nrules,
		       args->nrules > 1 ? "s" : "");
	return matched;
}

int cmd_diff(int argc, char **argv)
{
	const struct argp argp = {
		.options = diff_options_doc, .parser = parse_diff,
		.args_doc = "BASE NEW\n--base FILE... --new FILE...",
		.doc = diff_doc,
		.children = load_options_children(LOAD_HELP_DIFF)
	};
	static struct diff_args args;
	struct diff_run *runs[2] = { NULL, NULL };
	size_t loaded[2] = { 0, 0 };
	struct diff_result res;
	int status = EXIT_DIFF_ERROR;
	const char *why = NULL;

	memset(&args, 0, sizeof(args));
	args.target = -1;
	args.opts = (struct diff_options){ .alpha = 0.01, .min_effect = 0.10,
					   .min_impact_share = 0.01, .top = 20 };
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &args) != 0)
		return EXIT_USAGE;
	if (args.json + args.folded > 1) {
		fprintf(stderr, "perfcap-analyze diff: --json and --folded exclude each other\n");
		return EXIT_USAGE;
	}
	if (args.html && !html_page_available(&why)) {
		fprintf(stderr, "perfcap-analyze was built without HTML support: %s\n", why);
		return EXIT_DIFF_ERROR;
	}
	runs[0] = calloc(args.ninputs[0], sizeof(struct diff_run));
	runs[1] = calloc(args.ninputs[1], sizeof(struct diff_run));
	if (!runs[0] || !runs[1])
		goto out;
	set_latency_memory(&args, runs);
	if (load_runs(&args, runs, loaded) < 0)
		goto out;
	if (diff_compare(runs[0], args.ninputs[0], runs[1], args.ninputs[1], &args.opts,
			 &res) < 0) {
		diff_result_free(&res);
		goto out;
	}
	if (print_outputs(&args, &res) == 0)
		status = check_rules(&args, &res) ? EXIT_REGRESSION : 0;
	diff_result_free(&res);
out:
	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < loaded[side]; i++)
			diff_run_free(&runs[side][i]);
		free(runs[side]);
	}
	return status;
}
