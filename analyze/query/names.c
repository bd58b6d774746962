/* names.c - latest comm per thread and process (see names.h). Rows are
 * read in time order so the last one wins. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "names.h"

static int64_t add_string(struct names *n, const unsigned char *text)
{
	if (n->len == n->cap) {
		uint32_t new_cap = n->cap ? n->cap * 2 : 256;
		char **grown = realloc(n->strings, new_cap * sizeof(*grown));
		if (!grown)
			return -1;
		n->strings = grown;
		n->cap = new_cap;
	}
	n->strings[n->len] = strdup(text ? (const char *)text : "");
	if (!n->strings[n->len])
		return -1;
	return n->len++;
}

static int load_table(struct names *n, sqlite3 *db, const char *sql, struct hmap *into)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	int rc = 0;

	if (!st)
		return -1;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		uint64_t pid = (uint64_t)sqlite3_column_int64(st, 0);
		uint64_t tid = (uint64_t)sqlite3_column_int64(st, 1);
		int64_t index = add_string(n, sqlite3_column_text(st, 2));
		uint64_t *slot;

		if (index < 0)
			rc = -1;
		else if (!(slot = hmap_upsert(into, pid, tid, (uint64_t)index, NULL)))
			rc = -1;
		else
			*slot = (uint64_t)index;
	}
	sqlite3_finalize(st);
	return rc;
}

int names_load(struct names *n, sqlite3 *db)
{
	memset(n, 0, sizeof(*n));
	hmap_init(&n->threads);
	hmap_init(&n->processes);
	if (load_table(n, db, "SELECT pid, tid, comm FROM threads"
		       " WHERE comm <> '' ORDER BY ts, rowid", &n->threads) < 0)
		return -1;
	return load_table(n, db, "SELECT pid, 0, comm FROM processes"
			  " WHERE comm <> '' ORDER BY ts, rowid", &n->processes);
}

void names_free(struct names *n)
{
	for (uint32_t i = 0; i < n->len; i++)
		free(n->strings[i]);
	free(n->strings);
	hmap_free(&n->threads);
	hmap_free(&n->processes);
	memset(n, 0, sizeof(*n));
}

const char *names_thread(const struct names *n, uint32_t pid, uint32_t tid)
{
	const uint64_t *index = hmap_find(&n->threads, pid, tid);

	if (index)
		return n->strings[*index];
	index = hmap_find(&n->processes, pid, 0);
	return index ? n->strings[*index] : NULL;
}

const char *names_process(const struct names *n, uint32_t pid)
{
	const uint64_t *index = hmap_find(&n->processes, pid, 0);

	if (index)
		return n->strings[*index];
	index = hmap_find(&n->threads, pid, pid);
	return index ? n->strings[*index] : NULL;
}
