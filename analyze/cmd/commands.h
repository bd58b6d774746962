/* commands.h - the subcommands of perfcap-analyze. Each cmd_* takes the arguments
 * after the program name (argv[0] is the command's display name) and
 * returns the process exit status. */
#ifndef ANALYZE_COMMANDS_H
#define ANALYZE_COMMANDS_H

#include "util/messages.h"   /* EXIT_USAGE, EXIT_DAMAGED, fail_file */
#include "util/parse.h"      /* parse_number, parse_duration, parse_window */

int cmd_info(int argc, char **argv);    /* cmd_info.c */
int cmd_import(int argc, char **argv);  /* cmd_import.c */
int cmd_report(int argc, char **argv);  /* cmd_report.c */
int cmd_query(int argc, char **argv);   /* cmd_query.c */
int cmd_diff(int argc, char **argv);    /* cmd_diff.c */
int cmd_export(int argc, char **argv);  /* cmd_export.c */

#endif /* ANALYZE_COMMANDS_H */
