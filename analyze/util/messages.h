/* messages.h - the one-line messages every command prints the same way
 * and the exit codes they stand for. Used by the commands and by the
 * libraries below them (the loader names why a capture could not be
 * opened), so it lives in util/, not cmd/. */
#ifndef ANALYZE_UTIL_MESSAGES_H
#define ANALYZE_UTIL_MESSAGES_H

#define EXIT_USAGE 2  /* bad command line (argp errors exit with this too) */
#define EXIT_DAMAGED 3 /* output produced from a damaged capture's intact chunks */

/* "perfcap-analyze: FILE: what" on stderr; returns 1. */
int fail_file(const char *path, const char *what);

/* "perfcap-analyze: warning: FILE: damage" on stderr;
 * returns EXIT_DAMAGED. */
int warn_damage(const char *path, const char *damage);

/* The one-line reason pc_reader_open failed with rc, given the
 * reader's own message (may be empty): "not a perfcap capture", the
 * version refusal naming both versions, or the system error. */
const char *capture_open_error(int rc, const char *reader_message);

#endif /* ANALYZE_UTIL_MESSAGES_H */
