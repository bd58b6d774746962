/* quality.c - after frames are resolved: stores the per-(thread, stack
 * pair) sample counts and the data-quality table: samples, losses,
 * truncated and probably truncated stacks, stack errors, unresolved
 * frames, unknown or malformed content and file damage (the event sources'
 * rows come from quality_sources.c). docs/schema.md lists every (source,
 * key). */
#include <stdio.h>
#include <string.h>

#include "db/db.h"
#include "load_state.h"
#include "quality.h"
#include "record_types.h"
#include "symbolize/symbolize.h"

struct quality_totals {
	uint64_t samples_no_stack;
	uint64_t samples_user_stack;
	uint64_t samples_kernel_stack;
	uint64_t samples_truncated;
	uint64_t samples_probably_truncated;
	uint64_t samples_error;
	uint64_t samples_missing;
	uint64_t frames_sampled;
	uint64_t frames_sampled_unresolved;
	uint64_t frames_sampled_junk;
};

static const struct stack_entry *defined_stack(struct loader *L, uint32_t id)
{
	const struct stack_entry *e;

	if (id == PC_STACK_NONE)
		return NULL;
	e = stack_store_find(&L->stacks, id);
	return (e && e->present) ? e : NULL;
}

static int is_error_stack(const struct stack_entry *e)
{
	return e && ((e->flags & PC_STACK_F_ERROR) || e->nr == 0);
}

/* Adds the samples of one (thread, ustack, kstack) group to the totals. */
static void add_group(struct quality_totals *t, const struct stack_entry *u,
		      const struct stack_entry *k, uint32_t uid, uint32_t kid, uint64_t n)
{
	if (uid == PC_STACK_NONE && kid == PC_STACK_NONE)
		t->samples_no_stack += n;
	if (uid != PC_STACK_NONE)
		t->samples_user_stack += n;
	if (kid != PC_STACK_NONE)
		t->samples_kernel_stack += n;
	if ((uid != PC_STACK_NONE && !u) || (kid != PC_STACK_NONE && !k))
		t->samples_missing += n;
	if ((u && (u->flags & PC_STACK_F_TRUNCATED)) || (k && (k->flags & PC_STACK_F_TRUNCATED)))
		t->samples_truncated += n;
	else if (u && u->probably_truncated)
		t->samples_probably_truncated += n;
	if (is_error_stack(u) || is_error_stack(k))
		t->samples_error += n;
	t->frames_sampled += n * ((u ? u->nframes : 0) + (k ? k->nframes : 0));
	t->frames_sampled_unresolved += n * ((u ? u->nunresolved : 0) +
					     (k ? k->nunresolved : 0));
	t->frames_sampled_junk += n * (u ? u->njunk : 0);
}

static int store_sample_counts(struct loader *L, struct quality_totals *t)
{
	struct batch_insert rows;
	const struct sample_group *g;
	int rc = batch_init(&rows, L->db,
			    "sample_counts (pid, tid, ustack_id, kstack_id, count)", 5);

	for (size_t pos = 0; rc == 0 && (g = sample_groups_next(&L->groups, &pos));) {
		uint8_t *is_null;
		int64_t *row = batch_row(&rows, &is_null);

		row[0] = g->pid;
		row[1] = g->tid;
		row[2] = g->ustack;
		row[3] = g->kstack;
		row[4] = (int64_t)g->count;
		is_null[2] = g->ustack == PC_STACK_NONE;
		is_null[3] = g->kstack == PC_STACK_NONE;
		rc = batch_commit_row(&rows);
		add_group(t, defined_stack(L, g->ustack), defined_stack(L, g->kstack),
			  g->ustack, g->kstack, g->count);
	}
	if (rc == 0)
		rc = batch_flush(&rows);
	batch_free(&rows);
	return rc;
}

void quality_put_u64(struct quality_writer *w, const char *source, const char *key,
		     uint64_t value)
{
	db_bind_text(w->st, 1, source);
	db_bind_text(w->st, 2, key);
	db_bind_u64(w->st, 3, value);
	if (db_run(w->st) < 0)
		w->failed = 1;
}

void quality_put_text(struct quality_writer *w, const char *source, const char *key,
		      const char *value)
{
	db_bind_text(w->st, 1, source);
	db_bind_text(w->st, 2, key);
	db_bind_text(w->st, 3, value);
	if (db_run(w->st) < 0)
		w->failed = 1;
}

static uint64_t stat_value(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT value FROM stats WHERE chunk='stats' AND key=?");
	uint64_t value = 0;

	if (!st)
		return 0;
	db_bind_text(st, 1, key);
	if (sqlite3_step(st) == SQLITE_ROW)
		value = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

static void put_cpu(struct quality_writer *w, struct loader *L,
		    const struct quality_totals *t)
{
	quality_put_u64(w, "cpu", "samples", L->nsamples);
	quality_put_u64(w, "cpu", "lost.kernel", stat_value(L->db, "cpu.lost.kernel"));
	quality_put_u64(w, "cpu", "lost.user", stat_value(L->db, "cpu.lost.user"));
	quality_put_u64(w, "cpu", "first_ts", L->first_ts);
	quality_put_u64(w, "cpu", "last_ts", L->last_ts);
	quality_put_u64(w, "cpu", "samples.no_stack", t->samples_no_stack);
	quality_put_u64(w, "cpu", "samples.user_stack", t->samples_user_stack);
	quality_put_u64(w, "cpu", "samples.kernel_stack", t->samples_kernel_stack);
}

/* Events the recorder dropped on purpose (STATS of --max-size and of the
 * flight recorder): recorded minus imported is explained by them. And what
 * its memory bound forgot (STATS procs.evicted...). */
static void put_dropped(struct quality_writer *w, struct loader *L)
{
	static const char *const keys[][2] = {
		{ "record.max_size.events_dropped", "max_size.events_dropped" },
		{ "record.max_size.chunks_dropped", "max_size.chunks_dropped" },
		{ "record.max_size.symbols_dropped", "max_size.symbols_dropped" },
		{ "flight.events_dropped", "flight.events_dropped" },
		{ "flight.chunks_dropped", "flight.chunks_dropped" },
		/* the recorder's memory bound: per-process state forgotten */
		{ "procs.evicted", "evicted.processes" },
		{ "procs.evicted_live", "evicted.live_processes" },
		{ "procs.jit_ips_dropped", "evicted.jit_ips_dropped" },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		quality_put_u64(w, "record", keys[i][1], stat_value(L->db, keys[i][0]));
}

static void put_stacks(struct quality_writer *w, struct loader *L,
		       const struct quality_totals *t)
{
	uint64_t user = 0, kernel = 0, truncated = 0, probably = 0, errors = 0, missing = 0;

	for (uint32_t i = 0; i < L->stacks.len; i++) {
		const struct stack_entry *e = &L->stacks.entries[i];
		if (!e->present) {
			missing++;
			continue;
		}
		if (e->kind == PC_STACK_KERNEL)
			kernel++;
		else
			user++;
		truncated += (e->flags & PC_STACK_F_TRUNCATED) != 0;
		probably += e->probably_truncated != 0;
		errors += is_error_stack(e);
	}
	quality_put_u64(w, "stacks", "user", user);
	quality_put_u64(w, "stacks", "kernel", kernel);
	quality_put_u64(w, "stacks", "truncated", truncated);
	quality_put_u64(w, "stacks", "probably_truncated", probably);
	quality_put_u64(w, "stacks", "error", errors);
	quality_put_u64(w, "stacks", "missing", missing);
	quality_put_u64(w, "stacks", "duplicate", L->counts.stacks_duplicate);
	quality_put_u64(w, "stacks", "samples.truncated", t->samples_truncated);
	quality_put_u64(w, "stacks", "samples.probably_truncated", t->samples_probably_truncated);
	quality_put_u64(w, "stacks", "samples.error", t->samples_error);
	quality_put_u64(w, "stacks", "samples.missing", t->samples_missing);
}

static void put_frames(struct quality_writer *w, struct loader *L,
		       const struct quality_totals *t)
{
	struct symbolizer_stats ss = { 0 };

	quality_put_u64(w, "frames", "unique", (uint64_t)db_query_int(L->db,
		"SELECT count(*) FROM frames", 0));
	quality_put_u64(w, "frames", "unique.unresolved", (uint64_t)db_query_int(L->db,
		"SELECT count(*) FROM frames WHERE mode='unresolved'", 0));
	quality_put_u64(w, "frames", "sampled", t->frames_sampled);
	quality_put_u64(w, "frames", "sampled.unresolved", t->frames_sampled_unresolved);
	if (t->frames_sampled_junk) /* absent: none (and captures imported before) */
		quality_put_u64(w, "frames", "sampled.junk", t->frames_sampled_junk);
	symbolizer_get_stats(L->sym, &ss);
	quality_put_u64(w, "symbols", "modules", L->counts.records[PC_REC_MODULE]);
	quality_put_u64(w, "symbols", "modules.bad", L->counts.modules_bad);
	quality_put_u64(w, "symbols", "lookups", ss.lookups);
	quality_put_u64(w, "symbols", "cache_hits", ss.cache_hits);
	quality_put_u64(w, "symbols", "unresolved", ss.unresolved);
}

static void put_format(struct quality_writer *w, struct loader *L)
{
	const struct hmap_slot *slot;
	char key[64];

	for (uint16_t type = 1; type <= RECORD_TYPE_MAX; type++) {
		snprintf(key, sizeof(key), "records.%s", record_type_name(type));
		quality_put_u64(w, "format", key, L->counts.records[type]);
	}
	quality_put_u64(w, "format", "chunks.unknown", L->counts.chunks_unknown);
	quality_put_u64(w, "format", "records.unknown", L->counts.records_unknown);
	quality_put_u64(w, "format", "records.malformed", L->counts.records_malformed);
	quality_put_u64(w, "format", "kv.malformed", L->counts.kv_malformed);
	quality_put_u64(w, "format", "maps.bad", L->counts.maps_bad);
	for (size_t pos = 0; hmap_next(&L->counts.unknown_chunk_types, &pos, &slot);) {
		snprintf(key, sizeof(key), "unknown_chunk.%llu", (unsigned long long)slot->a);
		quality_put_u64(w, "format", key, slot->value);
	}
	for (size_t pos = 0; hmap_next(&L->counts.unknown_record_types, &pos, &slot);) {
		snprintf(key, sizeof(key), "unknown_record.%llu.%llu",
			 (unsigned long long)slot->a, (unsigned long long)slot->b);
		quality_put_u64(w, "format", key, slot->value);
	}
}

/* REQUEST records (the req source): how many became requests rows, how
 * many were left out because their process's rows came from its socket
 * calls (import --requests-from), and how many sorted runs the import
 * wrote to disk to keep them (0: they fitted in memory); REQUEST_WINDOWs
 * left out for overlapping an earlier one, when there were any. */
static void put_requests(struct quality_writer *w, struct loader *L)
{
	if (L->kreqs.windows_overlapping) /* a hostile or damaged capture's */
		quality_put_u64(w, "req", "windows.overlapping", L->kreqs.windows_overlapping);
	if (!L->kreqs.n)
		return;
	quality_put_u64(w, "req", "requests.rows", L->kreqs.n - L->kreqs.skipped);
	quality_put_u64(w, "req", "requests.left_to_calls", L->kreqs.skipped);
	quality_put_u64(w, "req", "requests.runs_on_disk", L->kreqs.nruns);
}

static void put_file(struct quality_writer *w, const struct pc_reader_status *s,
		     const char *damage)
{
	quality_put_u64(w, "file", "size", s->file_size);
	quality_put_u64(w, "file", "chunks_ok", s->chunks_ok);
	quality_put_u64(w, "file", "chunks_bad_crc", s->chunks_bad_crc);
	quality_put_u64(w, "file", "chunks_bad_zstd", s->chunks_bad_zstd);
	quality_put_u64(w, "file", "truncated", s->truncated != 0);
	quality_put_u64(w, "file", "garbage", s->garbage != 0);
	quality_put_u64(w, "file", "stop_offset", s->stop_offset);
	quality_put_u64(w, "file", "end_seen", s->end_seen != 0);
	quality_put_text(w, "file", "damage", damage);
}

int quality_store(struct loader *L, const struct pc_reader_status *status,
		  const char *damage)
{
	struct quality_totals totals;
	struct quality_writer w = { 0 };

	memset(&totals, 0, sizeof(totals));
	if (store_sample_counts(L, &totals) < 0)
		return -1;
	w.st = db_prepare(L->db, "INSERT OR REPLACE INTO quality (source, key, value)"
			  " VALUES (?,?,?)");
	if (!w.st)
		return -1;
	put_cpu(&w, L, &totals);
	put_dropped(&w, L);
	quality_put_sources(&w, L);
	put_stacks(&w, L, &totals);
	put_frames(&w, L, &totals);
	put_format(&w, L);
	put_requests(&w, L);
	put_file(&w, status, damage);
	sqlite3_finalize(w.st);
	return w.failed ? -1 : 0;
}
