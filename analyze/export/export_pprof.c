/* export_pprof.c - export --format pprof: a gzip'd perftools.profiles
 * Profile (profile.proto here, compiled by protoc-c). Streams: a Profile
 * message's fields are all repeated or set once, and a protobuf decoder
 * merges concatenated messages by appending repeated fields, so every
 * string, function, mapping, location and sample is packed as a Profile
 * of its own and deflated straight to the output as it is met. Memory
 * holds the dictionaries (128-bit hashes of strings and functions, the
 * ids of emitted locations), never the samples. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "db/db.h"
#include "export_internal.h"
#include "profile.pb-c.h"
#include "query/names.h"
#include "util/hashmap.h"
#include "util/messages.h"

typedef Perftools__Profiles__Profile Profile;

enum { V_SAMPLES, V_CPU, V_OFFCPU, V_LOCK, V_IO, NVALUES };
#define MAX_RUN 256          /* inline frames folded into one location */

struct pprof {
	struct export_ctx *cx;
	FILE *out;
	z_stream z;
	int zerr;
	struct hmap strings;     /* string hashes -> string_table index */
	int64_t nstrings;
	struct hmap functions;   /* function hashes -> id */
	uint64_t nfunctions;
	struct hmap mappings;    /* module hashes -> id */
	uint64_t nmappings;
	struct hmap locations;   /* frame_id -> 1 once emitted */
	struct names names;
	sqlite3_stmt *frames_st;
	sqlite3_stmt *build_id_st;
	uint64_t *locs;          /* location ids of the sample being built */
	size_t nlocs, caplocs;
	struct hmap stacks;      /* stack id -> (offset << 20) | length in cache */
	uint64_t *cache;         /* location ids of the stacks seen, innermost first */
	size_t ncache, capcache;
};

struct zsink {
	ProtobufCBuffer base;
	struct pprof *p;
};

int export_pprof_available(const char **why)
{
	(void)why;
	return 1;
}

static void deflate_out(struct pprof *p, const uint8_t *data, size_t len, int flush)
{
	unsigned char buf[1 << 15];
	int rc;

	p->z.next_in = (Bytef *)data;
	p->z.avail_in = (uInt)len;
	do {
		p->z.next_out = buf;
		p->z.avail_out = sizeof(buf);
		rc = deflate(&p->z, flush);
		if (rc == Z_STREAM_ERROR) {
			p->zerr = 1;
			return;
		}
		fwrite(buf, 1, sizeof(buf) - p->z.avail_out, p->out);
	} while (p->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

static void zsink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct zsink *s = (struct zsink *)b;

	deflate_out(s->p, data, len, Z_NO_FLUSH);
}

/* Packs one Profile fragment into the stream. */
static void emit(struct pprof *p, const Profile *frag)
{
	struct zsink sink = { .base = { .append = zsink_append }, .p = p };

	protobuf_c_message_pack_to_buffer(&frag->base, &sink.base);
}

static int64_t str_id(struct pprof *p, const char *s)
{
	int created = 0;
	uint64_t *v;

	if (!s)
		s = "";
	v = hmap_upsert(&p->strings, export_hash(s, 1), export_hash(s, 2),
			(uint64_t)p->nstrings, &created);
	if (!v) {
		p->zerr = 1;
		return 0;
	}
	if (created) {
		Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
		char *table[1] = { (char *)s };

		frag.n_string_table = 1;
		frag.string_table = table;
		emit(p, &frag);
		p->nstrings++;
	}
	return (int64_t)*v;
}

/* Build-id of a module from the mappings or embedded modules, "" if none. */
static const char *build_id_of(struct pprof *p, const char *module)
{
	const unsigned char *text = NULL;

	sqlite3_reset(p->build_id_st);
	sqlite3_bind_text(p->build_id_st, 1, module, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(p->build_id_st) == SQLITE_ROW)
		text = sqlite3_column_text(p->build_id_st, 0);
	return text ? (const char *)text : "";
}

static uint64_t mapping_id(struct pprof *p, const char *module)
{
	int created = 0;
	uint64_t *v = hmap_upsert(&p->mappings, export_hash(module, 3), export_hash(module, 4),
				  p->nmappings + 1, &created);

	if (!v) {
		p->zerr = 1;
		return 0;
	}
	if (created) {
		Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT;
		Perftools__Profiles__Mapping *list[1] = { &m };
		Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
		uint64_t id = ++p->nmappings;

		/* addresses of user locations are file offsets: the mapping
		 * covers the whole file from offset 0 */
		m.id = id;
		m.memory_start = 0;
		m.memory_limit = UINT64_MAX;
		m.file_offset = 0;
		m.filename = str_id(p, module);
		m.build_id = str_id(p, build_id_of(p, module));
		m.has_functions = m.has_filenames = m.has_line_numbers = 1;
		m.has_inline_frames = 1;
		frag.n_mapping = 1;
		frag.mapping = list;
		emit(p, &frag);
		return id;
	}
	return *v;
}

static uint64_t function_id(struct pprof *p, const char *name, const char *file,
			    const char *module)
{
	uint64_t a = export_hash(name, 5) ^ export_hash(file, 6) * 3 ^ export_hash(module, 7) * 5;
	uint64_t b = export_hash(name, 8) ^ export_hash(file, 9) * 3 ^ export_hash(module, 10) * 5;
	int created = 0;
	uint64_t *v = hmap_upsert(&p->functions, a, b, p->nfunctions + 1, &created);

	if (!v) {
		p->zerr = 1;
		return 0;
	}
	if (created) {
		Perftools__Profiles__Function f = PERFTOOLS__PROFILES__FUNCTION__INIT;
		Perftools__Profiles__Function *list[1] = { &f };
		Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;

		f.id = ++p->nfunctions;
		f.name = str_id(p, name);
		f.system_name = f.name;
		f.filename = str_id(p, file[0] ? file : module);
		frag.n_function = 1;
		frag.function = list;
		emit(p, &frag);
		return f.id;
	}
	return *v;
}

static void push_loc(struct pprof *p, uint64_t id)
{
	if (p->nlocs == p->caplocs) {
		size_t cap = p->caplocs ? 2 * p->caplocs : 64;
		uint64_t *n = realloc(p->locs, cap * sizeof(*n));

		if (!n) {
			p->zerr = 1;
			return;
		}
		p->locs = n;
		p->caplocs = cap;
	}
	p->locs[p->nlocs++] = id;
}

struct line_run {
	Perftools__Profiles__Line lines[MAX_RUN];
	Perftools__Profiles__Line *ptrs[MAX_RUN];
	size_t n;
};

/* Ends a run of frames (inlined ones, then the frame they are inlined
 * into) as one location, emitted the first time its frame is seen. */
static void end_run(struct pprof *p, struct line_run *run, int64_t frame_id,
		    sqlite3_stmt *st)
{
	int created = 0;
	uint64_t *v = hmap_upsert(&p->locations, (uint64_t)frame_id, 0, 1, &created);

	if (v && created) {
		Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT;
		Perftools__Profiles__Location *list[1] = { &loc };
		Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
		const char *kind = (const char *)sqlite3_column_text(st, 4);
		int user = kind && strcmp(kind, "user") == 0;

		loc.id = (uint64_t)frame_id;
		loc.mapping_id = mapping_id(p, (const char *)sqlite3_column_text(st, 2));
		loc.address = (uint64_t)sqlite3_column_int64(st, user ? 3 : 8);
		loc.n_line = run->n;
		loc.line = run->ptrs;
		frag.n_location = 1;
		frag.location = list;
		emit(p, &frag);
	}
	push_loc(p, (uint64_t)frame_id);
	run->n = 0;
}

static const char *col_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? (const char *)t : "";
}

/* Remembers the location ids p->locs[from..] as those of stack id: a
 * stack met again costs no query. */
static void cache_stack(struct pprof *p, int64_t id, size_t from)
{
	size_t len = p->nlocs - from;
	int created = 0;
	uint64_t *v;

	if (len >= (1u << 20) || p->ncache + len >= (1ull << 43))
		return;
	while (p->ncache + len > p->capcache) {
		size_t cap = p->capcache ? 2 * p->capcache : 4096;
		uint64_t *n = realloc(p->cache, cap * sizeof(*n));

		if (!n)
			return;
		p->cache = n;
		p->capcache = cap;
	}
	v = hmap_upsert(&p->stacks, (uint64_t)id, 0, (p->ncache << 20) | len, &created);
	if (!v)
		return;
	memcpy(p->cache + p->ncache, p->locs + from, len * sizeof(*p->cache));
	p->ncache += len;
}

static int cached_stack(struct pprof *p, int64_t id)
{
	const uint64_t *v = hmap_find(&p->stacks, (uint64_t)id, 0);
	uint64_t len;

	if (!v)
		return 0;
	len = *v & ((1u << 20) - 1);
	for (uint64_t i = 0; i < len; i++)
		push_loc(p, p->cache[(*v >> 20) + i]);
	return 1;
}

/* Appends the locations of a stack (innermost first) to p->locs. */
static void add_stack(struct pprof *p, sqlite3_stmt *group, int col)
{
	sqlite3_stmt *st = p->frames_st;
	int64_t id = sqlite3_column_int64(group, col);
	size_t from = p->nlocs;
	struct line_run run;

	if (sqlite3_column_type(group, col) == SQLITE_NULL || cached_stack(p, id))
		return;
	run.n = 0;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		Perftools__Profiles__Line *line = &run.lines[run.n];
		const char *module = col_text(st, 2);

		*line = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
		line->function_id = function_id(p, col_text(st, 5), col_text(st, 6), module);
		line->line = sqlite3_column_int64(st, 7);
		run.ptrs[run.n] = line;
		run.n++;
		if (sqlite3_column_int(st, 1) == 0 || run.n == MAX_RUN)
			end_run(p, &run, sqlite3_column_int64(st, 0), st);
	}
	cache_stack(p, id, from);
}

static void add_label(struct pprof *p, Perftools__Profiles__Label *labels, size_t *n,
		      const char *key, const char *str, int64_t num)
{
	Perftools__Profiles__Label *l = &labels[*n];

	*l = (Perftools__Profiles__Label)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = str_id(p, key);
	if (str)
		l->str = str_id(p, str);
	else
		l->num = num;
	(*n)++;
}

/* Writes one sample from a row: pid, tid, ustack, kstack, then (wait
 * class, thread state) text at columns 4 and 5 (NULL: no label). */
static void emit_sample(struct pprof *p, sqlite3_stmt *row, const int64_t *values)
{
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *list[1] = { &s };
	Perftools__Profiles__Label labels[6], *lp[6];
	Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint32_t pid = (uint32_t)sqlite3_column_int64(row, 0);
	uint32_t tid = (uint32_t)sqlite3_column_int64(row, 1);
	const char *comm = names_thread(&p->names, pid, tid);
	const char *process = names_process(&p->names, pid);
	size_t n = 0;

	p->nlocs = 0;
	add_stack(p, row, 3);
	add_stack(p, row, 2);
	add_label(p, labels, &n, "pid", NULL, pid);
	add_label(p, labels, &n, "tid", NULL, tid);
	if (comm)
		add_label(p, labels, &n, "comm", comm, 0);
	if (process)
		add_label(p, labels, &n, "process", process, 0);
	if (sqlite3_column_type(row, 5) != SQLITE_NULL)
		add_label(p, labels, &n, "thread_state", col_text(row, 5), 0);
	if (sqlite3_column_type(row, 4) != SQLITE_NULL)
		add_label(p, labels, &n, "wait_class", col_text(row, 4), 0);
	for (size_t i = 0; i < n; i++)
		lp[i] = &labels[i];
	s.n_location_id = p->nlocs;
	s.location_id = p->locs;
	s.n_value = NVALUES;
	s.value = (int64_t *)values;
	s.n_label = n;
	s.label = lp;
	frag.n_sample = 1;
	frag.sample = list;
	emit(p, &frag);
}

static void header(struct pprof *p)
{
	static const char *const types[NVALUES][2] = {
		{ "samples", "count" }, { "cpu", "nanoseconds" }, { "off_cpu", "nanoseconds" },
		{ "lock_wait", "nanoseconds" }, { "io_wait", "nanoseconds" },
	};
	Perftools__Profiles__ValueType vt[NVALUES], *vp[NVALUES], period;
	Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
	const struct report_scope *sc = &p->cx->scope;
	char comment[512];
	int64_t comments[1];

	str_id(p, "");
	for (int i = 0; i < NVALUES; i++) {
		vt[i] = (Perftools__Profiles__ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		vt[i].type = str_id(p, types[i][0]);
		vt[i].unit = str_id(p, types[i][1]);
		vp[i] = &vt[i];
	}
	period = (Perftools__Profiles__ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	period.type = str_id(p, "cpu");
	period.unit = str_id(p, "nanoseconds");
	snprintf(comment, sizeof(comment), "perfcap run %s host %s", p->cx->run_id,
		 p->cx->host);
	comments[0] = str_id(p, comment);
	frag.n_sample_type = NVALUES;
	frag.sample_type = vp;
	frag.period_type = &period;
	frag.period = (int64_t)p->cx->period_ns;
	frag.time_nanos = (int64_t)export_wall_ns(p->cx, sc->from);
	frag.duration_nanos = (int64_t)(sc->to - sc->from);
	frag.default_sample_type = str_id(p, "cpu");
	frag.n_comment = 1;
	frag.comment = comments;
	emit(p, &frag);
}

/* Runs sql (pid, tid, ustack, kstack, wait class, state, amount) and
 * writes a sample per row with the amount in the given values. */
static int samples_from(struct pprof *p, const char *sql, int cpu)
{
	sqlite3_stmt *st = export_prepare(p->cx, sql);
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !p->zerr) {
		int64_t v[NVALUES] = { 0 };
		int64_t amount = sqlite3_column_int64(st, 6);
		const char *wc = col_text(st, 4);

		if (cpu) {
			v[V_SAMPLES] = amount;
			v[V_CPU] = amount * (int64_t)p->cx->period_ns;
		} else {
			v[V_OFFCPU] = strcmp(wc, "kernel_lock") == 0 ? 0 : amount;
			v[V_LOCK] = strcmp(wc, "futex") == 0 || strcmp(wc, "kernel_lock") == 0
				? amount : 0;
			v[V_IO] = strcmp(wc, "block_io") == 0 ? amount : 0;
		}
		emit_sample(p, st, v);
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		db_report_error(p->cx->db, "pprof samples");
	sqlite3_finalize(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

static int cpu_samples(struct pprof *p)
{
	char cond[1024], sql[2048];

	if (p->cx->scope.windowed)
		snprintf(sql, sizeof(sql), "SELECT pid, tid, ustack_id, kstack_id, NULL, 'running',"
			 " count(*) FROM samples WHERE %s GROUP BY pid, tid, ustack_id, kstack_id",
			 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "ts", "ts"));
	else
		snprintf(sql, sizeof(sql), "SELECT pid, tid, ustack_id, kstack_id, NULL, 'running',"
			 " count FROM sample_counts WHERE %s",
			 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", NULL, NULL));
	return samples_from(p, sql, 1);
}

/* Off-CPU intervals and kernel lock waits, clipped to the window. */
static int wait_samples(struct pprof *p)
{
	const char *amount = p->cx->scope.windowed
		? "sum(min(ts, :to) - max(ts - duration, :from))" : "sum(duration)";
	char cond[1024], sql[3072];

	snprintf(sql, sizeof(sql), "SELECT pid, tid, ustack_id, kstack_id, wait_class,"
		 " CASE WHEN state IN (0, 256) THEN 'runnable' WHEN (state & 1026) = 1026"
		 " THEN 'sleep' WHEN state & 2 THEN 'io' WHEN state & 1 THEN 'sleep'"
		 " ELSE 'blocked' END, %s FROM offcpu WHERE %s"
		 " GROUP BY 1, 2, 3, 4, 5, 6", amount,
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "ts - duration", "ts"));
	if (samples_from(p, sql, 0) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "SELECT pid, tid, NULL, kstack_id, 'kernel_lock', NULL, %s"
		 " FROM kernel_locks WHERE %s GROUP BY 1, 2, 3, 4", amount,
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "ts - duration", "ts"));
	return samples_from(p, sql, 0);
}

static int open_pprof(struct pprof *p, struct export_ctx *cx, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->cx = cx;
	p->out = out;
	hmap_init(&p->strings);
	hmap_init(&p->functions);
	hmap_init(&p->mappings);
	hmap_init(&p->locations);
	hmap_init(&p->stacks);
	if (names_load(&p->names, cx->db) < 0)
		return -1;
	p->frames_st = db_prepare(cx->db,
		"SELECT f.frame_id, f.inlined, f.module, f.module_offset, f.kind,"
		" COALESCE(f.function, f.name), f.file, f.line, f.address"
		" FROM stack_frames sf JOIN frames f ON f.frame_id = sf.frame_id"
		" WHERE sf.stack_id = ?1 ORDER BY sf.position");
	p->build_id_st = db_prepare(cx->db,
		"SELECT build_id FROM maps WHERE path = ?1 AND build_id IS NOT NULL UNION ALL"
		" SELECT build_id FROM modules WHERE path = ?1 AND build_id IS NOT NULL LIMIT 1");
	if (!p->frames_st || !p->build_id_st)
		return -1;
	/* gzip wrapper: windowBits 15 + 16 */
	if (deflateInit2(&p->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	return 0;
}

static void close_pprof(struct pprof *p)
{
	deflateEnd(&p->z);
	sqlite3_finalize(p->frames_st);
	sqlite3_finalize(p->build_id_st);
	names_free(&p->names);
	hmap_free(&p->strings);
	hmap_free(&p->functions);
	hmap_free(&p->mappings);
	hmap_free(&p->locations);
	hmap_free(&p->stacks);
	free(p->cache);
	free(p->locs);
}

int export_pprof(struct export_ctx *cx, FILE *out)
{
	struct pprof p;
	int rc = open_pprof(&p, cx, out);

	if (rc == 0) {
		header(&p);
		rc = cpu_samples(&p);
		if (rc == 0)
			rc = wait_samples(&p);
		deflate_out(&p, NULL, 0, Z_FINISH);
		if (p.zerr) {
			fprintf(stderr, "perfcap-analyze: pprof: out of memory or zlib error\n");
			rc = -1;
		}
	}
	close_pprof(&p);
	return rc;
}
