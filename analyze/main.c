/* main.c - perfcap-analyze entry point: global options (--help,
 * --version) and dispatch to a subcommand. Each subcommand parses its own
 * options with argp and teaches its use in its --help. */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "cmd/commands.h"
#include "perfcap_version.h"

const char *argp_program_version =
	"perfcap-analyze " PERFCAP_VERSION " (" PERFCAP_GIT_HASH ")";

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "info", cmd_info },
	{ "import", cmd_import },
	{ "report", cmd_report },
	{ "query", cmd_query },
	{ "diff", cmd_diff },
	{ "export", cmd_export },
};

static const char doc[] =
"Analyze perfcap captures offline: no privileges, no access to the recorded host."
"\v"
"COMMANDS:\n"
"  info FILE               metadata, chunks, event counts, losses, damage\n"
"  import FILE -o DB       load a capture into a SQLite database\n"
"  report FILE|DB          where the time goes and why: a ranked diagnosis\n"
"  report --json FILE      the same report as JSON (docs/report-json.md)\n"
"  report --html OUT FILE  the same report as one self-contained page\n"
"  report --folded FILE    folded stacks for flame graphs\n"
"  query FILE|DB SQL       run SQL read-only; tab, CSV or JSON output\n"
"  diff BASE NEW           what changed: findings with statistics, CI verdict\n"
"  export --format F FILE  pprof, perfetto, speedscope, tables, openmetrics\n"
"  help COMMAND            options and examples of one command\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze info run.perfcap\n"
"  perfcap-analyze report run.perfcap\n"
"  perfcap-analyze report --pid 1234 --top 40 run.perfcap\n"
"  perfcap-analyze report --folded run.perfcap > out.folded\n"
"  perfcap-analyze import run.perfcap -o run.db && sqlite3 run.db\n"
"  perfcap-analyze query run.db 'SELECT * FROM data_quality'\n"
"  perfcap-analyze diff base.perfcap new.perfcap\n"
"  perfcap-analyze export --format pprof -o cpu.pb.gz run.perfcap\n"
"  perfcap-analyze help report\n"
"\n"
"See perfcap-analyze(1) and docs/schema.md for the database schema.";

struct main_args {
	int command_index;        /* index in argv of the command, 0 if none */
};

static error_t parse_main(int key, char *arg, struct argp_state *state)
{
	struct main_args *args = state->input;

	(void)arg;
	switch (key) {
	case ARGP_KEY_ARG:
		args->command_index = state->next - 1;
		state->next = state->argc; /* the command parses the rest */
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_usage(state);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp main_argp = {
	.parser = parse_main,
	.args_doc = "COMMAND [ARGS...]",
	.doc = doc,
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Runs a command with argv[0] replaced by "perfcap-analyze NAME" so its
 * usage and error lines name the full command. */
static int run_command(const struct command *cmd, int argc, char **argv)
{
	char display[64];

	snprintf(display, sizeof(display), "perfcap-analyze %s", cmd->name);
	argv[0] = display;
	return cmd->run(argc, argv);
}

static int unknown_command(const char *name)
{
	fprintf(stderr, "perfcap-analyze: unknown command '%s'\n"
		"Try 'perfcap-analyze --help' for the list of commands.\n", name);
	return EXIT_USAGE;
}

static int help_command(int argc, char **argv)
{
	char help_flag[] = "--help";
	char *help_argv[] = { NULL, help_flag, NULL };
	const struct command *cmd;

	if (argc < 2) {
		argp_help(&main_argp, stdout, ARGP_HELP_STD_HELP, (char *)"perfcap-analyze");
		return 0;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return unknown_command(argv[1]);
	return run_command(cmd, 2, help_argv);
}

int main(int argc, char **argv)
{
	struct main_args args = { 0 };
	const struct command *cmd;
	char **rest;

	argp_err_exit_status = EXIT_USAGE;
	/* no global memory statistics: they cost a global mutex per allocation */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (argp_parse(&main_argp, argc, argv, ARGP_IN_ORDER, NULL, &args) != 0)
		return EXIT_USAGE;
	rest = argv + args.command_index;
	if (strcmp(rest[0], "help") == 0)
		return help_command(argc - args.command_index, rest);
	cmd = find_command(rest[0]);
	if (!cmd)
		return unknown_command(rest[0]);
	return run_command(cmd, argc - args.command_index, rest);
}
