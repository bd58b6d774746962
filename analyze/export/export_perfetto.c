/* export_perfetto.c - export --format perfetto: a native Perfetto trace
 * (perfetto_trace.proto here: the subset written from Perfetto's
 * documented field numbers, compiled by protoc-c). A Trace is a sequence
 * of TracePacket fields, so each packet is packed and written as it is
 * made: process and thread tracks with names, the scheduler states of
 * each thread as slices on a "state" child track, system calls as slices
 * on the thread track, requests as slices on a track per (process, fd),
 * counters (run-queue depth, block I/O in flight, pool utilisation), and
 * CPU samples (PerfSample) with interned callstacks, frames, function
 * names and mappings. Perfetto sorts packets by time when it loads a
 * trace, so each kind is written in the order SQL gives it cheaply. */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "export_internal.h"
#include "perfetto_trace.pb-c.h"
#include "query/names.h"
#include "util/hashmap.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackDescriptor Track;
typedef Perfetto__Protos__TrackEvent Event;

enum { SEQ_ID = 1, SEQ_CLEARED = 1, SEQ_NEEDS_STATE = 2 };
enum { U_PROCESS = 1, U_THREAD, U_STATE, U_REQUESTS, U_COUNTER };

struct interned {            /* what one sample packet adds to the dictionaries */
	Perfetto__Protos__InternedString *strings, **string_ptrs;
	Perfetto__Protos__InternedString *paths, **path_ptrs;
	Perfetto__Protos__Frame *frames, **frame_ptrs;
	Perfetto__Protos__Mapping *maps, **map_ptrs;
	uint64_t *path_ids;
	size_t nstrings, npaths, nframes, nmaps, cap;
};

struct perfetto {
	struct export_ctx *cx;
	FILE *out;
	uint8_t *buf;
	size_t cap;
	struct names names;
	struct hmap strings, mappings, frames, callstacks, tracks;
	uint64_t nstrings, nmappings, ncallstacks;
	sqlite3_stmt *frames_st;
	struct interned in;
	uint64_t *stack;
	size_t nstack, capstack;
	int failed;
};

static uint64_t uuid(int kind, uint64_t pid, uint64_t tid)
{
	return ((uint64_t)kind << 56) | ((pid & 0xfffffff) << 28) | (tid & 0xfffffff);
}

static void put_varint(FILE *out, uint64_t v)
{
	while (v >= 0x80) {
		fputc((int)(v & 0x7f) | 0x80, out);
		v >>= 7;
	}
	fputc((int)v, out);
}

/* Writes the packet as field 1 (packet) of Trace. */
static void emit(struct perfetto *p, Packet *pkt)
{
	size_t len;

	pkt->has_trusted_packet_sequence_id = 1;
	pkt->trusted_packet_sequence_id = SEQ_ID;
	len = perfetto__protos__trace_packet__get_packed_size(pkt);
	if (len > p->cap) {
		uint8_t *n = realloc(p->buf, len);

		if (!n) {
			p->failed = 1;
			return;
		}
		p->buf = n;
		p->cap = len;
	}
	perfetto__protos__trace_packet__pack(pkt, p->buf);
	fputc(0x0a, p->out);
	put_varint(p->out, len);
	fwrite(p->buf, 1, len, p->out);
}

static void emit_track(struct perfetto *p, Track *t)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pkt.track_descriptor = t;
	emit(p, &pkt);
}

static void emit_event(struct perfetto *p, uint64_t ts, uint64_t track, int type,
		       const char *name, int64_t value)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Event ev = PERFETTO__PROTOS__TRACK_EVENT__INIT;

	ev.has_type = 1;
	ev.type = (Perfetto__Protos__TrackEvent__Type)type;
	ev.has_track_uuid = 1;
	ev.track_uuid = track;
	ev.name = (char *)name;
	if (type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
		ev.counter_value_field_case =
			PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
		ev.counter_value = value;
	}
	pkt.has_timestamp = 1;
	pkt.timestamp = ts;
	pkt.track_event = &ev;
	emit(p, &pkt);
}

static void slice(struct perfetto *p, uint64_t track, const char *name, uint64_t start,
		  uint64_t end)
{
	emit_event(p, start, track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
		   name, 0);
	emit_event(p, end, track, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END, NULL, 0);
}

static void process_track(struct perfetto *p, uint32_t pid)
{
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;

	t.has_uuid = 1;
	t.uuid = uuid(U_PROCESS, pid, 0);
	pd.has_pid = 1;
	pd.pid = (int32_t)pid;
	pd.process_name = (char *)names_process(&p->names, pid);
	t.process = &pd;
	emit_track(p, &t);
}

/* The thread's track and its "state" child track. */
static void thread_tracks(struct perfetto *p, uint32_t pid, uint32_t tid)
{
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Track s = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;

	t.has_uuid = 1;
	t.uuid = uuid(U_THREAD, pid, tid);
	t.has_parent_uuid = 1;
	t.parent_uuid = uuid(U_PROCESS, pid, 0);
	td.has_pid = td.has_tid = 1;
	td.pid = (int32_t)pid;
	td.tid = tid;
	td.thread_name = (char *)names_thread(&p->names, pid, tid);
	t.thread = &td;
	emit_track(p, &t);
	s.has_uuid = s.has_parent_uuid = 1;
	s.uuid = uuid(U_STATE, pid, tid);
	s.parent_uuid = t.uuid;
	s.name = (char *)"state";
	emit_track(p, &s);
}

static int tracks(struct perfetto *p)
{
	char cond[1024], sql[2048];
	int64_t last_pid = -1;
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT pid, tid FROM (SELECT pid, tid FROM threads UNION"
		 " SELECT pid, tid FROM sample_counts UNION SELECT pid, tid FROM"
		 " thread_state_rows UNION SELECT pid, tid FROM syscalls UNION"
		 " SELECT pid, pid FROM processes) WHERE %s"
		 " ORDER BY pid, tid",
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", NULL, NULL));
	st = export_prepare(p->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);

		if (pid != last_pid)
			process_track(p, pid);
		last_pid = pid;
		thread_tracks(p, pid, (uint32_t)sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Slices from sql: pid, tid (or key), name, start, end; track kind. */
static int slices(struct perfetto *p, const char *sql, int kind)
{
	sqlite3_stmt *st = export_prepare(p->cx, sql);
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !p->failed) {
		uint64_t pid = (uint64_t)sqlite3_column_int64(st, 0);
		uint64_t key = (uint64_t)sqlite3_column_int64(st, 1);
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 3);
		uint64_t end = (uint64_t)sqlite3_column_int64(st, 4);

		slice(p, uuid(kind, pid, key), (const char *)sqlite3_column_text(st, 2), start,
		      end < start ? start : end);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int state_and_syscall_slices(struct perfetto *p)
{
	char cond[1024], sql[2048];

	snprintf(sql, sizeof(sql), "SELECT pid, tid, state, start_ts, end_ts FROM thread_states"
		 " WHERE %s ORDER BY tid, start_ts",
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "start_ts", "end_ts"));
	if (slices(p, sql, U_STATE) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "SELECT pid, tid, name, start_ts, end_ts FROM"
		 " syscall_intervals WHERE %s ORDER BY tid, start_ts",
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "start_ts", "end_ts"));
	return slices(p, sql, U_THREAD);
}

/* Requests: a track per (pid, fd), described when first met. */
static int request_slices(struct perfetto *p)
{
	char cond[1024], sql[2048], name[64];
	sqlite3_stmt *st;
	int rc;

	if (!report_has_object(p->cx->db, "requests"))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT pid, fd, request, start_ts, end_ts FROM requests"
		 " WHERE %s ORDER BY pid, fd, start_ts",
		 export_scope_sql(p->cx, cond, sizeof(cond), "pid", "pickup_tid", "start_ts",
				  "end_ts"));
	st = export_prepare(p->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !p->failed) {
		uint64_t pid = (uint64_t)sqlite3_column_int64(st, 0);
		uint64_t fd = (uint64_t)sqlite3_column_int64(st, 1);
		uint64_t track = uuid(U_REQUESTS, pid, fd);
		int created = 0;
		uint64_t *last = hmap_upsert(&p->tracks, track, 0, 0, &created);
		uint64_t start = (uint64_t)sqlite3_column_int64(st, 3);
		uint64_t end = (uint64_t)sqlite3_column_int64(st, 4);

		if (!last) {
			p->failed = 1;
			break;
		}
		if (created) {
			Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;

			snprintf(name, sizeof(name), "requests on fd %llu", (unsigned long long)fd);
			t.has_uuid = t.has_parent_uuid = 1;
			t.uuid = track;
			t.parent_uuid = uuid(U_PROCESS, pid, 0);
			t.name = name;
			emit_track(p, &t);
			last = hmap_find(&p->tracks, track, 0);
		}
		if (start < *last)   /* pipelined requests: keep slices disjoint */
			start = *last;
		if (end < start)
			end = start;
		*last = end;
		snprintf(name, sizeof(name), "request %lld", sqlite3_column_int64(st, 2));
		slice(p, track, name, start, end);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && !p->failed ? 0 : -1;
}

static void counter_track(struct perfetto *p, uint64_t id, const char *name, uint64_t parent)
{
	Track t = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor c = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;

	t.has_uuid = 1;
	t.uuid = id;
	t.name = (char *)name;
	if (parent) {
		t.has_parent_uuid = 1;
		t.parent_uuid = parent;
	}
	c.has_unit = 1;
	c.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
	t.counter = &c;
	emit_track(p, &t);
}

/* A counter from sql: ts, value (rows in time order). */
static int counter(struct perfetto *p, uint64_t id, const char *name, const char *sql)
{
	sqlite3_stmt *st = export_prepare(p->cx, sql);
	int rc;

	if (!st)
		return -1;
	counter_track(p, id, name, 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !p->failed)
		emit_event(p, (uint64_t)sqlite3_column_int64(st, 0), id,
			   PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER, NULL,
			   sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Run-queue depth and block requests in flight: +1 at each interval's
 * start, -1 at its end, summed in time order. Pool utilisation per
 * process window, in per mille. */
static int counters(struct perfetto *p)
{
	char cond[1024], sql[3072];

	export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "start_ts", "end_ts");
	snprintf(sql, sizeof(sql), "SELECT ts, sum(d) OVER (ORDER BY ts, d ROWS UNBOUNDED"
		 " PRECEDING) FROM (SELECT start_ts AS ts, 1 AS d FROM thread_states WHERE"
		 " state = 'runnable' AND %s UNION ALL SELECT end_ts, -1 FROM thread_states"
		 " WHERE state = 'runnable' AND %s) ORDER BY ts, d", cond, cond);
	if (counter(p, uuid(U_COUNTER, 0, 1), "run-queue depth", sql) < 0)
		return -1;
	export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "ts - service_ns - queue_ns",
			 "ts");
	snprintf(sql, sizeof(sql), "SELECT t, sum(d) OVER (ORDER BY t, d ROWS UNBOUNDED"
		 " PRECEDING) FROM (SELECT ts - service_ns - queue_ns AS t, 1 AS d FROM block_io"
		 " WHERE %s UNION ALL SELECT ts, -1 FROM block_io WHERE %s) ORDER BY t, d",
		 cond, cond);
	if (counter(p, uuid(U_COUNTER, 0, 2), "block I/O in flight", sql) < 0)
		return -1;
	if (!report_has_object(p->cx->db, "pool_utilisation"))
		return 0;
	export_scope_sql(p->cx, cond, sizeof(cond), "pid", "pid", "window_start", "window_end");
	snprintf(sql, sizeof(sql), "SELECT window_start, CAST(round(1000 * utilisation) AS"
		 " INTEGER) FROM pool_utilisation WHERE %s ORDER BY pid, window_start", cond);
	return counter(p, uuid(U_COUNTER, 0, 3), "pool utilisation (per mille)", sql);
}

/* ---- CPU samples with interned callstacks ---------------------------- */

static int samples_prepare(struct perfetto *p)
{
	p->frames_st = db_prepare(p->cx->db,
		"SELECT f.frame_id, COALESCE(f.function, f.name), f.module, f.module_offset,"
		" f.kind, f.address FROM stack_frames sf JOIN frames f ON f.frame_id = sf.frame_id"
		" WHERE sf.stack_id = ?1 ORDER BY sf.position");
	return p->frames_st ? 0 : -1;
}

static void interned_reset(struct interned *in)
{
	for (size_t i = 0; i < in->nstrings; i++)
		free(in->strings[i].str.data);
	for (size_t i = 0; i < in->npaths; i++)
		free(in->paths[i].str.data);
	in->nstrings = in->npaths = in->nframes = in->nmaps = 0;
}

static void samples_free(struct perfetto *p)
{
	struct interned *in = &p->in;

	interned_reset(in);
	free(in->strings);
	free(in->string_ptrs);
	free(in->paths);
	free(in->path_ptrs);
	free(in->frames);
	free(in->frame_ptrs);
	free(in->maps);
	free(in->map_ptrs);
	free(in->path_ids);
	free(p->stack);
	sqlite3_finalize(p->frames_st);
}

#define GROW(field, cap) \
	((tmp = realloc(in->field, (cap) * sizeof(*in->field))) ? (in->field = tmp, 0) : -1)

/* Room for one more entry of every dictionary in this packet. */
static int interned_room(struct interned *in)
{
	size_t cap = in->cap ? 2 * in->cap : 64;
	void *tmp;

	if (in->nstrings < in->cap && in->npaths < in->cap && in->nframes < in->cap &&
	    in->nmaps < in->cap)
		return 0;
	if (GROW(strings, cap) || GROW(string_ptrs, cap) || GROW(paths, cap) ||
	    GROW(path_ptrs, cap) || GROW(frames, cap) || GROW(frame_ptrs, cap) ||
	    GROW(maps, cap) || GROW(map_ptrs, cap) || GROW(path_ids, cap))
		return -1;
	in->cap = cap;
	return 0;
}

/* The iid of a string in a namespace (seed), added to the packet if new. */
static uint64_t intern_string(struct perfetto *p, const char *s, uint64_t seed, int path)
{
	struct interned *in = &p->in;
	int created = 0;
	uint64_t *v = hmap_upsert(&p->strings, export_hash(s, seed), export_hash(s, seed + 1),
				  p->nstrings + 1, &created);
	Perfetto__Protos__InternedString *is;

	if (!v || interned_room(in) < 0) {
		p->failed = 1;
		return 0;
	}
	if (!created)
		return *v;
	is = path ? &in->paths[in->npaths++] : &in->strings[in->nstrings++];
	*is = (Perfetto__Protos__InternedString)PERFETTO__PROTOS__INTERNED_STRING__INIT;
	is->has_iid = is->has_str = 1;
	is->iid = ++p->nstrings;
	is->str.data = (uint8_t *)strdup(s);
	is->str.len = strlen(s);
	return is->iid;
}

static uint64_t intern_mapping(struct perfetto *p, const char *module)
{
	struct interned *in = &p->in;
	int created = 0;
	uint64_t *v = hmap_upsert(&p->mappings, export_hash(module, 31),
				  export_hash(module, 32), p->nmappings + 1, &created);
	Perfetto__Protos__Mapping *m;
	uint64_t path;

	if (!v) {
		p->failed = 1;
		return 0;
	}
	if (!created)
		return *v;
	path = intern_string(p, module, 33, 1);
	if (p->failed)
		return 0;
	m = &in->maps[in->nmaps];
	*m = (Perfetto__Protos__Mapping)PERFETTO__PROTOS__MAPPING__INIT;
	m->has_iid = 1;
	m->iid = ++p->nmappings;
	in->path_ids[in->nmaps] = path;
	m->n_path_string_ids = 1;
	m->path_string_ids = &in->path_ids[in->nmaps];
	in->nmaps++;
	return m->iid;
}

/* The frame of the current frames_st row, interned; returns its iid. */
static uint64_t intern_frame(struct perfetto *p, sqlite3_stmt *st)
{
	uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
	const char *kind = (const char *)sqlite3_column_text(st, 4);
	const char *name = (const char *)sqlite3_column_text(st, 1);
	const char *module = (const char *)sqlite3_column_text(st, 2);
	Perfetto__Protos__Frame *f;
	int created = 0;

	if (!hmap_upsert(&p->frames, id, 0, 1, &created) || interned_room(&p->in) < 0) {
		p->failed = 1;
		return id;
	}
	if (!created)
		return id;
	f = &p->in.frames[p->in.nframes];
	*f = (Perfetto__Protos__Frame)PERFETTO__PROTOS__FRAME__INIT;
	f->has_iid = f->has_function_name_id = f->has_mapping_id = f->has_rel_pc = 1;
	f->iid = id;
	f->function_name_id = intern_string(p, name ? name : "[unknown]", 34, 0);
	f->mapping_id = intern_mapping(p, module ? module : "[unknown]");
	f->rel_pc = (uint64_t)sqlite3_column_int64(st, kind && strcmp(kind, "user") == 0 ? 3 : 5);
	p->in.nframes++;
	return id;
}

static void add_frames(struct perfetto *p, sqlite3_stmt *sample, int col)
{
	if (sqlite3_column_type(sample, col) == SQLITE_NULL)
		return;
	sqlite3_reset(p->frames_st);
	sqlite3_bind_int64(p->frames_st, 1, sqlite3_column_int64(sample, col));
	while (sqlite3_step(p->frames_st) == SQLITE_ROW && !p->failed) {
		if (p->nstack == p->capstack) {
			size_t cap = p->capstack ? 2 * p->capstack : 256;
			uint64_t *n = realloc(p->stack, cap * sizeof(*n));

			if (!n) {
				p->failed = 1;
				return;
			}
			p->stack = n;
			p->capstack = cap;
		}
		p->stack[p->nstack++] = intern_frame(p, p->frames_st);
	}
}

/* Writes one sample, with the interned data its callstack adds. */
static void sample_packet(struct perfetto *p, sqlite3_stmt *st, uint64_t cs,
			  Perfetto__Protos__Callstack *callstack)
{
	Packet pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__PerfSample ps = PERFETTO__PROTOS__PERF_SAMPLE__INIT;
	Perfetto__Protos__InternedData data = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	struct interned *in = &p->in;

	for (size_t i = 0; i < in->nstrings; i++)
		in->string_ptrs[i] = &in->strings[i];
	for (size_t i = 0; i < in->npaths; i++)
		in->path_ptrs[i] = &in->paths[i];
	for (size_t i = 0; i < in->nframes; i++)
		in->frame_ptrs[i] = &in->frames[i];
	for (size_t i = 0; i < in->nmaps; i++)
		in->map_ptrs[i] = &in->maps[i];
	data.n_function_names = in->nstrings;
	data.function_names = in->string_ptrs;
	data.n_mapping_paths = in->npaths;
	data.mapping_paths = in->path_ptrs;
	data.n_frames = in->nframes;
	data.frames = in->frame_ptrs;
	data.n_mappings = in->nmaps;
	data.mappings = in->map_ptrs;
	data.n_callstacks = callstack ? 1 : 0;
	data.callstacks = &callstack;
	if (callstack)
		pkt.interned_data = &data;
	ps.has_cpu = ps.has_pid = ps.has_tid = ps.has_callstack_iid = 1;
	ps.cpu = (uint32_t)sqlite3_column_int64(st, 1);
	ps.pid = (uint32_t)sqlite3_column_int64(st, 2);
	ps.tid = (uint32_t)sqlite3_column_int64(st, 3);
	ps.callstack_iid = cs;
	pkt.has_timestamp = pkt.has_sequence_flags = 1;
	pkt.timestamp = (uint64_t)sqlite3_column_int64(st, 0);
	pkt.sequence_flags = SEQ_NEEDS_STATE;
	pkt.perf_sample = &ps;
	emit(p, &pkt);
	interned_reset(in);
}

static void one_sample(struct perfetto *p, sqlite3_stmt *st)
{
	Perfetto__Protos__Callstack callstack = PERFETTO__PROTOS__CALLSTACK__INIT;
	int64_t u = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4);
	int64_t k = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
	int created = 0;
	uint64_t *v = hmap_upsert(&p->callstacks, (uint64_t)u, (uint64_t)k,
				  p->ncallstacks + 1, &created);
	uint64_t cs;

	if (!v) {
		p->failed = 1;
		return;
	}
	cs = *v;
	if (!created) {
		sample_packet(p, st, cs, NULL);
		return;
	}
	p->ncallstacks++;
	p->nstack = 0;
	add_frames(p, st, 5);
	add_frames(p, st, 4);
	/* bottom (outermost) frame first */
	for (size_t i = 0; i < p->nstack / 2; i++) {
		uint64_t t = p->stack[i];

		p->stack[i] = p->stack[p->nstack - 1 - i];
		p->stack[p->nstack - 1 - i] = t;
	}
	callstack.has_iid = 1;
	callstack.iid = cs;
	callstack.n_frame_ids = p->nstack;
	callstack.frame_ids = p->stack;
	sample_packet(p, st, cs, &callstack);
}

static int cpu_samples(struct perfetto *p)
{
	char cond[1024], sql[2048];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT ts, cpu, pid, tid, ustack_id, kstack_id FROM samples"
		 " WHERE %s", export_scope_sql(p->cx, cond, sizeof(cond), "pid", "tid", "ts", "ts"));
	st = export_prepare(p->cx, sql);
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !p->failed)
		one_sample(p, st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE && !p->failed ? 0 : -1;
}

int export_perfetto(struct export_ctx *cx, FILE *out)
{
	struct perfetto p = { .cx = cx, .out = out };
	Packet first = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	int rc = -1;

	hmap_init(&p.strings);
	hmap_init(&p.mappings);
	hmap_init(&p.frames);
	hmap_init(&p.callstacks);
	hmap_init(&p.tracks);
	if (names_load(&p.names, cx->db) == 0 && samples_prepare(&p) == 0) {
		first.has_sequence_flags = 1;
		first.sequence_flags = SEQ_CLEARED;
		emit(&p, &first);
		rc = tracks(&p);
		if (rc == 0)
			rc = state_and_syscall_slices(&p);
		if (rc == 0)
			rc = request_slices(&p);
		if (rc == 0)
			rc = counters(&p);
		if (rc == 0)
			rc = cpu_samples(&p);
	}
	if (p.failed) {
		fprintf(stderr, "perfcap-analyze: perfetto: out of memory\n");
		rc = -1;
	}
	samples_free(&p);
	names_free(&p.names);
	hmap_free(&p.strings);
	hmap_free(&p.mappings);
	hmap_free(&p.frames);
	hmap_free(&p.callstacks);
	hmap_free(&p.tracks);
	free(p.buf);
	return rc;
}
