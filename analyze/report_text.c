/* report_text.c - the text report: a header describing the run, then the
 * sections (top functions, top stacks per process, data quality). Every
 * number comes from the database, so a report on a capture and on its
 * imported database are identical. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "fmt.h"
#include "report_sections.h"

static const char meta_sql[] = "SELECT value FROM meta WHERE key = ?1";
static const char stat_sql[] = "SELECT value FROM stats WHERE chunk = ?1 AND key = ?2";
static const char quality_sql[] = "SELECT value FROM quality WHERE source = ?1 AND key = ?2";

const char *report_cpu_time(const struct report_context *ctx, char *buf, size_t len,
			    uint64_t n)
{
	if (ctx->freq_hz <= 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	return fmt_seconds(buf, len, (double)n / ctx->freq_hz);
}

static double meta_number(sqlite3 *db, const char *key)
{
	char *text = db_lookup_text(db, meta_sql, key, NULL);
	double value = text ? strtod(text, NULL) : 0;

	free(text);
	return value > 0 ? value : 0;
}

/* Recording duration: the recorder's own figure, else end - start, else
 * the span of the samples. */
static uint64_t run_duration_ns(sqlite3 *db)
{
	int64_t duration = db_lookup_int(db, stat_sql, "stats", "record.duration_ns", -1);
	int64_t start = (int64_t)meta_number(db, "record.start_ns");
	int64_t end = db_lookup_int(db, stat_sql, "stats", "record.end_ns",
				    db_lookup_int(db, stat_sql, "end", "record.end_ns", -1));

	if (duration > 0)
		return (uint64_t)duration;
	if (start > 0 && end > start)
		return (uint64_t)(end - start);
	return (uint64_t)(db_lookup_int(db, quality_sql, "cpu", "last_ts", 0) -
			  db_lookup_int(db, quality_sql, "cpu", "first_ts", 0));
}

static void print_meta_line(sqlite3 *db, FILE *out, const char *label,
			    const char *key, const char *fallback_key)
{
	char *value = db_lookup_text(db, meta_sql, key, NULL);

	if (!value && fallback_key)
		value = db_lookup_text(db, meta_sql, fallback_key, NULL);
	fprintf(out, "  %-11s %s\n", label, value ? value : "-");
	free(value);
}

static void print_header(const struct report_context *ctx)
{
	sqlite3 *db = ctx->db;
	FILE *out = ctx->out;
	char *path = db_lookup_text(db,
		"SELECT value FROM schema_info WHERE key = ?1", "source_path", NULL);
	int64_t all = db_lookup_int(db, quality_sql, "cpu", "samples", 0);
	char a[FMT_BUF], b[FMT_BUF];

	fprintf(out, "perfcap report: %s\n", path ? path : "-");
	print_meta_line(db, out, "host", "host.hostname", NULL);
	print_meta_line(db, out, "kernel", "host.kernel.release", NULL);
	print_meta_line(db, out, "command", "target.command", "record.cmdline");
	fprintf(out, "  %-11s %s\n", "duration", fmt_duration_ns(a, sizeof(a), run_duration_ns(db)));
	fprintf(out, "  %-11s %s", "samples", fmt_count(a, sizeof(a), ctx->samples));
	if ((uint64_t)all != ctx->samples)
		fprintf(out, " selected of %s", fmt_count(b, sizeof(b), (uint64_t)all));
	fprintf(out, "\n");
	if (ctx->freq_hz > 0)
		fprintf(out, "  %-11s %g Hz per CPU\n", "frequency", ctx->freq_hz);
	else
		fprintf(out, "  %-11s unknown (CPU time not estimated)\n", "frequency");
	free(path);
}

static int print_sections(struct report_context *ctx)
{
	ctx->samples = ctx->sel->samples;
	ctx->freq_hz = meta_number(ctx->db, "sampling.cpu.freq_hz");
	print_header(ctx);
	if (report_section_functions(ctx) < 0 || report_section_stacks(ctx) < 0 ||
	    report_section_quality(ctx) < 0)
		return -1;
	return 0;
}

int report_text(sqlite3 *db, const struct report_options *opts, FILE *out)
{
	struct report_context ctx = { .db = db, .opts = opts, .out = out };
	struct selection sel;
	struct callchains cc;
	struct names names;
	int rc = -1;

	memset(&sel, 0, sizeof(sel));
	memset(&cc, 0, sizeof(cc));
	memset(&names, 0, sizeof(names));
	if (selection_load(db, opts, &sel) == 0 && callchains_load(&cc, db) == 0 &&
	    names_load(&names, db) == 0) {
		ctx.sel = &sel;
		ctx.cc = &cc;
		ctx.names = &names;
		rc = print_sections(&ctx);
	}
	names_free(&names);
	callchains_free(&cc);
	selection_free(&sel);
	return rc;
}
