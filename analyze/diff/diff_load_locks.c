/* diff_load_locks.c - lock waits for diff, keyed by the function that
 * waited rather than by the lock's address (which moves between runs):
 * futex waits (futex_calls), user mutex waits (user_mutexes) and kernel
 * lock waits (kernel_locks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "diff_sql.h"

/* The function a lock wait came from: the first frame of its stack that
 * is not in the C library (pthread_mutex_lock, __lll_lock_wait, syscall
 * wrappers), or for kernel stacks the first not named *lock* or
 * *contention*. Results cached per stack id. */
struct site_finder {
	sqlite3_stmt *frames;
	struct hmap cache;        /* (stack id, 0) -> index + 1 into names */
	char **names;
	size_t len, cap;
};

static int is_libc_module(const char *module)
{
	const char *base = strrchr(module, '/');

	base = base ? base + 1 : module;
	return strncmp(base, "libc.", 5) == 0 || strncmp(base, "libc-", 5) == 0 ||
	       strncmp(base, "libpthread", 10) == 0 || strncmp(base, "ld-linux", 8) == 0;
}

static char *find_site(struct site_finder *sf, int64_t stack_id)
{
	char *site = NULL, *first = NULL;

	sqlite3_bind_int64(sf->frames, 1, stack_id);
	while (!site && sqlite3_step(sf->frames) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(sf->frames, 0);
		const char *module = (const char *)sqlite3_column_text(sf->frames, 1);
		int kernel = sqlite3_column_int(sf->frames, 2);

		if (!name || !module)
			continue;
		if (!first)
			first = strdup(name);
		if (kernel ? !strstr(name, "lock") && !strstr(name, "contention")
			   : !is_libc_module(module))
			site = strdup(name);
	}
	sqlite3_reset(sf->frames);
	if (!site) {
		site = first;
		first = NULL;
	}
	free(first);
	return site;
}

static const char *site_of(struct site_finder *sf, int64_t stack_id)
{
	uint64_t *slot = hmap_find(&sf->cache, (uint64_t)stack_id, 0);
	char *site;

	if (slot)
		return sf->names[*slot - 1];
	site = find_site(sf, stack_id);
	if (!site)
		return NULL;
	if (sf->len == sf->cap) {
		size_t cap = sf->cap ? sf->cap * 2 : 32;
		char **names = realloc(sf->names, cap * sizeof(*names));

		if (!names) {
			free(site);
			return NULL;
		}
		sf->names = names;
		sf->cap = cap;
	}
	sf->names[sf->len++] = site;
	hmap_upsert(&sf->cache, (uint64_t)stack_id, 0, sf->len, NULL);
	return site;
}

/* Rows of (comm, stack id or NULL, duration): lock waits by site. */
static int load_lock_waits(struct diff_run *run, sqlite3 *db, struct site_finder *sf,
			   const char *sql, const char *kind)
{
	sqlite3_stmt *st = diff_try_prepare(db, sql);
	char key[512];
	int rc;

	if (!st)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *comm = (const char *)sqlite3_column_text(st, 0);
		const char *site = NULL;
		int64_t v = sqlite3_column_int64(st, 2);
		struct dseries *s;

		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			site = site_of(sf, sqlite3_column_int64(st, 1));
		if (site)
			snprintf(key, sizeof(key), DIFF_LOCK "%s:%s", kind, site);
		else
			snprintf(key, sizeof(key), DIFF_LOCK "%s:[no stack] %s", kind,
				 comm ? comm : "?");
		s = diff_table_get(&run->latency, key);
		if (!s || diff_latency_push(run, s, v > 0 ? (uint64_t)v : 0) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int diff_load_locks(struct diff_run *run, sqlite3 *db)
{
	struct site_finder sf = { 0 };
	int rc = 0;

	sf.frames = diff_try_prepare(db, "SELECT f.name, f.module, f.kind = 'kernel' FROM "
				"stack_frames sf JOIN frames f USING (frame_id) WHERE "
				"sf.stack_id = ?1 ORDER BY sf.position");
	if (!sf.frames)
		return 0;
	hmap_init(&sf.cache);
	rc |= load_lock_waits(run, db, &sf, "WITH " THREAD_NAMES("syscalls") " SELECT n.comm,"
			      " s.ustack_id, s.duration FROM futex_calls s JOIN names n ON"
			      " n.pid = s.pid AND n.tid = s.tid WHERE s.kind = 'wait'", "futex");
	rc |= load_lock_waits(run, db, &sf, "SELECT " COMM_OF("s.pid", "s.tid") ", ustack_id, duration"
			      " FROM user_mutexes s", "mutex");
	rc |= load_lock_waits(run, db, &sf, "SELECT " COMM_OF("s.pid", "s.tid") ", kstack_id, duration"
			      " FROM kernel_locks s", "kernel");
	for (size_t i = 0; i < sf.len; i++)
		free(sf.names[i]);
	free(sf.names);
	hmap_free(&sf.cache);
	sqlite3_finalize(sf.frames);
	return rc ? -1 : 0;
}

