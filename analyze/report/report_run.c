/* report_run.c - drives a report: builds the model once (resolves the
 * scope, loads the samples, stacks, names and system calls, runs the
 * diagnosis, computes the latency breakdown), then renders it as often as
 * asked: each section writes itself, as text (report_model_text) or as
 * members of the JSON object (report_json.c). Sections come in the order of book chapter 12.5:
 * summary, method and scope, latency, CPU hot paths, I/O, contention and
 * scheduling, the wakeup graph, evidence, data quality, reproduce. Every number comes from
 * the database, so a report on a capture and on its imported database
 * are identical (but for the analyze command line). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

static const char meta_sql[] = "SELECT value FROM meta WHERE key = ?1";

const char *report_cpu_time(const struct report_context *ctx, char *buf, size_t len,
			    uint64_t n)
{
	if (ctx->freq_hz <= 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	return fmt_seconds(buf, len, (double)n / ctx->freq_hz);
}

char *report_meta(const struct report_context *ctx, const char *key)
{
	return db_lookup_text(ctx->db, meta_sql, key, NULL);
}

int report_source_on(const struct report_context *ctx, const char *source)
{
	char list[512], needle[64];

	if (ctx->sources) {
		snprintf(list, sizeof(list), ",%s,", ctx->sources);
		snprintf(needle, sizeof(needle), ",%s,", source);
		if (strstr(list, needle))
			return 1;
	}
	return db_lookup_int(ctx->db, "SELECT value FROM quality WHERE source = ?1"
			     " AND key = 'records'", source, NULL, 0) > 0;
}

void report_none(const struct report_context *ctx, const char *what, const char *source)
{
	if (source && !report_source_on(ctx, source))
		fprintf(ctx->out, "  no %s recorded (source '%s' not enabled: perfcap-record -e %s)\n",
			what, source, source);
	else
		fprintf(ctx->out, "  no %s in scope\n", what);
}

sqlite3_stmt *report_prepare(const struct report_context *ctx, const char *sql)
{
	sqlite3_stmt *st = db_prepare(ctx->db, sql);

	if (st)
		report_scope_bind(st, ctx->scope);
	return st;
}

static double meta_number(sqlite3 *db, const char *key)
{
	char *text = db_lookup_text(db, meta_sql, key, NULL);
	double value = text ? strtod(text, NULL) : 0;

	free(text);
	return value > 0 ? value : 0;
}

static int run_sections(struct report_context *ctx)
{
	int (*const sections[])(const struct report_context *) = {
		report_section_summary, report_section_method, report_section_latency,
		report_section_cpu, report_section_stacks, report_section_io,
		report_section_contention, report_section_probes, report_section_runtimes,
		report_section_threads, report_section_wakeups, report_section_evidence,
		report_section_quality, report_section_reproduce,
	};

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (sections[i](ctx) < 0)
			return -1;
	return 0;
}

/* The spike windows: those of thread_time_shares. */
static void window_grid(sqlite3 *db, const struct report_scope *scope, uint64_t *base,
			uint64_t *width)
{
	*base = (uint64_t)db_query_int(db, "SELECT min(window_start) FROM thread_time_shares",
				       (int64_t)scope->capture_start);
	*width = (uint64_t)db_query_int(db, "SELECT value FROM schema_info"
					" WHERE key = 'window_ns'", 1000000000);
}

/* What every section shares, computed once: the text report, the JSON
 * report and the HTML page's JSON are renderings of one model
 * (report --html writes two of them). */
struct report_model {
	struct report_context ctx;     /* out and json unset */
	struct report_options opts;
	struct report_scope scope;
	struct diagnosis *diag;
	struct selection sel;
	struct callchains cc;
	struct names names;
	struct calls calls;
	struct request_preload reqs;
	struct latency *latency;
	int ok;                        /* 0: the load or the diagnosis failed */
};

/* The scope's requests read once, before the diagnosis (report_requests.c):
 * for the latency section and, per spike window (the grid and count
 * diagnose_spike.c makes: from base to the window's or the capture's end,
 * 2 to DIAG_SPIKE_MAX_WINDOWS windows), for the spike rule. Without it each
 * reads them. */
static void preload_requests(struct report_context *ctx, struct request_preload *p,
			     uint64_t base, uint64_t width)
{
	const struct report_scope *s = ctx->scope;
	uint64_t end = s->to < s->capture_end ? s->to : s->capture_end;
	size_t n = width && end > base ? (size_t)((end - base) / width + 1) : 0;

	if (!report_has_object(ctx->db, "requests"))
		return;
	p->windows.base = base;
	p->windows.width = width;
	p->windows.n = n >= 2 && n <= DIAG_SPIKE_MAX_WINDOWS ? n : 0;
	if (report_requests_preload(ctx, report_source_on(ctx, "sched"), p) < 0)
		report_requests_preload_free(p);  /* the readers read them themselves */
	else
		ctx->reqs = p;
}

static void model_load(struct report_model *m, sqlite3 *db)
{
	struct report_context *ctx = &m->ctx;
	uint64_t base = 0, width = 0;

	if (!m->diag || report_scope_resolve(db, &m->opts, &m->scope) < 0 ||
	    selection_load(db, &m->scope, &m->sel) < 0 || callchains_load(&m->cc, db) < 0 ||
	    names_load(&m->names, db) < 0)
		return;
	window_grid(db, &m->scope, &base, &width);
	if (calls_load(db, &m->scope, base, width, &m->calls) < 0)
		return;
	ctx->scope = &m->scope;
	ctx->sel = &m->sel;
	ctx->cc = &m->cc;
	ctx->names = &m->names;
	ctx->samples = m->sel.samples;
	ctx->freq_hz = meta_number(db, "sampling.cpu.freq_hz");
	ctx->sources = db_lookup_text(db, meta_sql, "sources", NULL);
	ctx->diag = m->diag;
	ctx->calls = &m->calls;
	report_capture_hash(ctx);
	preload_requests(ctx, &m->reqs, base, width);
	if (diagnose_run(db, &m->scope, ctx->freq_hz, &m->sel, &m->cc, &m->names, &m->calls,
			 &m->reqs.windows, m->diag) < 0)
		return;
	/* NULL on failure: the latency section then fails in its turn */
	m->latency = report_latency_load(ctx);
	ctx->latency = m->latency;
	m->ok = 1;
}

struct report_model *report_model_build(sqlite3 *db, const struct report_options *opts)
{
	struct report_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->opts = *opts;
	m->ctx.db = db;
	m->ctx.opts = &m->opts;
	m->diag = calloc(1, sizeof(*m->diag));
	model_load(m, db);
	return m;
}

void report_model_free(struct report_model *m)
{
	if (!m)
		return;
	report_latency_free(m->latency);
	report_requests_preload_free(&m->reqs);
	free(m->ctx.sources);
	if (m->diag)
		diagnose_free(m->diag);
	calls_free(&m->calls);
	names_free(&m->names);
	callchains_free(&m->cc);
	selection_free(&m->sel);
	free(m->diag);
	free(m);
}

int report_model_render(const struct report_model *m, FILE *out, struct json_writer *json)
{
	struct report_context ctx = m->ctx;

	if (!m->ok)
		return -1;
	ctx.out = out;
	ctx.json = json;
	return run_sections(&ctx);
}

int report_model_text(const struct report_model *m, FILE *out)
{
	return report_model_render(m, out, NULL);
}

int report_text(sqlite3 *db, const struct report_options *opts, FILE *out)
{
	struct report_model *m = report_model_build(db, opts);
	int rc = m ? report_model_text(m, out) : -1;

	report_model_free(m);
	return rc;
}
