/* cli.h - perfcap-record's command line: the options, their validation,
 * and the --help text. */
#ifndef RECORD_CLI_H
#define RECORD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum target_mode {
	TARGET_NONE = 0,
	TARGET_COMMAND,       /* -- CMD ARGS */
	TARGET_PIDS,          /* -p PID[,PID...] */
	TARGET_ALL,           /* -a */
};

#define DEFAULT_FREQ_HZ    99
#define DEFAULT_OUTPUT     "run.perfcap"
#define FALLBACK_MAX_FREQ  100000

struct record_options {
	uint64_t freq_hz;
	const char *output;
	bool force;
	uint64_t duration_ns;     /* 0: until the target ends or a signal */
	enum target_mode mode;
	pid_t *pids;              /* TARGET_PIDS */
	size_t npids;
	char **command;           /* TARGET_COMMAND: NULL-terminated argv */
	bool verbose;
	int argc;                 /* perfcap-record's own argv, for the META */
	char **argv;
};

/* Parses and validates argv. On any error prints one line and returns
 * non-zero (the exit status to use). */
int cli_parse(int argc, char **argv, struct record_options *opts);

const char *target_mode_name(enum target_mode mode);

void cli_free(struct record_options *opts);

#endif /* RECORD_CLI_H */
