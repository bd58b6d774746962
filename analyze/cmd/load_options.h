/* load_options.h - the options of every command that may load a capture
 * (import, report, query, diff): --symfs, --no-local-files and, where the
 * command offers it, --window. One argp child parses them for all four; a
 * command adds load_options_child(...) to its argp's children and points
 * the child at its struct load_args on ARGP_KEY_INIT. */
#ifndef ANALYZE_CMD_LOAD_OPTIONS_H
#define ANALYZE_CMD_LOAD_OPTIONS_H

#include <argp.h>

#include "import/loader.h"

struct load_args {
	struct load_options opts;   /* local_files and progress set by the child */
	int given;                  /* an option only captures use was given */
};

/* How a command's --help words the options (the words are unchanged from
 * when each command listed its own). */
enum load_help {
	LOAD_HELP_IMPORT,   /* --symfs, --no-local-files, --window */
	LOAD_HELP_REPORT,   /* --symfs, --no-local-files "(captures only)" */
	LOAD_HELP_QUERY,    /* as report, and --window */
	LOAD_HELP_DIFF,     /* as report, "the captures" */
};

/* The children array (one child, then the end) for a command's argp. */
const struct argp_child *load_options_children(enum load_help help);

/* For the command's parser at ARGP_KEY_INIT. */
static inline void load_args_attach(struct argp_state *state, struct load_args *args)
{
	state->child_inputs[0] = args;
}

/* ARGP_KEY_ARG of a command that takes one FILE (import, report). */
void take_one_file(struct argp_state *state, const char **input, const char *arg);

#endif /* ANALYZE_CMD_LOAD_OPTIONS_H */
