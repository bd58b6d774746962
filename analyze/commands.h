/* commands.h - the subcommands of perfcap-analyze and the few helpers
 * they share for user-facing messages. Each cmd_* takes the arguments
 * after the program name (argv[0] is the command's display name) and
 * returns the process exit status. */
#ifndef ANALYZE_COMMANDS_H
#define ANALYZE_COMMANDS_H

#define EXIT_USAGE 2  /* bad command line (argp errors exit with this too) */
#define EXIT_DAMAGED 3 /* output produced from a damaged capture's intact chunks */

int cmd_info(int argc, char **argv);    /* cmd_info.c */
int cmd_import(int argc, char **argv);  /* cmd_import.c */
int cmd_report(int argc, char **argv);  /* cmd_report.c */
int cmd_query(int argc, char **argv);   /* cmd_query.c */
int cmd_diff(int argc, char **argv);    /* cmd_diff.c */

/* messages.c: "perfcap-analyze: FILE: what" on stderr; returns 1. */
int fail_file(const char *path, const char *what);

/* messages.c: "perfcap-analyze: warning: FILE: damage" on stderr;
 * returns EXIT_DAMAGED. */
int warn_damage(const char *path, const char *damage);

/* messages.c: the one-line reason pc_reader_open failed with rc, given the
 * reader's own message (may be empty): "not a perfcap capture", the
 * version refusal naming both versions, or the system error. */
const char *capture_open_error(int rc, const char *reader_message);

/* messages.c: parses a decimal number in [min, max]; 0 or -1. */
int parse_number(const char *text, unsigned long long min, unsigned long long max,
		 unsigned long long *out);

/* messages.c: parses a duration: a decimal number of seconds, or one with
 * a unit ("500ms", "250us", "2s", "1000000ns"), into ns in [min, max].
 * 0 or -1. */
int parse_duration(const char *text, unsigned long long min_ns,
		   unsigned long long max_ns, unsigned long long *out_ns);

/* messages.c: --window, a duration from 1 ms to 1 day. 0 or -1. */
int parse_window(const char *text, unsigned long long *out_ns);

#endif /* ANALYZE_COMMANDS_H */
