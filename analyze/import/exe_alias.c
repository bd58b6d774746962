/* exe_alias.c - the path a process was started with, for naming its main
 * executable (see exe_alias.h). Read for every pid at once from the
 * processes table (each pid's last row). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "db/db.h"
#include "exe_alias.h"

#define COMM_MAX 15  /* TASK_COMM_LEN less the NUL */

static const char *base_of(const char *path, size_t len, size_t *base_len)
{
	const char *b = path;

	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	*base_len = len - (size_t)(b - path);
	return b;
}

int exe_alias_of(const char *exe, const char *argv0, const char *comm, char *out, size_t len)
{
	size_t n0 = strcspn(argv0, " "), nb0, nbe, nc = strlen(comm);
	const char *b0 = base_of(argv0, n0, &nb0), *be = base_of(exe, strlen(exe), &nbe);
	int has_dir = memchr(argv0, '/', n0) != NULL;

	if (!nb0 || !nc || exe[0] != '/')
		return 0;
	if (nb0 == nbe && memcmp(b0, be, nb0) == 0)
		return 0;  /* the same name: nothing to add */
	/* comm is the base name execve was given, cut to 15 bytes: argv[0]
	 * must say the same, else it was rewritten (a process title) */
	if (nc > nb0 || memcmp(b0, comm, nc) != 0 || (nc < COMM_MAX && nc != nb0))
		return 0;
	if (has_dir && argv0[0] == '/')
		snprintf(out, len, "%.*s", (int)n0, argv0);
	else  /* a bare or relative name: beside the executable */
		snprintf(out, len, "%.*s%.*s", (int)(be - exe), exe, (int)nb0, b0);
	return 1;
}

void exe_aliases_free(struct exe_aliases *a)
{
	for (uint32_t i = 0; i < a->len; i++) {
		free(a->entries[i].exe);
		free(a->entries[i].alias);
	}
	free(a->entries);
	hmap_free(&a->by_pid);
	memset(a, 0, sizeof(*a));
}

static const char *text_col(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? (const char *)t : "";
}

/* The entry of a processes row (exe, cmdline, comm in columns 1-3): its
 * index, or UINT64_MAX if it has no alias (or on out-of-memory: then
 * frames keep the resolved name). */
static uint64_t entry_of(struct exe_aliases *a, sqlite3_stmt *row)
{
	struct exe_alias_entry e = { 0 };
	char buf[4096];

	if (!exe_alias_of(text_col(row, 1), text_col(row, 2), text_col(row, 3), buf, sizeof(buf)))
		return UINT64_MAX;
	if (a->len == a->cap) {
		uint32_t cap = a->cap ? 2 * a->cap : 16;
		struct exe_alias_entry *grown = realloc(a->entries, cap * sizeof(*grown));

		if (!grown)
			return UINT64_MAX;
		a->entries = grown;
		a->cap = cap;
	}
	e.exe = strdup(text_col(row, 1));
	e.alias = strdup(buf);
	if (!e.exe || !e.alias) {
		free(e.exe);
		free(e.alias);
		return UINT64_MAX;
	}
	a->entries[a->len] = e;
	return a->len++;
}

/* Every process's alias from its last processes row, in one pass: the
 * table has no index yet while an import resolves its stacks, and a
 * lookup per pid scanned it for each (a run of 1,355 short-lived
 * postgres backends: 0.09 s). */
int exe_aliases_init(struct exe_aliases *a, sqlite3 *db)
{
	sqlite3_stmt *rows;
	int rc;

	memset(a, 0, sizeof(*a));
	hmap_init(&a->by_pid);
	rows = db_prepare(db, "SELECT pid, exe, cmdline, comm FROM processes ORDER BY pid, ts");
	if (!rows)
		return -1;
	while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
		uint64_t entry = entry_of(a, rows);
		uint64_t *slot = hmap_upsert(&a->by_pid, (uint64_t)sqlite3_column_int64(rows, 0), 0,
					     entry, NULL);

		if (!slot)
			break;
		*slot = entry; /* a later row of the pid replaces an earlier one */
	}
	sqlite3_finalize(rows);
	return rc == SQLITE_DONE ? 0 : -1;
}

const char *exe_alias(struct exe_aliases *a, uint32_t pid, const char *path)
{
	uint64_t *slot = hmap_find(&a->by_pid, pid, 0);

	if (!slot || *slot == UINT64_MAX || strcmp(a->entries[*slot].exe, path) != 0)
		return NULL;
	return a->entries[*slot].alias;
}
