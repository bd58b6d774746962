/* report_probes.c - "User probes": per probe of -e uprobe:/usdt: (the
 * probes table), its calls or hits, the latency percentiles, total time
 * and the callers most of its calls came from. In JSON: "probes" (present
 * only when the capture has user probes, like the text section).
 *
 * Two sources of numbers: the kernel's exact counts of the whole
 * recording (probes.hits, calls, total_ns, hist: never thinned) and the
 * PROBE records in scope (probe_hits). Percentiles come from the records
 * when every call has one and the scope is the whole capture or narrower
 * records exist; when records were thinned (--probe-min, --sample,
 * --rate-cap: fewer records than kernel calls) and the scope is the whole
 * capture, they come from the kernel's log2 histogram (upper bucket
 * bounds), and say so. Computed first (struct probe_summary), then
 * rendered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

#define CALLERS_MAX 5
#define HIST_BUCKETS 32
#define HIST_SHIFT 9   /* bucket b >= 1: [2^(b+9), 2^(b+10)) ns; 0: < 1024 ns */

struct probe_caller {
	uint32_t function;        /* index in ctx->cc->functions */
	uint64_t calls;
	uint64_t ns;
};

struct probe_summary {
	int64_t id;
	char *kind, *spec, *name, *path, *build_id, *attached, *failed, *hist;
	int64_t offset;
	uint64_t hits, calls, total_ns;   /* kernel, whole recording */
	uint64_t records;                 /* PROBE records of the probe (all) */
	uint64_t scope_records, scope_ns; /* ... in scope */
	uint64_t p50, p90, p99, max;
	int from_histogram;               /* percentiles from the kernel's buckets */
	int timed;                        /* uprobe: calls have durations */
	struct probe_caller callers[CALLERS_MAX];
	size_t ncallers;
	uint64_t callers_total;           /* scope records with a known caller */
};

static char *column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? strdup((const char *)t) : NULL;
}

static void summary_free(struct probe_summary *p)
{
	free(p->kind);
	free(p->spec);
	free(p->name);
	free(p->path);
	free(p->build_id);
	free(p->attached);
	free(p->failed);
	free(p->hist);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rank(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

/* Durations of the probe's records in scope, sorted, into the percentiles. */
static int record_percentiles(const struct report_context *ctx, struct probe_summary *p)
{
	char where[1024], sql[1400];
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT duration FROM probe_hits WHERE probe_id = %lld AND %s",
		 (long long)p->id,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts + duration"));
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 1024;
			uint64_t *grown = realloc(v, c * sizeof(*grown));

			if (!grown) {
				sqlite3_finalize(st);
				free(v);
				return -1;
			}
			v = grown;
			cap = c;
		}
		v[n] = (uint64_t)sqlite3_column_int64(st, 0);
		p->scope_ns += v[n++];
	}
	sqlite3_finalize(st);
	p->scope_records = n;
	if (n > 0) {
		qsort(v, n, sizeof(*v), by_value);
		p->p50 = rank(v, n, 0.50);
		p->p90 = rank(v, n, 0.90);
		p->p99 = rank(v, n, 0.99);
		p->max = v[n - 1];
	}
	free(v);
	return 0;
}

static uint64_t bucket_upper(int b)
{
	return b >= HIST_BUCKETS - 1 ? UINT64_MAX : 1ull << (b + HIST_SHIFT + 1);
}

/* The kernel's "b:calls,..." histogram into upper-bound percentiles. */
static void histogram_percentiles(struct probe_summary *p)
{
	uint64_t count[HIST_BUCKETS] = { 0 }, total = 0, seen = 0;
	const double qs[3] = { 0.50, 0.90, 0.99 };
	uint64_t *out[3] = { &p->p50, &p->p90, &p->p99 };
	const char *s = p->hist;
	int q = 0, last = -1;

	while (s && *s) {
		char *end;
		long b = strtol(s, &end, 10);
		unsigned long long c;

		if (*end != ':')
			break;
		c = strtoull(end + 1, &end, 10);
		if (b >= 0 && b < HIST_BUCKETS) {
			count[b] += c;
			total += c;
		}
		s = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	if (total == 0)
		return;
	for (int b = 0; b < HIST_BUCKETS; b++) {
		seen += count[b];
		if (count[b])
			last = b;
		while (q < 3 && (double)seen >= qs[q] * (double)total)
			*out[q++] = bucket_upper(b);
	}
	p->max = last >= 0 ? bucket_upper(last) : 0;
	p->from_histogram = 1;
}

static void add_caller(struct probe_summary *p, uint32_t function, uint64_t calls,
		       uint64_t ns, struct probe_caller *all, size_t *nall, size_t cap)
{
	size_t i;

	p->callers_total += calls;
	for (i = 0; i < *nall; i++)
		if (all[i].function == function)
			break;
	if (i == *nall) {
		if (*nall == cap)
			return;
		all[(*nall)++] = (struct probe_caller){ function, 0, 0 };
	}
	all[i].calls += calls;
	all[i].ns += ns;
}

static int by_calls(const void *pa, const void *pb)
{
	const struct probe_caller *a = pa, *b = pb;

	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return a->function < b->function ? -1 : a->function > b->function;
}

/* Callers: uprobe records carry the stack at the return, whose first
 * function is the caller; a USDT hit's stack starts in the function that
 * holds the probe, so its caller is the second. */
static int load_callers(const struct report_context *ctx, struct probe_summary *p)
{
	char where[1024], sql[1400];
	struct probe_caller all[256];
	size_t nall = 0;
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT ustack_id, count(*), sum(duration) FROM probe_hits"
		 " WHERE probe_id = %lld AND ustack_id IS NOT NULL AND %s GROUP BY ustack_id",
		 (long long)p->id,
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts + duration"));
	st = report_prepare(ctx, sql);
	if (!st)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint32_t len;
		const uint32_t *fns = callchains_get(ctx->cc, sqlite3_column_int64(st, 0), &len);
		uint32_t at = p->timed ? 0 : 1;

		if (len == 0)
			continue;
		add_caller(p, fns[at < len ? at : len - 1], (uint64_t)sqlite3_column_int64(st, 1),
			   (uint64_t)sqlite3_column_int64(st, 2), all, &nall,
			   sizeof(all) / sizeof(all[0]));
	}
	sqlite3_finalize(st);
	if (nall > 1)
		qsort(all, nall, sizeof(all[0]), by_calls);
	p->ncallers = nall < CALLERS_MAX ? nall : CALLERS_MAX;
	memcpy(p->callers, all, p->ncallers * sizeof(all[0]));
	return 0;
}

static int summarize(const struct report_context *ctx, struct probe_summary *p)
{
	if (record_percentiles(ctx, p) < 0)
		return -1;
	/* thinned records over the whole capture: the kernel's buckets are exact */
	if (p->timed && p->records < p->calls && !ctx->scope->windowed && !ctx->scope->filtered)
		histogram_percentiles(p);
	return load_callers(ctx, p);
}

static const char probes_sql[] =
	"SELECT probe_id, kind, spec, name, path, build_id, attached, failed, hist, offset,"
	" coalesce(hits, 0), coalesce(calls, 0), coalesce(total_ns, 0), records"
	" FROM probes ORDER BY probe_id";

/* Every probe, summarized. *n = 0 when the capture has none. */
static struct probe_summary *load_probes(const struct report_context *ctx, size_t *n)
{
	struct probe_summary *v = NULL;
	sqlite3_stmt *st = db_prepare(ctx->db, probes_sql);
	size_t cap = 0;

	*n = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		struct probe_summary *p;

		if (*n == cap) {
			size_t c = cap ? cap * 2 : 8;
			struct probe_summary *grown = realloc(v, c * sizeof(*grown));

			if (!grown)
				break;
			v = grown;
			cap = c;
		}
		p = &v[(*n)++];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(st, 0);
		p->kind = column_dup(st, 1);
		p->spec = column_dup(st, 2);
		p->name = column_dup(st, 3);
		p->path = column_dup(st, 4);
		p->build_id = column_dup(st, 5);
		p->attached = column_dup(st, 6);
		p->failed = column_dup(st, 7);
		p->hist = column_dup(st, 8);
		p->offset = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1
								       : sqlite3_column_int64(st, 9);
		p->hits = (uint64_t)sqlite3_column_int64(st, 10);
		p->calls = (uint64_t)sqlite3_column_int64(st, 11);
		p->total_ns = (uint64_t)sqlite3_column_int64(st, 12);
		p->records = (uint64_t)sqlite3_column_int64(st, 13);
		p->timed = p->kind && strcmp(p->kind, "uprobe") == 0;
		if (p->attached && summarize(ctx, p) < 0) {
			sqlite3_finalize(st);
			return v;
		}
	}
	sqlite3_finalize(st);
	return v;
}

/* "probed_work (probe_calls)": the name and the file's base name. */
static void probe_label(const struct probe_summary *p, char *buf, size_t len)
{
	const char *file = p->path ? strrchr(p->path, '/') : NULL;

	snprintf(buf, len, "%s%s%s%s", p->name ? p->name : "?", file ? " (" : "",
		 file ? file + 1 : "", file ? ")" : "");
}

static const char *caller_name(const struct report_context *ctx, const struct probe_caller *c)
{
	return c->function < ctx->cc->nfunctions ? ctx->cc->functions[c->function].name : "?";
}

static void render_text(const struct report_context *ctx, const struct probe_summary *v,
			size_t n)
{
	char label[160], a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF], f[FMT_BUF];
	int header = 0;

	fprintf(ctx->out, "\nUser probes\n");
	for (size_t i = 0; i < n; i++) {
		const struct probe_summary *p = &v[i];

		if (!p->attached)
			continue;
		probe_label(p, label, sizeof(label));
		if (!header++)
			fprintf(ctx->out, "  %3s %-6s %-34s %9s %10s %9s %9s %9s %9s\n", "#", "kind",
				"probe", "calls", "total", "p50", "p90", "p99", "max");
		if (!p->timed) {
			fprintf(ctx->out, "  %3lld %-6s %-34s %9llu %10s %9s %9s %9s %9s  (hits)\n",
				(long long)p->id, p->kind, label, (unsigned long long)p->hits, "-",
				"-", "-", "-", "-");
		} else {
			fprintf(ctx->out, "  %3lld %-6s %-34s %9llu %10s %9s %9s %9s %9s%s\n",
				(long long)p->id, p->kind, label, (unsigned long long)p->calls,
				fmt_duration_ns(a, sizeof(a), p->total_ns),
				fmt_duration_ns(b, sizeof(b), p->p50),
				fmt_duration_ns(c, sizeof(c), p->p90),
				fmt_duration_ns(d, sizeof(d), p->p99),
				fmt_duration_ns(e, sizeof(e), p->max),
				p->from_histogram ? "  (<=, kernel histogram)" : "");
		}
		if (ctx->scope->windowed || ctx->scope->filtered)
			fprintf(ctx->out, "      in scope: %llu records, %s\n",
				(unsigned long long)p->scope_records,
				fmt_duration_ns(f, sizeof(f), p->scope_ns));
		else if (p->records < (p->timed ? p->calls : p->hits))
			fprintf(ctx->out, "      %llu of them recorded (--probe-min, --sample, "
				"--rate-cap or losses); counts and total are the kernel's\n",
				(unsigned long long)p->records);
		for (size_t k = 0; k < p->ncallers; k++)
			fprintf(ctx->out, "      %s %-30s %8llu %5.1f%%%s%s\n",
				k == 0 ? (p->timed ? "callers:" : "from:   ") : "        ",
				caller_name(ctx, &p->callers[k]),
				(unsigned long long)p->callers[k].calls,
				p->callers_total ? 100.0 * (double)p->callers[k].calls /
							   (double)p->callers_total : 0.0,
				p->timed ? "  " : "",
				p->timed ? fmt_duration_ns(f, sizeof(f), p->callers[k].ns) : "");
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].failed)
			fprintf(ctx->out, "  %s probe %lld '%s': %s\n",
				v[i].attached ? "partly attached:" : "not attached:",
				(long long)v[i].id, v[i].spec ? v[i].spec : "?", v[i].failed);
}

static void render_json(const struct report_context *ctx, const struct probe_summary *v,
			size_t n)
{
	struct json_writer *w = ctx->json;

	json_begin_array(w, "probes");
	for (size_t i = 0; i < n; i++) {
		const struct probe_summary *p = &v[i];

		json_begin_object(w, NULL);
		json_int(w, "id", p->id);
		json_string(w, "kind", p->kind ? p->kind : "");
		json_string(w, "spec", p->spec ? p->spec : "");
		json_string(w, "name", p->name ? p->name : "");
		json_string(w, "path", p->path ? p->path : "");
		json_string(w, "build_id", p->build_id ? p->build_id : "");
		if (p->offset >= 0)
			json_int(w, "offset", p->offset);
		json_string(w, "attached", p->attached ? p->attached : "");
		if (p->failed)
			json_string(w, "failed", p->failed);
		json_uint(w, "hits", p->hits);
		if (p->timed) {
			json_uint(w, "calls", p->calls);
			json_uint(w, "total_ns", p->total_ns);
		}
		json_uint(w, "records", p->records);
		json_uint(w, "scope_records", p->scope_records);
		if (p->timed) {
			json_uint(w, "scope_total_ns", p->scope_ns);
			json_string(w, "percentiles_from",
				    p->from_histogram ? "kernel_histogram" : "records");
			json_uint(w, "p50_ns", p->p50);
			json_uint(w, "p90_ns", p->p90);
			json_uint(w, "p99_ns", p->p99);
			json_uint(w, "max_ns", p->max);
		}
		json_begin_array(w, "callers");
		for (size_t k = 0; k < p->ncallers; k++) {
			json_begin_object(w, NULL);
			json_string(w, "function", caller_name(ctx, &p->callers[k]));
			json_uint(w, "calls", p->callers[k].calls);
			if (p->timed)
				json_uint(w, "total_ns", p->callers[k].ns);
			json_end_object(w);
		}
		json_end_array(w);
		json_end_object(w);
	}
	json_end_array(w);
}

int report_section_probes(const struct report_context *ctx)
{
	struct probe_summary *v;
	size_t n;

	if (!report_has_object(ctx->db, "probes"))
		return 0;
	v = load_probes(ctx, &n);
	if (n > 0) {
		if (ctx->json)
			render_json(ctx, v, n);
		else
			render_text(ctx, v, n);
	}
	for (size_t i = 0; i < n; i++)
		summary_free(&v[i]);
	free(v);
	return 0;
}
