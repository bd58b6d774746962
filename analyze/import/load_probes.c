/* load_probes.c - the `probes` table (docs/schema.md): one row per user
 * probe of the recording (format 1.5), joining what the recorder wrote
 * about it in META (probe.N.spec, kind, path, build-id, offset, where it
 * was attached or why not) with the kernel's exact counts in STATS
 * (probe.N.hits, calls, total_ns, hist ...) and the PROBE records the
 * capture holds (records); a probe placed after the META (-e gc, on a
 * runtime a traced process exec'd) is described in STATS. Built in SQL
 * once the events are in. */
#include "db/db.h"
#include "load_state.h"

/* probe.N.FIELD of table t (meta or stats) for the probe id n. */
#define FIELD(t, f) "(SELECT value FROM " t " WHERE key = 'probe.' || n || '." f "')"
/* What describes probe n: META, or STATS for a probe placed after the META
 * was written (-e gc, a traced process exec'ing a runtime). */
#define DESC(f) "coalesce(" FIELD("meta", f) ", " FIELD("stats", f) ")"
#define IDS(t) "SELECT CAST(substr(key, 7, length(key) - 11) AS INTEGER) FROM " t \
	" WHERE key GLOB 'probe.[0-9]*.spec'"

static const char build_sql[] =
	"WITH ids(n) AS (" IDS("meta") " UNION " IDS("stats") "),"
	" rec(probe_id, records) AS (SELECT probe_id, count(*) FROM probe_hits"
	"  GROUP BY probe_id)"
	" INSERT INTO probes SELECT n, " DESC("kind") ", " DESC("spec") ", "
	DESC("file") ", " DESC("name") ", " DESC("args") ", "
	DESC("path") ", " DESC("build_id") ", "
	"CAST(" DESC("offset") " AS INTEGER), " DESC("attached") ", "
	DESC("failed") ", "
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
