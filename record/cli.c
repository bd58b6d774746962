/* cli.c - perfcap-record's command line, in the style of libbpf-tools:
 * argp options with a --help that teaches by example, then validation of
 * every value with one clear error line. */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perfcap_version.h"
#include "target.h"
#include "util.h"

#define MAX_DURATION_S (365.0 * 24 * 3600)

const char *argp_program_version =
	"perfcap-record " PERFCAP_VERSION " (git " PERFCAP_GIT_HASH ")";

static const char doc[] =
"Record CPU stack samples (user and kernel) into a perfcap capture file.\n"
"\n"
"EXAMPLES:\n"
"    perfcap-record -- ./myprog arg      # a command and its children, 99 Hz\n"
"    perfcap-record -F 999 -- make -j4   # 999 samples/s on each CPU\n"
"    perfcap-record -p 1234 -d 30        # a running process, for 30 s\n"
"    perfcap-record -p 1234,5678         # until both exit, or Ctrl-C\n"
"    perfcap-record -a -d 10 -o all.perfcap   # the whole system, 10 s\n"
"    perfcap-analyze report run.perfcap  # then read it, on any machine"
"\v"
"Give exactly one target: -p, -a, or a command after the options (put -- "
"before a command that has options of its own). Processes forked by the "
"command or by a -p process are followed. Recording stops when the command or "
"all -p processes have exited, after -d SECONDS (a command still running then "
"gets SIGTERM), or on Ctrl-C / SIGTERM; the capture is complete in every case.\n"
"\n"
"Needs root, or CAP_BPF and CAP_PERFMON, and a kernel with BTF "
"(/sys/kernel/btf/vmlinux). Exit status: 0 when the capture was written, 1 on "
"any error.";

static const struct argp_option options[] = {
	{ "freq", 'F', "HZ", 0, "Samples per second on each CPU (default 99)", 0 },
	{ "output", 'o', "FILE", 0, "Capture file to write (default run.perfcap)", 0 },
	{ "force", 'f', NULL, 0, "Overwrite FILE if it exists", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after SECONDS (decimals allowed)", 0 },
	{ "pid", 'p', "PID[,PID...]", 0, "Record these running processes", 0 },
	{ "all-cpus", 'a', NULL, 0, "Record the whole system", 0 },
	{ "verbose", 'v', NULL, 0, "Print progress and libbpf's messages", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct parse_state {
	struct record_options *opts;
	const char *freq_arg;
	const char *duration_arg;
	const char *pid_arg;
	int ntargets;
};

static error_t parse_option(int key, char *arg, struct argp_state *state)
{
	struct parse_state *ps = state->input;
	struct record_options *o = ps->opts;

	switch (key) {
	case 'F':
		ps->freq_arg = arg;
		break;
	case 'o':
		o->output = arg;
		break;
	case 'f':
		o->force = true;
		break;
	case 'd':
		ps->duration_arg = arg;
		break;
	case 'p':
		if (!ps->pid_arg)
			ps->ntargets++;
		ps->pid_arg = arg;
		break;
	case 'a':
		if (o->mode != TARGET_ALL)
			ps->ntargets++;
		o->mode = TARGET_ALL;
		break;
	case 'v':
		o->verbose = true;
		break;
	case ARGP_KEY_ARGS:
		o->command = state->argv + state->next;
		ps->ntargets++;
		state->next = state->argc;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static uint64_t kernel_max_freq(void)
{
	char line[64];
	uint64_t value;

	if (read_first_line("/proc/sys/kernel/perf_event_max_sample_rate", line, sizeof(line)) ||
	    !parse_u64_in_range(line, 1, UINT32_MAX, &value))
		return FALLBACK_MAX_FREQ;
	return value;
}

static int validate_freq(struct record_options *o, const char *arg)
{
	uint64_t max = kernel_max_freq();
	uint64_t value;

	if (!arg)
		return 0;
	if (!parse_u64_in_range(arg, 0, UINT64_MAX, &value) || value == 0) {
		error_line("invalid frequency '%s': expected a whole number of samples per "
			   "second from 1 to %llu", arg, (unsigned long long)max);
		return 1;
	}
	if (value > max) {
		error_line("frequency %s Hz is above the kernel limit of %llu Hz "
			   "(/proc/sys/kernel/perf_event_max_sample_rate)",
			   arg, (unsigned long long)max);
		return 1;
	}
	o->freq_hz = value;
	return 0;
}

static int validate_duration(struct record_options *o, const char *arg)
{
	char *end;
	double seconds;

	if (!arg)
		return 0;
	errno = 0;
	seconds = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(seconds) || seconds <= 0 ||
	    seconds > MAX_DURATION_S) {
		error_line("invalid duration '%s': expected seconds greater than 0 "
			   "(at most one year)", arg);
		return 1;
	}
	o->duration_ns = (uint64_t)(seconds * 1e9);
	if (!o->duration_ns)
		o->duration_ns = 1;
	return 0;
}

static int validate_target(struct record_options *o, struct parse_state *ps)
{
	int err;

	if (ps->ntargets == 0) {
		error_line("no target: give -p PID, -a, or a command to run (see --help)");
		return 1;
	}
	if (ps->ntargets > 1) {
		error_line("choose one target: -p PID, -a, or a command, not several");
		return 1;
	}
	if (o->command) {
		o->mode = TARGET_COMMAND;
		err = command_check_runnable(o->command[0]);
		if (err) {
			error_line("cannot run '%s': %s", o->command[0],
				   err == -ENOENT ? "command not found" : strerror(-err));
			return 1;
		}
		return 0;
	}
	if (ps->pid_arg) {
		o->mode = TARGET_PIDS;
		return parse_pid_list(ps->pid_arg, &o->pids, &o->npids) ? 1 : 0;
	}
	return 0; /* -a */
}

/* argp and getopt name the program after argv[0] in their messages: give
 * them "perfcap-record", not the path it was started by. */
static int parse_with_short_name(const struct argp *argp, int argc, char **argv,
				 struct parse_state *ps)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int err;

	if (!args)
		return ENOMEM;
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	args[0] = (char *)PROGRAM_NAME;
	err = argp_parse(argp, argc, args, ARGP_IN_ORDER, NULL, ps);
	/* the command (if any) points into args: keep it pointing into argv */
	if (ps->opts->command)
		ps->opts->command = argv + (ps->opts->command - args);
	free(args);
	return err;
}

int cli_parse(int argc, char **argv, struct record_options *opts)
{
	static const struct argp argp = {
		.options = options,
		.parser = parse_option,
		.args_doc = "-p PID[,PID...]\n-a\n[--] COMMAND [ARGS...]",
		.doc = doc,
	};
	struct parse_state ps = { .opts = opts };
	int err;

	memset(opts, 0, sizeof(*opts));
	opts->freq_hz = DEFAULT_FREQ_HZ;
	opts->output = DEFAULT_OUTPUT;
	opts->argc = argc;
	opts->argv = argv;
	argp_err_exit_status = 1;
	err = parse_with_short_name(&argp, argc, argv, &ps);
	if (err)
		return 1;
	verbose_enabled = opts->verbose;
	if (validate_freq(opts, ps.freq_arg) || validate_duration(opts, ps.duration_arg))
		return 1;
	if (!opts->output[0]) {
		error_line("the output file name is empty");
		return 1;
	}
	return validate_target(opts, &ps);
}

const char *target_mode_name(enum target_mode mode)
{
	switch (mode) {
	case TARGET_COMMAND:
		return "command";
	case TARGET_PIDS:
		return "pids";
	case TARGET_ALL:
		return "all";
	default:
		return "none";
	}
}

void cli_free(struct record_options *opts)
{
	free(opts->pids);
	opts->pids = NULL;
	opts->npids = 0;
}
