/* cmd_info.c - "perfcap-analyze info FILE": what a capture holds, read
 * straight from the file (no database): format version, damage, every
 * META key, chunks per type with compressed and raw bytes, records per
 * type, time span, every STATS and END key, and the language runtime
 * recognized per process from its PROC and MAP records (util/runtimes.c;
 * without Go's symbols, which need the import). */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util/fmt.h"
#include "util/hashmap.h"
#include "perfcap_format.h"
#include "import/record_types.h"
#include "util/runtimes.h"
#include "util/text.h"

static const char info_doc[] =
"Describe a capture: format version, damage, run metadata, chunks, event "
"counts, time span, loss and statistics counters."
"\v"
"Exit status: 0 if the file is intact, 3 if it is damaged (cut short, or "
"chunks failing their checksum): everything intact is shown and the damage "
"is named; 1 if it is not a readable perfcap capture.\n"
"\n"
"EXAMPLES:\n"
"  perfcap-analyze info run.perfcap\n"
"  perfcap-analyze info run.perfcap | grep lost\n";

#define CHUNK_TYPES  8  /* known chunk types 1..7 */
#define RECORD_TYPES (RECORD_TYPE_MAX + 1)  /* known record types 1..20 */

struct kv_list {
	char **keys;
	char **values;
	size_t len;
	size_t cap;
};

struct chunk_totals {
	uint64_t count;
	uint64_t payload;
	uint64_t raw;
};

#define INFO_PROCS_MAX 4096   /* processes examined for their runtime */
#define INFO_MAPS_MAX  256    /* distinct mapped files per process */

struct proc_facts {
	uint32_t pid;
	char *exe, *argv0;
	char **maps;
	size_t nmaps;
};

struct info {
	struct proc_facts *procs;
	size_t nprocs;
	struct hmap proc_index;         /* (pid, 0) -> index into procs */
	struct kv_list meta;
	struct kv_list stats;
	struct kv_list end;
	struct chunk_totals chunks[CHUNK_TYPES];
	struct hmap unknown_chunks;     /* (type, 0) -> index into unknown_totals */
	struct chunk_totals *unknown_totals;
	uint16_t *unknown_types;
	size_t nunknown;
	uint64_t records[RECORD_TYPES];
	uint64_t records_unknown;
	uint64_t records_malformed;
	uint64_t kv_malformed;
	uint64_t t_min;
	uint64_t t_max;
	int oom;
};

static void kv_add(struct info *in, struct kv_list *l, const char *key, const char *value)
{
	if (l->len == l->cap) {
		size_t new_cap = l->cap ? l->cap * 2 : 32;
		char **keys = realloc(l->keys, new_cap * sizeof(char *));
		if (keys)
			l->keys = keys;
		char **values = realloc(l->values, new_cap * sizeof(char *));
		if (values)
			l->values = values;
		if (!keys || !values) {
			in->oom = 1;
			return;
		}
		l->cap = new_cap;
	}
	l->keys[l->len] = text_dup_printable(key, strlen(key), 0);
	l->values[l->len] = text_dup_printable(value, strlen(value), 0);
	if (!l->keys[l->len] || !l->values[l->len]) {
		free(l->keys[l->len]);
		free(l->values[l->len]);
		in->oom = 1;
		return;
	}
	l->len++;
}

static void kv_free(struct kv_list *l)
{
	for (size_t i = 0; i < l->len; i++) {
		free(l->keys[i]);
		free(l->values[i]);
	}
	free(l->keys);
	free(l->values);
}

static struct chunk_totals *unknown_chunk_totals(struct info *in, uint16_t type)
{
	int created = 0;
	uint64_t *index = hmap_upsert(&in->unknown_chunks, type, 0, in->nunknown, &created);

	if (!index)
		return NULL;
	if (created) {
		struct chunk_totals *t = realloc(in->unknown_totals,
						 (in->nunknown + 1) * sizeof(*t));
		if (t)
			in->unknown_totals = t;
		uint16_t *types = realloc(in->unknown_types,
					  (in->nunknown + 1) * sizeof(*types));
		if (types)
			in->unknown_types = types;
		if (!t || !types)
			return NULL;
		memset(&in->unknown_totals[in->nunknown], 0, sizeof(*t));
		in->unknown_types[in->nunknown++] = type;
	}
	return &in->unknown_totals[*index];
}

static void scan_kv(struct info *in, const struct pc_chunk *c, struct kv_list *l)
{
	struct pc_kv_iter it;
	const char *key, *value;
	int rc;

	pc_kv_iter_init(&it, c->data, c->size);
	while ((rc = pc_kv_next(&it, &key, &value)) == 1)
		kv_add(in, l, key, value);
	if (rc < 0)
		in->kv_malformed++;
}

static struct proc_facts *proc_facts_of(struct info *in, uint32_t pid)
{
	int created = 0;
	uint64_t *index;

	if (!hmap_find(&in->proc_index, pid, 0) && in->nprocs >= INFO_PROCS_MAX)
		return NULL;
	index = hmap_upsert(&in->proc_index, pid, 0, in->nprocs, &created);
	if (!index)
		return NULL;
	if (created) {
		struct proc_facts *p = realloc(in->procs, (in->nprocs + 1) * sizeof(*p));

		if (!p) {
			in->oom = 1;
			return NULL;
		}
		in->procs = p;
		memset(&p[in->nprocs], 0, sizeof(*p));
		p[in->nprocs++].pid = pid;
	}
	return &in->procs[*index];
}

/* PROC: the latest exe and argv[0] of its process. */
static void note_proc(struct info *in, const struct pc_rec *rec)
{
	struct pc_rec_proc p;
	size_t tail_len;
	const uint8_t *tail = pc_rec_copy(rec, &p, sizeof(p), &tail_len);
	struct proc_facts *f;

	if (!tail || (uint64_t)p.exe_len + p.cmdline_len > tail_len ||
	    !(f = proc_facts_of(in, p.pid)))
		return;
	free(f->exe);
	free(f->argv0);
	f->exe = text_dup_printable((const char *)tail, p.exe_len, '?');
	f->argv0 = text_dup_printable((const char *)tail + p.exe_len,
				      strnlen((const char *)tail + p.exe_len, p.cmdline_len), '?');
}

/* MAP: a file the process mapped (each path once). */
static void note_map(struct info *in, const struct pc_rec *rec)
{
	struct pc_rec_map m;
	size_t tail_len;
	const uint8_t *tail = pc_rec_copy(rec, &m, sizeof(m), &tail_len);
	struct proc_facts *f;
	char *path, **grown;

	if (!tail || m.path_len == 0 || m.path_len > tail_len || !(f = proc_facts_of(in, m.pid)) ||
	    f->nmaps >= INFO_MAPS_MAX)
		return;
	for (size_t i = 0; i < f->nmaps; i++)
		if (strlen(f->maps[i]) == m.path_len && memcmp(f->maps[i], tail, m.path_len) == 0)
			return;
	path = text_dup_printable((const char *)tail, m.path_len, '?');
	grown = path ? realloc(f->maps, (f->nmaps + 1) * sizeof(*grown)) : NULL;
	if (!grown) {
		free(path);
		in->oom = 1;
		return;
	}
	f->maps = grown;
	f->maps[f->nmaps++] = path;
}

static void scan_records(struct info *in, const struct pc_chunk *c)
{
	struct pc_rec_iter it;
	const struct pc_rec *rec;
	int rc;

	pc_rec_iter_init(&it, c->data, c->size);
	while ((rc = pc_rec_next(&it, &rec)) == 1) {
		if (rec->type == PC_REC_PROC)
			note_proc(in, rec);
		else if (rec->type == PC_REC_MAP)
			note_map(in, rec);
		if (rec->type >= 1 && rec->type < RECORD_TYPES)
			in->records[rec->type]++;
		else
			in->records_unknown++;
	}
	if (rc < 0)
		in->records_malformed++;
}

static void scan_chunk(struct info *in, const struct pc_chunk *c)
{
	uint16_t type = c->hdr.type;
	struct chunk_totals *t = (type >= 1 && type < CHUNK_TYPES) ?
		&in->chunks[type] : unknown_chunk_totals(in, type);

	if (!t) {
		in->oom = 1;
		return;
	}
	t->count++;
	t->payload += c->hdr.payload_size;
	t->raw += c->hdr.raw_size;
	if (c->hdr.t_start && (in->t_min == 0 || c->hdr.t_start < in->t_min))
		in->t_min = c->hdr.t_start;
	if (c->hdr.t_end > in->t_max)
		in->t_max = c->hdr.t_end;
	if (type == PC_CHUNK_META)
		scan_kv(in, c, &in->meta);
	else if (type == PC_CHUNK_STATS)
		scan_kv(in, c, &in->stats);
	else if (type == PC_CHUNK_END)
		scan_kv(in, c, &in->end);
	else if (type >= 1 && type < CHUNK_TYPES)
		scan_records(in, c);
}

static void print_kv_section(const char *title, const struct kv_list *l)
{
	size_t width = 0;

	printf("\n%s\n", title);
	if (l->len == 0)
		printf("  (none)\n");
	for (size_t i = 0; i < l->len; i++)
		if (strlen(l->keys[i]) > width)
			width = strlen(l->keys[i]);
	for (size_t i = 0; i < l->len; i++)
		printf("  %-*s  %s\n", (int)width, l->keys[i], l->values[i]);
}

static void print_chunk_row(const char *name, const struct chunk_totals *t)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF];

	printf("  %-16s %10s %14s %14s %7s\n", name, fmt_count(a, sizeof(a), t->count),
	       fmt_count(b, sizeof(b), t->payload), fmt_count(c, sizeof(c), t->raw),
	       fmt_ratio(d, sizeof(d), t->raw, t->payload));
}

static void print_chunks(const struct info *in)
{
	struct chunk_totals total = { 0 };
	char name[32];

	printf("\nChunks\n  %-16s %10s %14s %14s %7s\n", "type", "chunks", "payload bytes",
	       "raw bytes", "ratio");
	for (int type = 1; type < CHUNK_TYPES; type++) {
		print_chunk_row(pc_chunk_type_name((uint16_t)type), &in->chunks[type]);
		total.count += in->chunks[type].count;
		total.payload += in->chunks[type].payload;
		total.raw += in->chunks[type].raw;
	}
	for (size_t i = 0; i < in->nunknown; i++) {
		snprintf(name, sizeof(name), "unknown (%u)", in->unknown_types[i]);
		print_chunk_row(name, &in->unknown_totals[i]);
		total.count += in->unknown_totals[i].count;
		total.payload += in->unknown_totals[i].payload;
		total.raw += in->unknown_totals[i].raw;
	}
	print_chunk_row("total", &total);
}

static void print_records(const struct info *in)
{
	char n[FMT_BUF];

	printf("\nRecords\n");
	for (uint16_t type = 1; type < RECORD_TYPES; type++)   /* event types if present */
		if (type < PC_REC_SWITCH || in->records[type])
			printf("  %-16s %14s\n", record_type_name(type),
			       fmt_count(n, sizeof(n), in->records[type]));
	printf("  %-16s %14s  (skipped)\n", "unknown type",
	       fmt_count(n, sizeof(n), in->records_unknown));
	printf("  %-16s %14s\n", "malformed", fmt_count(n, sizeof(n),
	       in->records_malformed + in->kv_malformed));
}

/* Runtimes: one line per recognized process (none: no section). */
static void print_runtimes(const struct info *in)
{
	int header = 0;

	for (size_t i = 0; i < in->nprocs; i++) {
		const struct proc_facts *f = &in->procs[i];
		struct runtime_facts facts = {
			.exe = f->exe, .argv0 = f->argv0, .maps = (const char *const *)f->maps,
			.nmaps = f->nmaps,
		};
		struct runtime_guess g;

		if (!runtime_identify(&facts, &g))
			continue;
		if (!header++)
			printf("\nRuntimes\n  %7s %-8s %-8s %4s  %s\n", "pid", "runtime", "version",
			       "conf", "evidence");
		printf("  %7u %-8s %-8s %3d%%  %s\n", f->pid, g.runtime,
		       g.version[0] ? g.version : "-", g.confidence, g.evidence);
	}
}

static const char *stat_value(const struct kv_list *l, const char *key)
{
	const char *value = NULL;

	for (size_t i = 0; i < l->len; i++)
		if (strcmp(l->keys[i], key) == 0)
			value = l->values[i];
	return value;
}

/* Returns 0, or EXIT_DAMAGED after warning about damage. */
static int print_summary(const char *path, const struct pc_reader *r,
			 const struct info *in)
{
	const struct pc_reader_status *st = pc_reader_status(r);
	char damage[512], a[FMT_BUF];
	const char *why = pc_reader_damage(r, damage, sizeof(damage));
	const char *lost_kernel = stat_value(&in->stats, "cpu.lost.kernel");
	const char *lost_user = stat_value(&in->stats, "cpu.lost.user");

	printf("perfcap capture: %s\n", path);
	printf("  %-12s %s bytes\n", "file size", fmt_count(a, sizeof(a), st->file_size));
	printf("  %-12s %u.%u\n", "format", st->major, st->minor);
	printf("  %-12s %s\n", "status", why ? why : "intact, end marker present");
	printf("  %-12s %s", "time span", fmt_duration_ns(a, sizeof(a),
	       in->t_max > in->t_min ? in->t_max - in->t_min : 0));
	printf(" (monotonic %llu .. %llu ns)\n", (unsigned long long)in->t_min,
	       (unsigned long long)in->t_max);
	printf("  %-12s %s samples\n", "events",
	       fmt_count(a, sizeof(a), in->records[PC_REC_SAMPLE]));
	printf("  %-12s kernel %s, user %s\n", "lost",
	       lost_kernel ? lost_kernel : "-", lost_user ? lost_user : "-");
	return why ? warn_damage(path, why) : 0;
}

static error_t parse_info(int key, char *arg, struct argp_state *state)
{
	const char **path = state->input;

	switch (key) {
	case ARGP_KEY_ARG:
		if (*path)
			argp_error(state, "only one FILE");
		*path = arg;
		return 0;
	case ARGP_KEY_END:
		if (!*path)
			argp_error(state, "FILE is missing");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static void info_free(struct info *in)
{
	kv_free(&in->meta);
	kv_free(&in->stats);
	kv_free(&in->end);
	hmap_free(&in->unknown_chunks);
	hmap_free(&in->proc_index);
	for (size_t i = 0; i < in->nprocs; i++) {
		free(in->procs[i].exe);
		free(in->procs[i].argv0);
		for (size_t k = 0; k < in->procs[i].nmaps; k++)
			free(in->procs[i].maps[k]);
		free(in->procs[i].maps);
	}
	free(in->procs);
	free(in->unknown_totals);
	free(in->unknown_types);
}

int cmd_info(int argc, char **argv)
{
	static const struct argp argp = { .parser = parse_info, .args_doc = "FILE",
					  .doc = info_doc };
	const char *path = NULL;
	char why[256] = "";
	struct pc_reader *r = NULL;
	struct pc_chunk chunk;
	struct info in;
	int rc, status;

	if (argp_parse(&argp, argc, argv, 0, NULL, &path) != 0)
		return EXIT_USAGE;
	rc = pc_reader_open(&r, path, why, sizeof(why));
	if (rc < 0)
		return fail_file(path, capture_open_error(rc, why));
	memset(&in, 0, sizeof(in));
	hmap_init(&in.unknown_chunks);
	hmap_init(&in.proc_index);
	while (!in.oom && pc_reader_next(r, &chunk) == 1)
		scan_chunk(&in, &chunk);
	status = print_summary(path, r, &in);
	print_kv_section("Metadata", &in.meta);
	print_chunks(&in);
	print_records(&in);
	print_runtimes(&in);
	print_kv_section("Stats", &in.stats);
	print_kv_section("End", &in.end);
	rc = in.oom ? fail_file(path, "out of memory") : status;
	info_free(&in);
	pc_reader_close(r);
	return rc;
}
