/* load_options.c - the argp child for --symfs, --no-local-files,
 * --window and --requests-from (see load_options.h). */
#include <string.h>
#include <unistd.h>

#include "load_options.h"
#include "util/messages.h"
#include "util/parse.h"

enum { OPT_SYMFS = 0x400, OPT_NO_LOCAL_FILES, OPT_WINDOW, OPT_REQUESTS_FROM };

#define SYMFS_DOC "Look for binaries and debug files under DIR too"
#define LOCAL_DOC "Use only the symbols embedded in the capture"
#define CAPTURES_ONLY " (captures only)"

static const struct argp_option import_options[] = {
	{ "symfs", OPT_SYMFS, "DIR", 0, SYMFS_DOC, 0 },
	{ "no-local-files", OPT_NO_LOCAL_FILES, NULL, 0, LOCAL_DOC, 0 },
	{ "window", OPT_WINDOW, "DURATION", 0,
	  "Window of thread_time_shares: 1s (default), 500ms, 0.1 ...", 0 },
	{ "requests-from", OPT_REQUESTS_FROM, "WHAT", 0,
	  "Build the requests table from 'calls' (the socket system calls of -e "
	  "syscall,net), 'kernel' (the req source's records) or 'auto' (default: calls "
	  "where a process has them, else the kernel's)", 0 },
	{ 0 },
};

static const struct argp_option report_options[] = {
	{ "symfs", OPT_SYMFS, "DIR", 0, SYMFS_DOC CAPTURES_ONLY, 0 },
	{ "no-local-files", OPT_NO_LOCAL_FILES, NULL, 0, LOCAL_DOC CAPTURES_ONLY, 0 },
	{ 0 },
};

static const struct argp_option query_options[] = {
	{ "window", OPT_WINDOW, "DURATION", 0,
	  "thread_time_shares window when importing a capture (default 1s)", 0 },
	{ "symfs", OPT_SYMFS, "DIR", 0, SYMFS_DOC CAPTURES_ONLY, 0 },
	{ "no-local-files", OPT_NO_LOCAL_FILES, NULL, 0, LOCAL_DOC CAPTURES_ONLY, 0 },
	{ 0 },
};

static const struct argp_option diff_options[] = {
	{ "symfs", OPT_SYMFS, "DIR", 0, SYMFS_DOC CAPTURES_ONLY, 0 },
	{ "no-local-files", OPT_NO_LOCAL_FILES, NULL, 0, LOCAL_DOC "s", 0 },
	{ 0 },
};

static error_t parse_load(int key, char *arg, struct argp_state *state)
{
	struct load_args *args = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		args->opts.local_files = 1;
		args->opts.progress = isatty(STDERR_FILENO);
		return 0;
	case OPT_SYMFS:
		args->opts.symfs = arg;
		break;
	case OPT_NO_LOCAL_FILES:
		args->opts.local_files = 0;
		break;
	case OPT_WINDOW:
		if (parse_window(arg, &args->opts.window_ns) < 0)
			argp_error(state, "--window: '%s' is not a duration from 1ms to 1 day", arg);
		break;
	case OPT_REQUESTS_FROM:
		if (strcmp(arg, "auto") == 0)
			args->opts.requests_from = LOAD_REQUESTS_AUTO;
		else if (strcmp(arg, "calls") == 0)
			args->opts.requests_from = LOAD_REQUESTS_CALLS;
		else if (strcmp(arg, "kernel") == 0)
			args->opts.requests_from = LOAD_REQUESTS_KERNEL;
		else
			argp_error(state, "--requests-from: '%s' is not auto, calls or kernel", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	args->given = 1;
	return 0;
}

#define LOAD_ARGP(opts) { .options = opts, .parser = parse_load }

static const struct argp load_argps[] = {
	[LOAD_HELP_IMPORT] = LOAD_ARGP(import_options),
	[LOAD_HELP_REPORT] = LOAD_ARGP(report_options),
	[LOAD_HELP_QUERY] = LOAD_ARGP(query_options),
	[LOAD_HELP_DIFF] = LOAD_ARGP(diff_options),
};

#define CHILD(help) { { &load_argps[help], 0, NULL, 0 }, { 0 } }

static const struct argp_child children[][2] = {
	[LOAD_HELP_IMPORT] = CHILD(LOAD_HELP_IMPORT),
	[LOAD_HELP_REPORT] = CHILD(LOAD_HELP_REPORT),
	[LOAD_HELP_QUERY] = CHILD(LOAD_HELP_QUERY),
	[LOAD_HELP_DIFF] = CHILD(LOAD_HELP_DIFF),
};

void take_one_file(struct argp_state *state, const char **input, const char *arg)
{
	if (*input)
		argp_error(state, "only one FILE");
	*input = arg;
}

const struct argp_child *load_options_children(enum load_help help)
{
	return children[help];
}
