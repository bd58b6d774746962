/* load_records.c - dispatches the records of EVENTS, PROCS, STACKS and
 * SYMBOLS chunks to their decoders through the record type table
 * (record_types.c), and holds the decoders of the capture's content:
 * samples, stacks, processes, threads, mappings, modules, exec and exit.
 * Every length and count inside a record is checked against the record's
 * size; inconsistent records are counted and skipped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "correlate/correlate.h"
#include "db/db.h"
#include "common/elf_module.h"
#include "load_state.h"
#include "db/row_job.h"
#include "db/sql_writer.h"
#include "symbolize/symbolize.h"
#include "util/text.h"
#include "ustack_unwind.h"

int load_prepare_statements(struct loader *L)
{
	struct load_statements *s = &L->st;

	s->chunk = db_prepare(L->db, "INSERT INTO chunks (seq, offset, type, type_name,"
		" version, payload_size, raw_size, count, t_start, t_end)"
		" VALUES (?,?,?,?,?,?,?,?,?,?)");
	s->meta = db_prepare(L->db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)");
	s->stat = db_prepare(L->db,
		"INSERT OR REPLACE INTO stats (chunk, key, value) VALUES (?,?,?)");
	s->process = db_prepare(L->db, "INSERT INTO processes (ts, pid, ppid, start_ns,"
		" comm, exe, cmdline) VALUES (?,?,?,?,?,?,?)");
	s->thread = db_prepare(L->db,
		"INSERT INTO threads (ts, pid, tid, comm) VALUES (?,?,?,?)");
	s->map = db_prepare(L->db, "INSERT INTO maps (map_id, ts, pid, start_addr,"
		" end_addr, pgoff, prot, inode, dev_major, dev_minor, build_id, path)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
	s->module = db_prepare(L->db, "INSERT INTO modules (kind, path, build_id, e_type,"
		" nsegs, nsyms) VALUES (?,?,?,?,?,?)");
	if (!s->chunk || !s->meta || !s->stat || !s->process || !s->thread ||
	    !s->map || !s->module)
		return -1;
	return record_batches_prepare(L);
}

int load_flush_statements(struct loader *L)
{
	return record_batches_flush(L);
}

void load_finalize_statements(struct loader *L)
{
	struct load_statements *s = &L->st;
	sqlite3_stmt *all[] = { s->chunk, s->meta, s->stat, s->process, s->thread,
				s->map, s->module };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		sqlite3_finalize(all[i]);
	record_batches_free(L);
	memset(s, 0, sizeof(*s));
}

/* A row for one of the loader's own statements: a row job (row_job.h),
 * run on the INSERT thread in order with the batches queued before it. */
static struct row_job *row_for(struct loader *L, sqlite3_stmt *st)
{
	return row_job_new(st, sqlite3_bind_parameter_count(st), &L->row_jobs_failed);
}

static void run_row(struct loader *L, struct row_job *j)
{
	row_job_run(L->writer, j, &L->row_jobs_failed);
}

static void count_malformed(struct loader *L)
{
	L->counts.records_malformed++;
}

/* bytes as lowercase hex, as many as fit with the NUL. Every MAP record's
 * build-id goes through here: a table, not snprintf per byte (58k maps of
 * 1,355 short-lived processes took 0.09 s that way). */
static void hex_string(char *out, size_t out_len, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t pos = 0;

	for (size_t i = 0; i < n && pos + 3 <= out_len; i++) {
		out[pos++] = digits[bytes[i] >> 4];
		out[pos++] = digits[bytes[i] & 15];
	}
	out[pos] = '\0';
}

int decode_sample(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_sample *s = in->body;
	uint32_t ustack;

	ustack = ustack_for_sample(L, s->tid, s->ts, s->ustack);
	in->row[0] = (int64_t)s->ts;
	in->row[1] = s->pid;
	in->row[2] = s->tid;
	in->row[3] = s->cpu;
	in->row[4] = ustack;
	in->row[5] = s->kstack;
	in->kind[4] = ustack == PC_STACK_NONE;
	in->kind[5] = s->kstack == PC_STACK_NONE;
	if (sample_groups_add(&L->groups, s->pid, s->tid, ustack, s->kstack, s->ts) < 0 ||
	    correlator_add_sample(L->corr, s->pid, s->tid, s->ts) < 0)
		L->failed = 1;
	if (L->nsamples == 0 || s->ts < L->first_ts)
		L->first_ts = s->ts;
	if (L->nsamples == 0 || s->ts > L->last_ts)
		L->last_ts = s->ts;
	L->nsamples++;
	return 1;
}

/* A user stack copy: unwound now, its sample (next) takes the result. */
int decode_ustack(struct loader *L, const struct record_in *in)
{
	ustack_load(L, in->rec);
	return 0;
}

/* Unwind tables are read by the first pass (ustack_unwind.c). */
int decode_unwind(struct loader *L, const struct record_in *in)
{
	(void)L;
	(void)in;
	return 0;
}

int decode_stack(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_stack *s = in->body;
	int rc;

	if ((uint64_t)s->nr * sizeof(uint64_t) > in->tail_len ||
	    (s->kind != PC_STACK_USER && s->kind != PC_STACK_KERNEL) ||
	    s->id == PC_STACK_NONE) {
		count_malformed(L);
		return 0;
	}
	rc = stack_store_define(&L->stacks, s->id, s->pid, s->kind, s->h.flags, in->tail,
				s->nr);
	if (rc == -EEXIST)
		L->counts.stacks_duplicate++;
	else if (rc < 0)
		L->failed = 1;
	return 0;
}

int decode_process(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_proc *p = in->body;
	char comm[sizeof(p->comm) + 1];
	char *exe, *cmdline;
	struct row_job *j;

	if ((uint64_t)p->exe_len + p->cmdline_len > in->tail_len) {
		count_malformed(L);
		return 0;
	}
	j = row_for(L, L->st.process);
	exe = text_dup_printable(in->tail, p->exe_len, '?');
	cmdline = text_dup_printable(in->tail + p->exe_len, p->cmdline_len, ' ');
	if (!exe || !cmdline || !j) {
		L->failed = 1;
		row_job_free(j);
	} else {
		row_job_int(j, 1, (int64_t)p->ts);
		row_job_int(j, 2, p->pid);
		row_job_int(j, 3, p->ppid);
		row_job_int(j, 4, (int64_t)p->start_ns);
		row_job_text(j, 5, text_copy_printable(comm, sizeof(comm), p->comm,
						       sizeof(p->comm)));
		row_job_text(j, 6, exe);
		row_job_text(j, 7, cmdline);
		run_row(L, j);
	}
	free(exe);
	free(cmdline);
	return 0;
}

int decode_thread(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_thread *t = in->body;
	char comm[sizeof(t->comm) + 1];
	struct row_job *j = row_for(L, L->st.thread);

	if (j) {
		row_job_int(j, 1, (int64_t)t->ts);
		row_job_int(j, 2, t->pid);
		row_job_int(j, 3, t->tid);
		row_job_text(j, 4, text_copy_printable(comm, sizeof(comm), t->comm,
						       sizeof(t->comm)));
	}
	run_row(L, j);
	return 0;
}

/* A process_events row (EXEC and EXIT come in EVENTS chunks). */
static int process_event_row(const struct record_in *in, uint64_t ts, const char *kind_name,
			     uint32_t pid, uint32_t tid, const char *comm)
{
	in->row[0] = (int64_t)ts;
	batch_text(in->row, in->kind, 1, kind_name);
	in->row[2] = pid;
	in->row[3] = tid;
	batch_text_copy(in->batch, in->row, in->kind, 4, comm);
	return 1;
}

int decode_exec(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_exec *e = in->body;
	char comm[sizeof(e->comm) + 1];

	(void)L;
	return process_event_row(in, e->ts, "exec", e->pid, e->tid,
				 text_copy_printable(comm, sizeof(comm), e->comm,
						     sizeof(e->comm)));
}

int decode_exit(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_exit *e = in->body;

	(void)L;
	return process_event_row(in, e->ts, "exit", e->pid, e->tid, NULL);
}

static void insert_map_row(struct loader *L, int64_t map_id, const struct pc_rec_map *m,
			   const struct mapping *mapping)
{
	char build_id[2 * PC_BUILD_ID_MAX + 1];
	struct row_job *j = row_for(L, L->st.map);

	hex_string(build_id, sizeof(build_id), mapping->build_id, mapping->build_id_len);
	if (j) {
		row_job_int(j, 1, map_id + 1);
		row_job_int(j, 2, (int64_t)m->ts);
		row_job_int(j, 3, m->pid);
		row_job_int(j, 4, (int64_t)m->start);
		row_job_int(j, 5, (int64_t)m->end);
		row_job_int(j, 6, (int64_t)m->pgoff);
		row_job_int(j, 7, m->prot);
		row_job_int(j, 8, (int64_t)m->inode);
		row_job_int(j, 9, m->dev_major);
		row_job_int(j, 10, m->dev_minor);
		row_job_text(j, 11, mapping->build_id_len ? build_id : NULL);
		row_job_text(j, 12, mapping->path);
	}
	run_row(L, j);
}

int decode_map(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_map *m = in->body;
	struct mapping mapping = { 0 };
	int64_t map_id;

	if (m->path_len > in->tail_len || m->build_id_len > PC_BUILD_ID_MAX) {
		count_malformed(L);
		return 0;
	}
	if (m->start >= m->end) {
		L->counts.maps_bad++;
		return 0;
	}
	mapping.ts = m->ts;
	mapping.start = m->start;
	mapping.end = m->end;
	mapping.pgoff = m->pgoff;
	mapping.pid = m->pid;
	mapping.build_id_len = m->build_id_len;
	memcpy(mapping.build_id, m->build_id, m->build_id_len);
	mapping.path = text_dup_printable(in->tail, m->path_len, '?');
	if (!mapping.path) {
		L->failed = 1;
		return 0;
	}
	map_id = map_index_add(&L->maps, &mapping);
	if (map_id < 0)
		L->failed = 1;
	else
		insert_map_row(L, map_id, m, &mapping);
	free(mapping.path);
	return 0;
}

/* SYMBOLS: the module record is parsed by format/elf_module.c, whole. */
int decode_module(struct loader *L, const struct record_in *in)
{
	const struct pc_rec *rec = in->rec;
	struct pc_elf_module m;
	char build_id[2 * PC_BUILD_ID_MAX + 1];
	char *path;
	struct row_job *j;

	memset(&m, 0, sizeof(m));
	if (pc_elf_module_from_rec(&m, rec) < 0) {
		L->counts.modules_bad++;
		count_malformed(L);
		pc_elf_module_free(&m);
		return 0;
	}
	if (symbolizer_add_module(L->sym, rec) < 0)
		L->counts.modules_bad++;
	path = m.path ? text_dup_printable(m.path, strlen(m.path), '?') : NULL;
	hex_string(build_id, sizeof(build_id), m.build_id,
		   m.build_id_len <= PC_BUILD_ID_MAX ? m.build_id_len : 0);
	j = row_for(L, L->st.module);
	if (j) {
		row_job_text(j, 1, m.kind == PC_MODULE_KERNEL ? "kernel" :
				   m.kind == PC_MODULE_PERFMAP ? "perfmap" : "elf");
		row_job_text(j, 2, path);
		row_job_text(j, 3, m.build_id_len ? build_id : NULL);
		row_job_int(j, 4, m.e_type);
		row_job_int(j, 5, m.nsegs);
		row_job_int(j, 6, m.nsyms);
	}
	run_row(L, j);
	free(path);
	pc_elf_module_free(&m);
	return 0;
}

static void count_unknown_record(struct loader *L, uint16_t chunk_type, uint16_t type)
{
	uint64_t *count = hmap_upsert(&L->counts.unknown_record_types, chunk_type, type,
				      0, NULL);
	if (!count)
		L->failed = 1;
	else
		(*count)++;
	L->counts.records_unknown++;
}

/* Copies the record into its type's struct, hands it to the decoder with
 * the next row of its table, and commits the row the decoder filled. */
void load_record(struct loader *L, uint16_t chunk_type, const struct pc_rec *rec)
{
	const struct record_type *t = record_type_get(rec->type);
	uint64_t body[RECORD_BODY_MAX / sizeof(uint64_t)];
	struct record_in in = { .rec = rec, .body = body };

	if (!t) {
		count_unknown_record(L, chunk_type, rec->type);
		return;
	}
	L->counts.records[rec->type]++;
	in.tail = pc_rec_copy(rec, body, t->size, &in.tail_len);
	in.batch = L->st.batch[rec->type];
	if (in.batch)
		in.row = batch_row(in.batch, &in.kind);
	if (t->decode(L, &in) && in.batch && batch_commit_row(in.batch) < 0)
		L->failed = 1;
}
