/* open_input.c - a database, or a capture imported into a private
 * temporary database (see open_input.h). */
#include <stdio.h>
#include <string.h>

#include "util/messages.h"
#include "db/db.h"
#include "open_input.h"
#include "db/schema.h"
#include "safe_file.h"

static sqlite3 *open_database(const char *path, int load_options_given, int *status)
{
	char why[256];
	sqlite3 *db;

	if (load_options_given)
		fprintf(stderr, "perfcap-analyze: note: %s is a database; symbols were "
			"resolved at import, --symfs/--no-local-files ignored\n", path);
	db = db_open_readonly(path);
	if (!db) {
		*status = 1;
		return NULL;
	}
	if (schema_check(db, why, sizeof(why)) < 0) {
		*status = fail_file(path, why);
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

/* SQLite's private temporary database (file name ""): pages stay in the
 * capped page cache and spill to an unlinked file in SQLITE_TMPDIR, TMPDIR,
 * /var/tmp or /tmp, so a capture larger than RAM is analyzed in bounded
 * memory, and nothing is left behind. */
static sqlite3 *import_to_temporary(const char *path, const struct load_options *load,
				    int *status)
{
	char why[256] = "";
	struct load_summary sum;
	sqlite3 *db = db_open_for_load("");
	int rc;

	if (!db) {
		*status = 1;
		return NULL;
	}
	rc = load_capture(db, path, load, &sum, why, sizeof(why));
	if (rc == LOAD_OK) {
		db_use_reader_cache(db);
		return db;
	}
	*status = fail_file(path, rc == LOAD_NOT_CAPTURE ? why : "import failed");
	sqlite3_close(db);
	return NULL;
}

sqlite3 *open_input(const char *path, const struct load_options *load,
		    int load_options_given, int *status)
{
	if (is_sqlite_file(path))
		return open_database(path, load_options_given, status);
	return import_to_temporary(path, load, status);
}
