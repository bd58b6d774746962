/* temp_file.h - an unlinked temporary file for data that does not fit in
 * memory (the import's sorted runs: socket calls, the req source's
 * records, the pool's times), in the directory SQLite's own temporary
 * files use: TMPDIR, else /tmp. Nothing is left behind, even after a
 * crash: the name is gone as soon as the file is open. Also what every
 * user of such runs does the same way: read a run back in pieces, say
 * why a run could not be kept, and take a test's run size. */
#ifndef ANALYZE_TEMP_FILE_H
#define ANALYZE_TEMP_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* A new file opened for reading and writing ("w+b"), its name (prefix and
 * six random characters) already unlinked; NULL with errno set. */
FILE *temp_file_open(const char *prefix);

/* Reads up to max bytes of the region [*next, end) of f into buf,
 * advancing *next; *got is 0 at the region's end. 0, or -1 with errno
 * set (0 for a short read). */
int temp_file_read(FILE *f, void *buf, size_t max, off_t *next, off_t end, size_t *got);

/* "perfcap-analyze: who: what: <errno's text, or 'short read' when errno
 * is 0>" on stderr; returns -1. */
int temp_file_fail(const char *who, const char *what);

/* The positive decimal in the environment variable name, else fallback:
 * how the tests make runs of a few records, so that the merge is what
 * they check. */
size_t temp_file_run_size(const char *name, size_t fallback);

#endif /* ANALYZE_TEMP_FILE_H */
