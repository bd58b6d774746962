/* schema_views.c - creates the views of the perfcap schema. Each view is a
 * file of views/ (NAME.sql: one SELECT, runnable as written in the sqlite3
 * shell on an imported database), embedded at build time by
 * views/embed_views.py as "CREATE VIEW NAME AS ..." in the order of
 * views/meson.build. docs/schema.md documents each. */
#include <stddef.h>

#include "db.h"
#include "schema.h"

/* views_sql.c (generated): the CREATE VIEW statements, NULL-terminated. */
extern const char *const schema_view_sql[];

int schema_create_views(sqlite3 *db)
{
	for (size_t i = 0; schema_view_sql[i]; i++)
		if (db_exec(db, schema_view_sql[i]) < 0)
			return -1;
	return 0;
}
