/* open_input.h - opening what a command is given: a database made by
 * "import" (read-only, schema version checked) or a capture, imported into
 * a private temporary database first (pages beyond the cache spill to an
 * unlinked file), so both give the same results in bounded memory. */
#ifndef ANALYZE_OPEN_INPUT_H
#define ANALYZE_OPEN_INPUT_H

#include <sqlite3.h>

#include "loader.h"

/* Opens path either way. load_options_given: the user passed options that
 * only apply to captures (a note is printed for a database). NULL with
 * *status set to the exit status on failure (reported). */
sqlite3 *open_input(const char *path, const struct load_options *load,
		    int load_options_given, int *status);

#endif /* ANALYZE_OPEN_INPUT_H */
