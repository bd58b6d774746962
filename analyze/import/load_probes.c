/* load_probes.c - the `probes` table (docs/schema.md): one row per user
 * probe of the recording (format 1.5), joining what the recorder wrote
 * about it in META (probe.N.spec, kind, path, build-id, offset, where it
 * was attached or why not) with the kernel's exact counts in STATS
 * (probe.N.hits, calls, total_ns, hist ...) and the PROBE records the
 * capture holds (records). Built in SQL once the events are in. */
#include "db/db.h"
#include "load_state.h"

/* probe.N.FIELD of table t (meta or stats) for the probe id n. */
#define FIELD(t, f) "(SELECT value FROM " t " WHERE key = 'probe.' || n || '." f "')"

static const char build_sql[] =
	"WITH ids(n) AS (SELECT CAST(substr(key, 7, length(key) - 11) AS INTEGER)"
	"  FROM meta WHERE key GLOB 'probe.[0-9]*.spec'),"
	" rec(probe_id, records) AS (SELECT probe_id, count(*) FROM probe_hits"
	"  GROUP BY probe_id)"
	" INSERT INTO probes SELECT n, " FIELD("meta", "kind") ", " FIELD("meta", "spec") ", "
	FIELD("meta", "file") ", " FIELD("meta", "name") ", " FIELD("meta", "args") ", "
	FIELD("meta", "path") ", " FIELD("meta", "build_id") ", "
	"CAST(" FIELD("meta", "offset") " AS INTEGER), " FIELD("meta", "attached") ", "
	FIELD("meta", "failed") ", "
	"CAST(" FIELD("stats", "hits") " AS INTEGER), CAST(" FIELD("stats", "calls") " AS INTEGER), "
	"CAST(" FIELD("stats", "total_ns") " AS INTEGER), "
	"CAST(" FIELD("stats", "below_min") " AS INTEGER), "
	"CAST(" FIELD("stats", "unmatched") " AS INTEGER), "
	"CAST(" FIELD("stats", "too_deep") " AS INTEGER), " FIELD("stats", "hist") ", "
	"coalesce(rec.records, 0)"
	" FROM ids LEFT JOIN rec ON rec.probe_id = ids.n ORDER BY n";

int probes_build(sqlite3 *db)
{
	return db_exec(db, build_sql);
}
