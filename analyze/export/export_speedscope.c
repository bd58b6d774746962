/* export_speedscope.c - export --format speedscope: speedscope's JSON file
 * format. One sampled profile per thread (stacks root first, weights in
 * nanoseconds of CPU: samples x sampling period), then one evented
 * profile per thread that picked up requests (a frame "request on fd N"
 * opened at the request's first read, closed at its last write's end).
 * Streamed: profiles are written as rows arrive, a thread's weights wait
 * in a temporary file until its stacks are written, and the shared frame
 * table (one entry per function) comes last: JSON objects are unordered. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "export_internal.h"
#include "perfcap_version.h"
#include "query/names.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/json_writer.h"

#define MAX_OPEN 64          /* nesting of overlapping requests kept per thread */

struct frame_entry {
	char *name;
	char *file;
};

struct speedscope {
	struct export_ctx *cx;
	struct json_writer w;
	FILE *out;
	struct hmap by_key;      /* function hashes -> frame index */
	struct frame_entry *frames;
	size_t nframes, capframes;
	struct names names;
	sqlite3_stmt *frames_st;
	uint64_t *stack;         /* frame indices of the sample, innermost first */
	size_t nstack, capstack;
	struct hmap stacks;      /* stack id -> (offset << 20) | length in cache */
	uint64_t *cache;         /* frame indices of the stacks seen */
	size_t ncache, capcache;
	int failed;
};

static const char *text_or(sqlite3_stmt *st, int col, const char *fallback)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t && t[0] ? (const char *)t : fallback;
}

/* The shared frame index of a function (name, file), added if new. */
static uint64_t frame_index(struct speedscope *s, const char *name, const char *file)
{
	uint64_t a = export_hash(name, 11) ^ export_hash(file, 12) * 3;
	uint64_t b = export_hash(name, 13) ^ export_hash(file, 14) * 3;
	int created = 0;
	uint64_t *v = hmap_upsert(&s->by_key, a, b, s->nframes, &created);

	if (!v || (created && array_grow((void **)&s->frames, &s->capframes, s->nframes,
					 sizeof(*s->frames), 256) < 0)) {
		s->failed = 1;
		return 0;
	}
	if (created) {
		s->frames[s->nframes].name = strdup(name);
		s->frames[s->nframes].file = strdup(file);
		s->nframes++;
	}
	return *v;
}

/* Remembers s->stack[from..] as the frames of stack id. */
static void cache_stack(struct speedscope *s, int64_t id, size_t from)
{
	size_t len = s->nstack - from;
	int created = 0;
	uint64_t *v;

	if (len >= (1u << 20) || s->ncache + len >= (1ull << 43))
		return;
	while (s->ncache + len > s->capcache)
		if (array_grow((void **)&s->cache, &s->capcache, s->ncache + len - 1,
			       sizeof(*s->cache), 256) < 0)
			return;
	v = hmap_upsert(&s->stacks, (uint64_t)id, 0, (s->ncache << 20) | len, &created);
	if (!v)
		return;
	memcpy(s->cache + s->ncache, s->stack + from, len * sizeof(*s->cache));
	s->ncache += len;
}

static int push_frame(struct speedscope *s, uint64_t frame)
{
	if (array_grow((void **)&s->stack, &s->capstack, s->nstack, sizeof(*s->stack), 256) < 0) {
		s->failed = 1;
		return -1;
	}
	s->stack[s->nstack++] = frame;
	return 0;
}

static int cached_stack(struct speedscope *s, int64_t id)
{
	const uint64_t *v = hmap_find(&s->stacks, (uint64_t)id, 0);
	uint64_t len;

	if (!v)
		return 0;
	len = *v & ((1u << 20) - 1);
	for (uint64_t i = 0; i < len; i++)
		if (push_frame(s, s->cache[(*v >> 20) + i]) < 0)
			break;
	return 1;
}

static void add_stack(struct speedscope *s, sqlite3_stmt *group, int col)
{
	int64_t id = sqlite3_column_int64(group, col);
	size_t from = s->nstack;

	if (sqlite3_column_type(group, col) == SQLITE_NULL || cached_stack(s, id))
		return;
	sqlite3_reset(s->frames_st);
	sqlite3_bind_int64(s->frames_st, 1, id);
	while (sqlite3_step(s->frames_st) == SQLITE_ROW) {
		const char *name = text_or(s->frames_st, 0, "[unknown]");
		const char *file = text_or(s->frames_st, 1, text_or(s->frames_st, 2, ""));

		if (push_frame(s, frame_index(s, name, file)) < 0)
			return;
	}
	cache_stack(s, id, from);
}

static void thread_name(struct speedscope *s, uint32_t pid, uint32_t tid, char *buf,
			size_t len)
{
	const char *comm = names_thread(&s->names, pid, tid);

	snprintf(buf, len, "%s (tid %u, pid %u)", comm ? comm : "?", tid, pid);
}

static void copy_weights(struct speedscope *s, FILE *weights)
{
	char buf[8192];
	size_t n;

	fputs(",\"weights\":[", s->out);
	rewind(weights);
	while ((n = fread(buf, 1, sizeof(buf), weights)) > 0)
		fwrite(buf, 1, n, s->out);
	fputc(']', s->out);
}

/* Ends the current thread's sampled profile. */
static void end_sampled(struct speedscope *s, FILE *weights, uint64_t total)
{
	json_end_array(&s->w);
	copy_weights(s, weights);
	json_uint(&s->w, "endValue", total);
	json_end_object(&s->w);
}

static void begin_sampled(struct speedscope *s, uint32_t pid, uint32_t tid, int ns)
{
	char name[300];

	thread_name(s, pid, tid, name, sizeof(name));
	json_begin_object(&s->w, NULL);
	json_string(&s->w, "type", "sampled");
	json_string(&s->w, "name", name);
	json_string(&s->w, "unit", ns ? "nanoseconds" : "none");
	json_uint(&s->w, "startValue", 0);
	json_begin_array(&s->w, "samples");
}

/* Writes the current stack root first as one sample. */
static void write_stack(struct speedscope *s)
{
	json_begin_array(&s->w, NULL);
	for (size_t i = s->nstack; i > 0; i--)
		json_uint(&s->w, NULL, s->stack[i - 1]);
	json_end_array(&s->w);
}

static int sampled_profiles(struct speedscope *s)
{
	char cond[1024], sql[2048];
	uint64_t period = s->cx->period_ns, total = 0;
	int64_t cur_pid = -1, cur_tid = -1;
	FILE *weights = NULL;
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), s->cx->scope.windowed
		 ? "SELECT pid, tid, ustack_id, kstack_id, count(*) FROM samples WHERE %s"
		   " GROUP BY pid, tid, ustack_id, kstack_id ORDER BY pid, tid"
		 : "SELECT pid, tid, ustack_id, kstack_id, count FROM sample_counts WHERE %s"
		   " ORDER BY pid, tid",
		 export_scope_sql(s->cx, cond, sizeof(cond), "pid", "tid", "ts", "ts"));
	st = export_prepare(s->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !s->failed) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		uint64_t w = (uint64_t)sqlite3_column_int64(st, 4) * (period ? period : 1);

		if (pid != cur_pid || tid != cur_tid) {
			if (weights) {
				end_sampled(s, weights, total);
				fclose(weights);
			}
			weights = tmpfile();
			if (!weights) {
				s->failed = 1;
				break;
			}
			total = 0;
			cur_pid = pid;
			cur_tid = tid;
			begin_sampled(s, (uint32_t)pid, (uint32_t)tid, period != 0);
		}
		s->nstack = 0;
		add_stack(s, st, 3);
		add_stack(s, st, 2);
		write_stack(s);
		fprintf(weights, "%s%llu", total ? "," : "", (unsigned long long)w);
		total += w;
	}
	if (weights) {
		end_sampled(s, weights, total);
		fclose(weights);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && !s->failed ? 0 : -1;
}

struct open_request {
	uint64_t end;
	uint64_t frame;
};

struct lane {
	struct open_request open[MAX_OPEN];
	int nopen;
	uint64_t last;           /* latest time written (events must not go back) */
};

static void event(struct speedscope *s, struct lane *l, const char *type, uint64_t frame,
		  uint64_t at)
{
	json_begin_object(&s->w, NULL);
	json_string(&s->w, "type", type);
	json_uint(&s->w, "frame", frame);
	json_uint(&s->w, "at", at);
	json_end_object(&s->w);
	l->last = at;
}

/* Closes the open requests that ended by t, innermost first. */
static void close_until(struct speedscope *s, struct lane *l, uint64_t t)
{
	while (l->nopen > 0 && l->open[l->nopen - 1].end <= t) {
		l->nopen--;
		event(s, l, "C", l->open[l->nopen].frame, l->open[l->nopen].end);
	}
}

/* Opens a request [start, end) on the lane; one that outlives the
 * request it started inside is cut at that one's end, so frames nest. */
static void open_request(struct speedscope *s, struct lane *l, uint64_t frame,
			 uint64_t start, uint64_t end)
{
	close_until(s, l, start);
	if (l->nopen > 0 && end > l->open[l->nopen - 1].end)
		end = l->open[l->nopen - 1].end;
	if (l->nopen == MAX_OPEN || end <= start)
		return;
	event(s, l, "O", frame, start);
	l->open[l->nopen].end = end;
	l->open[l->nopen].frame = frame;
	l->nopen++;
}

static void end_evented(struct speedscope *s, struct lane *l)
{
	close_until(s, l, UINT64_MAX);
	json_end_array(&s->w);
	json_uint(&s->w, "endValue", s->cx->scope.to - s->cx->scope.from);
	json_end_object(&s->w);
}

static void begin_evented(struct speedscope *s, struct lane *l, uint32_t pid, uint32_t tid)
{
	char name[320], label[300];

	thread_name(s, pid, tid, label, sizeof(label));
	snprintf(name, sizeof(name), "requests of %s", label);
	memset(l, 0, sizeof(*l));
	json_begin_object(&s->w, NULL);
	json_string(&s->w, "type", "evented");
	json_string(&s->w, "name", name);
	json_string(&s->w, "unit", "nanoseconds");
	json_uint(&s->w, "startValue", 0);
	json_begin_array(&s->w, "events");
}

static int evented_profiles(struct speedscope *s)
{
	const struct report_scope *sc = &s->cx->scope;
	char cond[1024], sql[2048], frame[64];
	int64_t cur_pid = -1, cur_tid = -1;
	struct lane lane;
	sqlite3_stmt *st;
	int rc;

	if (!report_has_object(s->cx->db, "requests"))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT pid, pickup_tid, fd, max(start_ts, :from),"
		 " min(end_ts, :to) FROM requests WHERE %s ORDER BY pid, pickup_tid, start_ts,"
		 " end_ts DESC",
		 export_scope_sql(s->cx, cond, sizeof(cond), "pid", "pickup_tid", "start_ts",
				  "end_ts"));
	st = export_prepare(s->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !s->failed) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 3) - sc->from;
		uint64_t end = (uint64_t)sqlite3_column_int64(st, 4) - sc->from;

		if (pid != cur_pid || tid != cur_tid) {
			if (cur_pid >= 0)
				end_evented(s, &lane);
			cur_pid = pid;
			cur_tid = tid;
			begin_evented(s, &lane, (uint32_t)pid, (uint32_t)tid);
		}
		snprintf(frame, sizeof(frame), "request on fd %lld", sqlite3_column_int64(st, 2));
		open_request(s, &lane, frame_index(s, frame, ""), start, end);
	}
	if (cur_pid >= 0)
		end_evented(s, &lane);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && !s->failed ? 0 : -1;
}

static void shared_frames(struct speedscope *s)
{
	json_begin_object(&s->w, "shared");
	json_begin_array(&s->w, "frames");
	for (size_t i = 0; i < s->nframes; i++) {
		json_begin_object(&s->w, NULL);
		json_string(&s->w, "name", s->frames[i].name ? s->frames[i].name : "?");
		if (s->frames[i].file && s->frames[i].file[0])
			json_string(&s->w, "file", s->frames[i].file);
		json_end_object(&s->w);
	}
	json_end_array(&s->w);
	json_end_object(&s->w);
}

static void free_speedscope(struct speedscope *s)
{
	for (size_t i = 0; i < s->nframes; i++) {
		free(s->frames[i].name);
		free(s->frames[i].file);
	}
	free(s->frames);
	free(s->stack);
	free(s->cache);
	hmap_free(&s->stacks);
	hmap_free(&s->by_key);
	names_free(&s->names);
	sqlite3_finalize(s->frames_st);
}

int export_speedscope(struct export_ctx *cx, FILE *out)
{
	struct speedscope s = { .cx = cx, .out = out };
	char title[400];
	int rc = -1;

	hmap_init(&s.by_key);
	hmap_init(&s.stacks);
	s.frames_st = db_prepare(cx->db, "SELECT COALESCE(f.function, f.name), f.file, f.module"
				 " FROM stack_frames sf JOIN frames f ON f.frame_id = sf.frame_id"
				 " WHERE sf.stack_id = ?1 ORDER BY sf.position");
	if (s.frames_st && names_load(&s.names, cx->db) == 0) {
		snprintf(title, sizeof(title), "perfcap run %s on %s", cx->run_id, cx->host);
		json_init(&s.w, out, 0);
		json_begin_object(&s.w, NULL);
		json_string(&s.w, "$schema", "https://www.speedscope.app/file-format-schema.json");
		json_string(&s.w, "exporter", "perfcap-analyze " PERFCAP_VERSION);
		json_string(&s.w, "name", title);
		json_uint(&s.w, "activeProfileIndex", 0);
		json_begin_array(&s.w, "profiles");
		rc = sampled_profiles(&s);
		if (rc == 0)
			rc = evented_profiles(&s);
		json_end_array(&s.w);
		shared_frames(&s);
		json_end_object(&s.w);
		json_finish(&s.w);
	}
	if (s.failed)
		fprintf(stderr, "perfcap-analyze: speedscope: out of memory\n");
	free_speedscope(&s);
	return rc;
}
