/* report_summary.c - the verdict: "Summary" (the diagnosis in two or
 * three sentences and the ranked causes, first section) and "Evidence
 * tables" (each cause's key number, subject and the rows behind it).
 * In JSON: "capture", "summary" and "diagnosis". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"

/* Prints text wrapped at 76 columns, indented by two spaces. */
static void print_wrapped(FILE *out, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t len = strlen(p), cut = len;
		if (len > 76) {
			cut = 76;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = 76;
		}
		fprintf(out, "  %.*s\n", (int)cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

static void diagnosis_json(const struct report_context *ctx);

static void write_capture_json(const struct report_context *ctx)
{
	char *path = db_lookup_text(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
				    "source_path", NULL);
	char *version = db_lookup_text(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
				       "format_version", NULL);
	struct json_writer *w = ctx->json;

	json_begin_object(w, "capture");
	json_string(w, "path", path);
	json_int(w, "size", db_lookup_int(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
					  "source_size", NULL, 0));
	json_string(w, "sha256", ctx->capture_sha256[0] ? ctx->capture_sha256 : NULL);
	json_string(w, "format_version", version);
	json_end_object(w);
	free(path);
	free(version);
}

/* Events dropped on purpose are said next to the conclusions they bound. */
static void print_dropped_note(const struct report_context *ctx)
{
	static const char sql[] = "SELECT value FROM quality WHERE source = 'record' AND key = ?1";
	int64_t max_size = db_lookup_int(ctx->db, sql, "max_size.events_dropped", NULL, 0);
	int64_t flight = db_lookup_int(ctx->db, sql, "flight.events_dropped", NULL, 0);
	char a[FMT_BUF];

	if (max_size > 0)
		fprintf(ctx->out, "  Dropped: %s events at --max-size (the file was full; "
			"see Data quality)\n", fmt_count(a, sizeof(a), (uint64_t)max_size));
	if (flight > 0)
		fprintf(ctx->out, "  Dropped: %s events older than the flight recorder's window "
			"(see Data quality)\n", fmt_count(a, sizeof(a), (uint64_t)flight));
}

int report_section_summary(const struct report_context *ctx)
{
	const struct diagnosis *d = ctx->diag;
	char *path;
	char key[FMT_BUF];

	if (ctx->json) {
		write_capture_json(ctx);
		json_string(ctx->json, "summary", d->summary);
		diagnosis_json(ctx);
		return 0;
	}
	path = db_lookup_text(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
			      "source_path", NULL);
	fprintf(ctx->out, "perfcap report: %s\n\nSummary\n", path ? path : "-");
	free(path);
	print_wrapped(ctx->out, d->summary);
	if (d->ncauses > 0)
		fprintf(ctx->out, "  Causes (ranked; score = share of the affected threads' time):\n");
	for (int i = 0; i < d->ncauses; i++)
		fprintf(ctx->out, "  %d. %-22s %3.0f%%  %s = %s\n", i + 1, d->causes[i].kind,
			100 * d->causes[i].score, d->causes[i].key_name,
			diag_key_text(&d->causes[i], key, sizeof(key)));
	fprintf(ctx->out, "  Confidence: %s\n", d->confidence);
	print_dropped_note(ctx);
	return 0;
}

static void field_json(struct json_writer *w, const struct diag_field *f)
{
	if (f->type == FIELD_TEXT)
		json_string(w, f->name, f->text);
	else if (f->type == FIELD_INT)
		json_int(w, f->name, f->i);
	else
		json_double(w, f->name, f->d);
}

static void subject_json(struct json_writer *w, const struct diag_subject *s)
{
	json_begin_object(w, "subject");
	for (int i = 0; i < s->nfields; i++)
		field_json(w, &s->fields[i]);
	if (s->nrows > 0) {
		json_begin_array(w, s->list_name);
		for (int r = 0; r < s->nrows; r++) {
			json_begin_object(w, NULL);
			for (int c = 0; c < s->row_cols[r]; c++)
				field_json(w, &s->rows[r][c]);
			json_end_object(w);
		}
		json_end_array(w);
	}
	json_end_object(w);
}

static void cause_json(struct json_writer *w, const struct diag_cause *c, int rank)
{
	json_begin_object(w, NULL);
	json_int(w, "rank", rank);
	json_string(w, "kind", c->kind);
	json_string(w, "title", c->title);
	json_double(w, "score", c->score);
	json_begin_object(w, "key_number");
	json_string(w, "name", c->key_name);
	json_double(w, "value", c->key_value);
	json_string(w, "unit", c->key_unit);
	json_end_object(w);
	json_string(w, "sources", c->sources);
	subject_json(w, &c->subject);
	json_begin_array(w, "evidence");
	for (int i = 0; i < c->nevidence; i++)
		json_string(w, NULL, c->evidence[i]);
	json_end_array(w);
	json_end_object(w);
}

static void spike_json(struct json_writer *w, const struct diag_spike *s)
{
	if (!s->found) {
		json_null(w, "spike");
		return;
	}
	json_begin_object(w, "spike");
	json_uint(w, "window_start_ns", s->window_start);
	json_uint(w, "window_end_ns", s->window_end);
	json_uint(w, "baseline_start_ns", s->baseline_start);
	json_uint(w, "baseline_end_ns", s->baseline_end);
	json_string(w, "latency_measure", s->latency_measure);
	json_double(w, "latency_ns", s->latency_ns);
	json_double(w, "baseline_latency_ns", s->baseline_latency_ns);
	json_double(w, "io_ratio", s->io_ratio);
	json_double(w, "cpu_ratio", s->cpu_ratio);
	json_int(w, "threads_compared", s->threads_compared);
	json_int(w, "new_threads", s->new_threads);
	json_string(w, "verdict", s->verdict);
	json_end_object(w);
}

static void diagnosis_json(const struct report_context *ctx)
{
	const struct diagnosis *d = ctx->diag;
	struct json_writer *w = ctx->json;

	json_begin_object(w, "diagnosis");
	json_string(w, "confidence", d->confidence);
	json_begin_array(w, "caveats");
	for (int i = 0; i < d->ncaveats; i++)
		json_string(w, NULL, d->caveats[i]);
	json_end_array(w);
	json_begin_array(w, "causes");
	for (int i = 0; i < d->ncauses; i++)
		cause_json(w, &d->causes[i], i + 1);
	json_end_array(w);
	spike_json(w, &d->spike);
	json_end_object(w);
}

static void print_field(FILE *out, const struct diag_field *f)
{
	if (f->type == FIELD_TEXT)
		fprintf(out, "%s=%s", f->name, f->text);
	else if (f->type == FIELD_INT)
		fprintf(out, "%s=%lld", f->name, (long long)f->i);
	else if (isfinite(f->d))
		fprintf(out, "%s=%.2f", f->name, f->d);
	else
		fprintf(out, "%s=null", f->name);
}

static void print_subject(FILE *out, const struct diag_subject *s)
{
	fprintf(out, "     subject:");
	for (int i = 0; i < s->nfields; i++) {
		fputc(' ', out);
		print_field(out, &s->fields[i]);
	}
	fputc('\n', out);
	if (s->nrows > 0)
		fprintf(out, "     %s:\n", s->list_name);
	for (int r = 0; r < s->nrows; r++) {
		fprintf(out, "      ");
		for (int c = 0; c < s->row_cols[r]; c++) {
			fputc(' ', out);
			print_field(out, &s->rows[r][c]);
		}
		fputc('\n', out);
	}
}

static void print_spike(const struct report_context *ctx, const struct diag_spike *s)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF];
	uint64_t t0 = ctx->scope->capture_start;

	fprintf(ctx->out, "  Spike window (book 12.1): +%s to +%s vs baseline +%s to +%s\n",
		fmt_duration_ns(a, sizeof(a), s->window_start - t0),
		fmt_duration_ns(b, sizeof(b), s->window_end - t0),
		fmt_duration_ns(c, sizeof(c), s->baseline_start - t0),
		fmt_duration_ns(d, sizeof(d), s->baseline_end - t0));
	fprintf(ctx->out, "     %s %s vs %s; I/O time x%.2f, CPU time x%.2f over the %d"
		" thread(s) active in both (%d new in the spike): verdict %s\n",
		s->latency_measure, fmt_duration_ns(a, sizeof(a), (uint64_t)s->latency_ns),
		fmt_duration_ns(b, sizeof(b), (uint64_t)s->baseline_latency_ns), s->io_ratio,
		s->cpu_ratio, s->threads_compared, s->new_threads, s->verdict);
}

int report_section_evidence(const struct report_context *ctx)
{
	const struct diagnosis *d = ctx->diag;
	char key[FMT_BUF];

	if (ctx->json)
		return 0;             /* "diagnosis", written with the summary */
	fprintf(ctx->out, "\nEvidence tables\n");
	if (d->ncauses == 0 && !d->spike.found)
		fprintf(ctx->out, "  no cause claimed (see Summary)\n");
	for (int i = 0; i < d->ncauses; i++) {
		const struct diag_cause *c = &d->causes[i];
		fprintf(ctx->out, "  %d. %s: %s\n", i + 1, c->kind, c->title);
		fprintf(ctx->out, "     key number: %s = %s (score %.2f; sources %s)\n", c->key_name,
			diag_key_text(c, key, sizeof(key)), c->score, c->sources);
		for (int e = 0; e < c->nevidence; e++)
			fprintf(ctx->out, "     - %s\n", c->evidence[e]);
		print_subject(ctx->out, &c->subject);
	}
	if (d->spike.found)
		print_spike(ctx, &d->spike);
	for (int i = 0; i < d->ncaveats; i++)
		fprintf(ctx->out, "  caveat: %s\n", d->caveats[i]);
	return 0;
}
