/* temp_file.h - an unlinked temporary file for data that does not fit in
 * memory (the request pass's sorted runs), in the directory SQLite's own
 * temporary files use: TMPDIR, else /tmp. Nothing is left behind, even
 * after a crash: the name is gone as soon as the file is open. */
#ifndef ANALYZE_TEMP_FILE_H
#define ANALYZE_TEMP_FILE_H

#include <stdio.h>

/* A new file opened for reading and writing ("w+b"), its name (prefix and
 * six random characters) already unlinked; NULL with errno set. */
FILE *temp_file_open(const char *prefix);

#endif /* ANALYZE_TEMP_FILE_H */
