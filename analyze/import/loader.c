/* loader.c - imports a capture into SQLite (see loader.h): walks the chunks
 * in file order, stores key/value chunks and chunk headers itself, hands
 * records to load_records.c, lets the correlator release events after each
 * chunk, and after the last chunk finishes the correlations, resolves
 * frames (resolve.c) and summarizes data quality (quality.c). The big
 * tables' rows go to the database on an INSERT thread (sql_writer.h) while
 * this one reads on; before it uses the database itself, it waits for that
 * thread to be idle. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "util/messages.h"
#include "correlate/correlate.h"
#include "correlate/requests.h"
#include "db/db.h"
#include "load_state.h"
#include "loader.h"
#include "perfcap_version.h"
#include "progress.h"
#include "db/schema.h"
#include "db/sql_writer.h"
#include "db/stage.h"
#include "symbolize/symbolize.h"
#include "db/syscall_names.h"
#include "util/temp_file.h"
#include "util/text.h"
#include "syscall_pace.h"
#include "ustack_unwind.h"

static int is_record_chunk(uint16_t type)
{
	return type == PC_CHUNK_EVENTS || type == PC_CHUNK_PROCS ||
	       type == PC_CHUNK_SYMBOLS || type == PC_CHUNK_STACKS;
}

static int is_known_chunk(uint16_t type)
{
	return type >= PC_CHUNK_META && type <= PC_CHUNK_END;
}

/* Chunk headers are kept and written after the last chunk, so that EVENTS
 * chunks touch the database only through batches (sql_writer.h). */
static void keep_chunk_header(struct loader *L, const struct pc_chunk *c)
{
	if (L->nchunk_rows == L->chunk_rows_cap) {
		size_t cap = L->chunk_rows_cap ? L->chunk_rows_cap * 2 : 64;
		struct chunk_row *grown = realloc(L->chunk_rows, cap * sizeof(*grown));
		if (!grown) {
			L->failed = 1;
			return;
		}
		L->chunk_rows = grown;
		L->chunk_rows_cap = cap;
	}
	L->chunk_rows[L->nchunk_rows++] = (struct chunk_row){ c->hdr, c->offset };
}

static int store_chunk_headers(struct loader *L)
{
	sqlite3_stmt *st = L->st.chunk;

	for (size_t i = 0; i < L->nchunk_rows; i++) {
		const struct pc_chunk_header *h = &L->chunk_rows[i].hdr;
		db_bind_u64(st, 1, h->seq);
		db_bind_u64(st, 2, L->chunk_rows[i].offset);
		sqlite3_bind_int64(st, 3, h->type);
		db_bind_text(st, 4, pc_chunk_type_name(h->type));
		sqlite3_bind_int64(st, 5, h->version);
		db_bind_u64(st, 6, h->payload_size);
		db_bind_u64(st, 7, h->raw_size);
		db_bind_u64(st, 8, h->count);
		db_bind_u64(st, 9, h->t_start);
		db_bind_u64(st, 10, h->t_end);
		if (db_run(st) < 0)
			return -1;
	}
	return 0;
}

static int parse_u64(const char *text, uint64_t *out)
{
	char *end;

	if (!text || *text < '0' || *text > '9')
		return -1;
	*out = strtoull(text, &end, 10);
	return *end == '\0' ? 0 : -1;
}

/* The few capture facts the correlator needs: start, end, sources. */
static void note_capture_fact(struct loader *L, uint16_t chunk_type, const char *key,
			      const char *value)
{
	uint64_t ns;

	if (chunk_type == PC_CHUNK_META && strcmp(key, "record.start_ns") == 0 &&
	    parse_u64(value, &ns) == 0)
		correlator_set_start(L->corr, ns);
	else if (chunk_type == PC_CHUNK_META && strcmp(key, "sources") == 0)
		correlator_set_sources(L->corr, value);
	else if (chunk_type == PC_CHUNK_META && strcmp(key, "record.duration_limit_ns") == 0 &&
		 parse_u64(value, &ns) == 0)
		correlator_set_duration_limit(L->corr, ns);
	else if (strcmp(key, "record.end_ns") == 0 && parse_u64(value, &ns) == 0 &&
		 (chunk_type == PC_CHUNK_STATS || !L->has_record_end)) {
		correlator_set_end(L->corr, ns);
		L->has_record_end = 1;
	}
}

static void store_kv_pair(struct loader *L, uint16_t chunk_type, const char *key,
			  const char *value)
{
	char *pkey, *pvalue;
	sqlite3_stmt *st;

	note_capture_fact(L, chunk_type, key, value);
	/* stored printable: the command line, hostname... reach text output */
	key = pkey = text_dup_printable(key, strlen(key), 0);
	value = pvalue = text_dup_printable(value, strlen(value), 0);
	if (!pkey || !pvalue) {
		free(pkey);
		free(pvalue);
		L->failed = 1;
		return;
	}
	if (chunk_type == PC_CHUNK_META) {
		st = L->st.meta;
		db_bind_text(st, 1, key);
		db_bind_text(st, 2, value);
	} else {
		st = L->st.stat;
		db_bind_text(st, 1, chunk_type == PC_CHUNK_END ? "end" : "stats");
		db_bind_text(st, 2, key);
		db_bind_text(st, 3, value);
	}
	if (db_run(st) < 0)
		L->failed = 1;
	free(pkey);
	free(pvalue);
}

static void load_kv_chunk(struct loader *L, const struct pc_chunk *c)
{
	struct pc_kv_iter it;
	const char *key, *value;
	int rc;

	pc_kv_iter_init(&it, c->data, c->size);
	while ((rc = pc_kv_next(&it, &key, &value)) == 1 && !L->failed)
		store_kv_pair(L, c->hdr.type, key, value);
	if (rc < 0)
		L->counts.kv_malformed++;
}

static void load_record_chunk(struct loader *L, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	int rc;

	pc_rec_iter_init(&it, c->data, c->size);
	while ((rc = pc_rec_next(&it, &rec)) == 1 && !L->failed) {
		load_record(L, c->hdr.type, rec);
		L->nevents += c->hdr.type == PC_CHUNK_EVENTS;
	}
	if (rc < 0)
		L->counts.records_malformed++;
	if (c->hdr.type == PC_CHUNK_EVENTS &&
	    (ustack_offcpu_expire(L, c->hdr.t_end) < 0 || correlator_chunk_done(L->corr) < 0))
		L->failed = 1;
}

static void count_chunk(struct loader *L, uint16_t type)
{
	if (is_known_chunk(type)) {
		L->counts.chunks[type]++;
		return;
	}
	uint64_t *count = hmap_upsert(&L->counts.unknown_chunk_types, type, 0, 0, NULL);
	if (!count)
		L->failed = 1;
	else
		(*count)++;
	L->counts.chunks_unknown++;
}

static void load_chunk(struct loader *L, const struct pc_chunk *c)
{
	uint16_t type = c->hdr.type;

	keep_chunk_header(L, c);
	count_chunk(L, type);
	if (type == PC_CHUNK_META || type == PC_CHUNK_STATS || type == PC_CHUNK_END) {
		if (L->writer)
			sql_writer_drain(L->writer);   /* its pairs use the database directly */
		load_kv_chunk(L, c);
	} else if (is_record_chunk(type))
		load_record_chunk(L, c);
}

static int store_schema_info(sqlite3 *db, const char *path,
			     const struct pc_reader_status *status, uint64_t window_ns)
{
	sqlite3_stmt *st = db_prepare(db,
		"INSERT INTO schema_info (key, value) VALUES (?,?)");
	char version[32], format[32], size[32], window[32], reorder[32];
	const char *rows[][2] = {
		{ "schema_version", version },
		{ "analyzer", "perfcap-analyze " PERFCAP_VERSION " (" PERFCAP_GIT_HASH ")" },
		{ "source_path", path },
		{ "source_size", size },
		{ "format_version", format },
		{ "window_ns", window },
		{ "reorder_window_ns", reorder },
	};
	int rc = 0;

	if (!st)
		return -1;
	snprintf(version, sizeof(version), "%d", SCHEMA_VERSION);
	snprintf(format, sizeof(format), "%u.%u", status->major, status->minor);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)status->file_size);
	snprintf(window, sizeof(window), "%llu", (unsigned long long)window_ns);
	snprintf(reorder, sizeof(reorder), "%llu", (unsigned long long)TIMELINE_WINDOW_NS);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && rc == 0; i++) {
		db_bind_text(st, 1, rows[i][0]);
		db_bind_text(st, 2, rows[i][1]);
		rc = db_run(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int open_capture(struct pc_reader **reader, const char *path,
			char *errbuf, size_t errlen)
{
	char why[256] = "";
	int rc = pc_reader_open(reader, path, why, sizeof(why));

	if (rc == 0)
		return 0;
	snprintf(errbuf, errlen, "%s", capture_open_error(rc, why));
	return -1;
}

static void attach_writer(struct loader *L, struct sql_writer *w)
{
	record_batches_use_writer(L, w);
	if (L->corr)
		correlator_use_writer(L->corr, w);
}

/* Big tables go through an INSERT thread; without one, inline. */
static void use_writer_thread(struct loader *L)
{
	L->writer = sql_writer_start();
	if (L->writer)
		attach_writer(L, L->writer);
}

/* Waits for the INSERT thread to finish its batches, then stops it. */
static void stop_writer_thread(struct loader *L)
{
	if (!L->writer)
		return;
	sql_writer_stop(L->writer);
	L->writer = NULL;
	attach_writer(L, NULL);
}

static void loader_init(struct loader *L, sqlite3 *db)
{
	memset(L, 0, sizeof(*L));
	L->db = db;
	stack_store_init(&L->stacks);
	map_index_init(&L->maps);
	request_feed_init(&L->requests, REQUEST_FEED_RUN_CALLS);
	/* 64 MiB of the req source's records before a run goes to disk, or a
	 * test's PERFCAP_KREQ_RUN_BYTES */
	kernel_requests_init(&L->kreqs,
			     temp_file_run_size("PERFCAP_KREQ_RUN_BYTES", KREQ_RUN_BYTES));
	sample_groups_init(&L->groups);
	hmap_init(&L->counts.unknown_chunk_types);
	hmap_init(&L->counts.unknown_record_types);
	L->profile_phases = getenv("PERFCAP_IMPORT_PROFILE") &&
			    *getenv("PERFCAP_IMPORT_PROFILE");
}

static void loader_free(struct loader *L)
{
	stop_writer_thread(L);
	resolve_prefetch_join(L);
	load_finalize_statements(L);
	stack_store_free(&L->stacks);
	map_index_free(&L->maps);
	request_feed_free(&L->requests);
	kernel_requests_free(&L->kreqs);
	syscall_windows_release(&L->scw);
	sample_groups_free(&L->groups);
	hmap_free(&L->counts.unknown_chunk_types);
	hmap_free(&L->counts.unknown_record_types);
	free(L->chunk_rows);
	symbolizer_free(L->sym);
	correlator_free(L->corr);
	ustack_free(L);
}

/* Tells every stack how many samples use it and when it was first used. */
static int mark_used_stacks(struct loader *L)
{
	const struct sample_group *g;

	for (size_t pos = 0; (g = sample_groups_next(&L->groups, &pos));) {
		if (g->ustack != PC_STACK_NONE &&
		    stack_store_use(&L->stacks, g->ustack, g->first_ts, g->pid, g->count) < 0)
			return -1;
		if (g->kstack != PC_STACK_NONE &&
		    stack_store_use(&L->stacks, g->kstack, g->first_ts, g->pid, g->count) < 0)
			return -1;
	}
	return 0;
}

static int load_all_chunks(struct loader *L, struct pc_reader *reader, int progress)
{
	const struct pc_reader_status *status = pc_reader_status(reader);
	struct progress bar;
	struct pc_chunk chunk;
	uint64_t chunks = 0;

	progress_init(&bar, progress, status->file_size);
	while (!L->failed && pc_reader_next(reader, &chunk) == 1) {
		load_chunk(L, &chunk);
		progress_update(&bar, ++chunks, chunk.offset + chunk.hdr.header_size +
				chunk.hdr.payload_size, L->nevents);
	}
	progress_done(&bar);
	if (!L->failed && (ustack_offcpu_expire(L, UINT64_MAX) < 0 ||
			   correlator_release_all(L->corr) < 0 ||
			   load_flush_statements(L) < 0))
		L->failed = 1;
	stop_writer_thread(L);
	if (L->row_jobs_failed)
		L->failed = 1;
	if (!L->failed && (correlator_finish(L->corr) < 0 || store_chunk_headers(L) < 0))
		L->failed = 1;
	return L->failed ? -1 : 0;
}

static int out_of_memory(void)
{
	fprintf(stderr, "perfcap-analyze: out of memory\n");
	return -1;
}

/* Symbolizer, schema, correlator, statements and the fixed tables. */
static int load_setup(struct loader *L, struct pc_reader *reader, const char *path,
		      const struct load_options *opts)
{
	struct symbolizer_opts sym_opts = {
		.symfs = opts->symfs,
		.debuginfod = opts->local_files,
		.local_files = opts->local_files,
	};
	uint64_t window_ns = opts->window_ns ? opts->window_ns : CORRELATE_DEFAULT_WINDOW_NS;

	L->requests_from = opts->requests_from;
	L->sym = symbolizer_new(&sym_opts);
	if (!L->sym)
		return out_of_memory();
	/* the stage (db/stage.h) is attached before the transaction and
	 * before any batch is made: the big tables' rows are staged */
	if (schema_create_tables(L->db) < 0 || stage_attach(L->db) < 0)
		return -1;
	L->corr = correlator_new(L->db, window_ns);
	if (!L->corr)
		return out_of_memory();
	L->format_minor = pc_reader_status(reader)->minor;
	correlator_set_format_minor(L->corr, L->format_minor);
	if (db_exec(L->db, "BEGIN") < 0 || load_prepare_statements(L) < 0 ||
	    store_schema_info(L->db, path, pc_reader_status(reader), window_ns) < 0 ||
	    syscalls_store(L->db) < 0 || state_codes_store(L->db) < 0)
		return -1;
	use_writer_thread(L);
	return 0;
}

static const char *fill_summary(struct loader *L, struct pc_reader *reader,
				struct load_summary *summary)
{
	const char *damage = pc_reader_damage(reader, summary->damage, sizeof(summary->damage));

	if (!damage)
		summary->damage[0] = '\0';
	else if (damage != summary->damage)
		snprintf(summary->damage, sizeof(summary->damage), "%s", damage);
	summary->samples = L->nsamples;
	summary->events = L->nevents;
	return damage ? summary->damage : NULL;
}

/* PERFCAP_IMPORT_PROFILE=1: the wall time of each phase of the import on
 * stderr (docs/perfcap-analyze.md, PERFORMANCE), to see where an import
 * of a real capture goes before reaching for perf. */
static double clock_of(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double phase_clock(void)
{
	return clock_of(CLOCK_MONOTONIC);
}

/* Ends the phase that began at *since (when profiling) and starts the
 * next; passes rc through. Besides the wall time, the CPU time this
 * thread and the whole process spent in the phase: their difference is
 * the helper threads' (INSERT threads), and a wall time above this
 * thread's CPU is this thread waiting for them. */
static int phase_end(struct loader *L, const char *name, double *since, int rc)
{
	double now, main_cpu, all_cpu;

	if (!L->profile_phases)
		return rc;
	now = phase_clock();
	main_cpu = clock_of(CLOCK_THREAD_CPUTIME_ID);
	all_cpu = clock_of(CLOCK_PROCESS_CPUTIME_ID);
	fprintf(stderr, "perfcap-analyze: import %-18s %.3f s (cpu: this thread %.3f s,"
		" all %.3f s)\n", name, now - *since, main_cpu - L->phase_cpu[0],
		all_cpu - L->phase_cpu[1]);
	*since = now;
	L->phase_cpu[0] = main_cpu;
	L->phase_cpu[1] = all_cpu;
	return rc;
}

static int pass_connection_roles(struct loader *L) { return connections_set_roles(L->db); }
static int pass_probes(struct loader *L) { return probes_build(L->db); }
static int pass_runtimes(struct loader *L) { return runtimes_build(L->db); }
static int pass_wait_stacks(struct loader *L) { return wait_stacks_classify(L->db, L->corr); }
static int pass_gc_proxy(struct loader *L) { return gc_proxy_build(L->db); }
static int pass_syscall_windows(struct loader *L)
{
	return syscall_windows_store(L->db, &L->scw) || syscall_pace_build(L->db) ? -1 : 0;
}

/* The passes after the last chunk, in order: each may read what the ones
 * before it stored. */
static const struct {
	const char *name;
	int (*run)(struct loader *L);
} after_chunks[] = {
	{ "used stacks", mark_used_stacks },
	{ "prefetch modules", resolve_prefetch_start },
	{ "syscall windows", pass_syscall_windows },
	{ "requests", requests_pass },
	{ "sched windows", waits_scale_pass },
	{ "connection roles", pass_connection_roles },
	{ "probes", pass_probes },
	{ "gc pauses", gc_pauses_build },
	{ "resolve stacks", resolve_stacks },
	{ "user stacks", ustack_store },
	{ "runtimes", pass_runtimes },
	{ "wait stacks", pass_wait_stacks },
	{ "gc proxy", pass_gc_proxy },
};

static int load_into(struct loader *L, struct pc_reader *reader, const char *path,
		     const struct load_options *opts, struct load_summary *summary)
{
	const char *damage;
	double t = phase_clock();

	L->phase_cpu[0] = clock_of(CLOCK_THREAD_CPUTIME_ID);
	L->phase_cpu[1] = clock_of(CLOCK_PROCESS_CPUTIME_ID);

	if (phase_end(L, "setup", &t, load_setup(L, reader, path, opts)) < 0 ||
	    phase_end(L, "stack prepass", &t, ustack_prepass(L, reader)) < 0 ||
	    phase_end(L, "chunks", &t, load_all_chunks(L, reader, opts->progress)) < 0)
		return -1;
	map_index_finish(&L->maps);
	for (size_t i = 0; i < sizeof(after_chunks) / sizeof(after_chunks[0]); i++)
		if (phase_end(L, after_chunks[i].name, &t, after_chunks[i].run(L)) < 0)
			return -1;
	damage = fill_summary(L, reader, summary);
	if (phase_end(L, "quality", &t, quality_store(L, pc_reader_status(reader), damage)) < 0)
		return -1;
	load_finalize_statements(L);
	if (phase_end(L, "indexes", &t, schema_create_indexes(L->db)) < 0 ||
	    phase_end(L, "commit", &t, db_exec(L->db, "COMMIT")) < 0)
		return -1;
	stage_detach(L->db);
	return 0;
}

int load_capture(sqlite3 *db, const char *path, const struct load_options *opts,
		 struct load_summary *summary, char *errbuf, size_t errlen)
{
	struct pc_reader *reader = NULL;
	struct loader L;
	int rc;

	memset(summary, 0, sizeof(*summary));
	if (open_capture(&reader, path, errbuf, errlen) < 0)
		return LOAD_NOT_CAPTURE;
	loader_init(&L, db);
	rc = load_into(&L, reader, path, opts, summary) < 0 ? LOAD_FAILED : LOAD_OK;
	loader_free(&L);
	pc_reader_close(reader);
	return rc;
}
