/* host_cpu.c - the host's busy, idle and stolen CPU time of a capture and
 * its sampling ticks (see host_cpu.h). */
#include <math.h>
#include <stddef.h>

#include "common/sampling_ticks.h"
#include "db/db.h"
#include "host_cpu.h"

static const char stat_sql[] = "SELECT value FROM stats WHERE chunk = 'stats' AND key = ?1";
static const char meta_sql[] = "SELECT value FROM meta WHERE key = ?1";

void host_cpu_time_read(sqlite3 *db, struct host_cpu_time *t)
{
	int64_t busy = db_lookup_int(db, stat_sql, "host.cpu.busy_ns", NULL, -1);
	int64_t idle = db_lookup_int(db, stat_sql, "host.cpu.idle_ns", NULL, -1);
	int64_t steal = db_lookup_int(db, stat_sql, "host.cpu.steal_ns", NULL, -1);

	t->known = busy >= 0 && idle >= 0 && steal >= 0;
	t->busy_ns = t->known ? (double)busy : 0;
	t->idle_ns = t->known ? (double)idle : 0;
	t->steal_ns = t->known ? (double)steal : 0;
}

double host_cpu_measured_steal(const struct host_cpu_time *t)
{
	return t->known && t->busy_ns + t->steal_ns >= 1e9 ? host_cpu_stolen_share(t) : NAN;
}

double host_cpu_stolen_share(const struct host_cpu_time *t)
{
	double ran = t->busy_ns + t->steal_ns;

	return t->known && ran > 0 ? t->steal_ns / ran : 0;
}

void sampling_ticks_read(sqlite3 *db, struct sampling_ticks *t)
{
	int64_t due = db_lookup_int(db, stat_sql, "cpu.ticks.due", NULL, -1);
	int64_t missed = db_lookup_int(db, stat_sql, "cpu.ticks.missed", NULL, -1);
	int64_t ncpus = db_lookup_int(db, meta_sql, "host.ncpus", NULL, 0);
	int64_t hz = db_lookup_int(db, meta_sql, "sampling.cpu.freq_hz", NULL, 0);

	t->known = due > 0 && missed >= 0;
	t->due = t->known ? (double)due : 0;
	t->missed = t->known ? (double)missed : 0;
	t->slack = ncpus > 0 && hz > 0 ? (double)sampling_ticks_slack((uint64_t)ncpus, (uint64_t)hz) : 0;
}

double sampling_ticks_missed_share(const struct sampling_ticks *t)
{
	if (!t->known)
		return NAN;
	return t->missed > t->slack ? (t->missed - t->slack) / t->due : 0;
}
