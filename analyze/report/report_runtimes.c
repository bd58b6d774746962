/* report_runtimes.c - "Runtimes": the language runtime recognized for
 * each process of the scope (process_runtimes: JVM, Node.js, Python, Go,
 * .NET, Ruby, BEAM), with the confidence, the evidence, and the switch
 * that names the runtime's frames for a profiler. In JSON: "runtimes";
 * both only when some process was recognized. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "report_sections.h"

struct runtime_row {
	int64_t pid;
	char *comm, *runtime, *version, *evidence, *advice;
	int confidence;
};

static char *dup_col(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? strdup((const char *)t) : NULL;
}

static const char rows_sql[] =
	"SELECT r.pid, (SELECT comm FROM processes p WHERE p.pid = r.pid ORDER BY ts DESC"
	" LIMIT 1), runtime, version, confidence, evidence, advice FROM process_runtimes r"
	" WHERE (:pid IS NULL OR r.pid = :pid) ORDER BY r.pid";

static struct runtime_row *load_rows(const struct report_context *ctx, size_t *n)
{
	sqlite3_stmt *st = report_prepare(ctx, rows_sql);
	struct runtime_row *v = NULL;
	size_t cap = 0;

	*n = 0;
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			size_t c = cap ? cap * 2 : 8;
			struct runtime_row *grown = realloc(v, c * sizeof(*grown));

			if (!grown)
				break;
			v = grown;
			cap = c;
		}
		v[*n] = (struct runtime_row){
			.pid = sqlite3_column_int64(st, 0), .comm = dup_col(st, 1),
			.runtime = dup_col(st, 2), .version = dup_col(st, 3),
			.confidence = sqlite3_column_int(st, 4), .evidence = dup_col(st, 5),
			.advice = dup_col(st, 6),
		};
		(*n)++;
	}
	sqlite3_finalize(st);
	return v;
}

static void render_text(const struct report_context *ctx, const struct runtime_row *v,
			size_t n)
{
	size_t shown = 0;

	fprintf(ctx->out, "\nRuntimes\n");
	fprintf(ctx->out, "  %7s %-16s %-8s %-8s %4s  %s\n", "pid", "comm", "runtime", "version",
		"conf", "evidence");
	for (size_t i = 0; i < n && shown < (size_t)ctx->opts->top; i++, shown++) {
		int first = 1;

		fprintf(ctx->out, "  %7lld %-16s %-8s %-8s %3d%%  %s\n", (long long)v[i].pid,
			v[i].comm ? v[i].comm : "?", v[i].runtime, v[i].version ? v[i].version : "-",
			v[i].confidence, v[i].evidence ? v[i].evidence : "");
		/* the advice once per runtime */
		for (size_t k = 0; k < i; k++)
			if (strcmp(v[k].runtime, v[i].runtime) == 0 &&
			    strcmp(v[k].advice ? v[k].advice : "", v[i].advice ? v[i].advice : "") == 0)
				first = 0;
		if (first && v[i].advice && v[i].advice[0])
			fprintf(ctx->out, "          %s\n", v[i].advice);
	}
	if (n > shown)
		fprintf(ctx->out, "  ... %zu more processes (--top)\n", n - shown);
}

static void render_json(const struct report_context *ctx, const struct runtime_row *v,
			size_t n)
{
	struct json_writer *w = ctx->json;

	json_begin_array(w, "runtimes");
	for (size_t i = 0; i < n; i++) {
		json_begin_object(w, NULL);
		json_int(w, "pid", v[i].pid);
		json_string(w, "comm", v[i].comm ? v[i].comm : "");
		json_string(w, "runtime", v[i].runtime);
		json_string(w, "version", v[i].version); /* NULL: null */
		json_int(w, "confidence", v[i].confidence);
		json_string(w, "evidence", v[i].evidence ? v[i].evidence : "");
		json_string(w, "advice", v[i].advice ? v[i].advice : "");
		json_end_object(w);
	}
	json_end_array(w);
}

int report_section_runtimes(const struct report_context *ctx)
{
	struct runtime_row *v;
	size_t n;

	if (!report_has_object(ctx->db, "process_runtimes"))
		return 0;
	v = load_rows(ctx, &n);
	if (n > 0) {
		if (ctx->json)
			render_json(ctx, v, n);
		else
			render_text(ctx, v, n);
	}
	for (size_t i = 0; i < n; i++) {
		free(v[i].comm);
		free(v[i].runtime);
		free(v[i].version);
		free(v[i].evidence);
		free(v[i].advice);
	}
	free(v);
	return 0;
}
