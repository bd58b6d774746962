/* load_runtimes.c - the `process_runtimes` table (docs/schema.md): the
 * language runtime of each process (util/runtimes.c's rules) from its
 * recorded executable and command line (its last PROC record), the files
 * it mapped (MAP) and whether its stacks hit Go runtime functions
 * (frames). Built once the stacks are resolved. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"
#include "util/runtimes.h"

#define MAPS_MAX 512

static const char facts_sql[] =
	"WITH p AS (SELECT pid, exe, cmdline, max(ts) FROM processes GROUP BY pid),"
	" m AS (SELECT pid, group_concat(path, char(10)) AS paths FROM"
	"  (SELECT DISTINCT pid, path FROM maps WHERE path LIKE '/%') GROUP BY pid),"
	" gf AS (SELECT frame_id FROM frames WHERE function IN ('runtime.goexit',"
	"  'runtime.goexit.abi0', 'runtime.main', 'runtime.mstart', 'runtime.mstart0',"
	"  'runtime.gcBgMarkWorker', 'runtime.schedule', 'runtime.mcall')),"
	" g AS (SELECT DISTINCT s.pid FROM stack_frames sf JOIN stacks s"
	"  ON s.stack_id = sf.stack_id WHERE sf.frame_id IN gf)"
	" SELECT p.pid, p.exe, p.cmdline, m.paths, p.pid IN g FROM p LEFT JOIN m USING (pid)"
	" ORDER BY p.pid";

static const char insert_sql[] =
	"INSERT INTO process_runtimes (pid, runtime, version, confidence, evidence, advice)"
	" VALUES (?, ?, ?, ?, ?, ?)";

/* Splits the newline-joined paths (modified in place) into out. */
static size_t split_paths(char *paths, const char **out, size_t max)
{
	size_t n = 0;

	for (char *p = paths; p && *p && n < max;) {
		char *nl = strchr(p, '\n');

		out[n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return n;
}

/* argv[0]: the command line up to its first space (stored space-joined). */
static char *first_word(const char *cmdline)
{
	size_t n = cmdline ? strcspn(cmdline, " ") : 0;
	char *w = n ? malloc(n + 1) : NULL;

	if (w) {
		memcpy(w, cmdline, n);
		w[n] = '\0';
	}
	return w;
}

static int store_one(sqlite3_stmt *ins, sqlite3_stmt *st)
{
	const char *maps[MAPS_MAX];
	const unsigned char *paths_text = sqlite3_column_text(st, 3);
	char *paths = paths_text ? strdup((const char *)paths_text) : NULL;
	char *argv0 = first_word((const char *)sqlite3_column_text(st, 2));
	struct runtime_facts facts = {
		.exe = (const char *)sqlite3_column_text(st, 1),
		.argv0 = argv0,
		.maps = maps,
		.nmaps = split_paths(paths, maps, MAPS_MAX),
		.go_symbols = sqlite3_column_int(st, 4),
	};
	struct runtime_guess g;
	int rc = 0;

	if (runtime_identify(&facts, &g)) {
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(st, 0));
		db_bind_text(ins, 2, g.runtime);
		if (g.version[0])
			db_bind_text(ins, 3, g.version);
		else
			sqlite3_bind_null(ins, 3);
		sqlite3_bind_int(ins, 4, g.confidence);
		db_bind_text(ins, 5, g.evidence);
		db_bind_text(ins, 6, g.advice ? g.advice : "");
		rc = db_run(ins);
	}
	free(paths);
	free(argv0);
	return rc;
}

int runtimes_build(sqlite3 *db)
{
	sqlite3_stmt *st = db_prepare(db, facts_sql), *ins = db_prepare(db, insert_sql);
	int rc = st && ins ? 0 : -1;

	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = store_one(ins, st);
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return rc;
}
