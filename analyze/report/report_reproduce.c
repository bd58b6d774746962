/* report_reproduce.c - "Reproduce": the exact record and analyze command
 * lines, the capture's SHA-256 and the recorder's BPF program hashes
 * (META bpf.sha256.NAME), so a reader can rerun the same configuration
 * and check they look at the same data. In JSON: "reproduce". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db/db.h"
#include "report_sections.h"
#include "util/sha256.h"
#include "safe_file.h"

void report_capture_hash(struct report_context *ctx)
{
	const char *input = ctx->opts->input_path;
	char *source = db_lookup_text(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
				      "source_path", NULL);
	int64_t size = db_lookup_int(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
				     "source_size", NULL, -1);
	struct stat sb;

	ctx->capture_sha256[0] = '\0';
	if (input && !is_sqlite_file(input)) {
		if (sha256_file(input, ctx->capture_sha256) < 0)
			ctx->capture_sha256[0] = '\0';
	} else if (source && stat(source, &sb) == 0 && sb.st_size == size &&
		   !is_sqlite_file(source)) {
		if (sha256_file(source, ctx->capture_sha256) < 0)
			ctx->capture_sha256[0] = '\0';
	}
	free(source);
}

static sqlite3_stmt *program_hashes(const struct report_context *ctx)
{
	return db_prepare(ctx->db, "SELECT substr(key, 12), value FROM meta"
			  " WHERE key LIKE 'bpf.sha256.%' ORDER BY key");
}

static void write_json(const struct report_context *ctx, const char *record)
{
	struct json_writer *w = ctx->json;
	sqlite3_stmt *st = program_hashes(ctx);

	json_begin_object(w, "reproduce");
	json_string(w, "record_command", record);
	json_string(w, "analyze_command", ctx->opts->analyze_command);
	json_string(w, "capture_sha256", ctx->capture_sha256[0] ? ctx->capture_sha256 : NULL);
	json_begin_object(w, "program_hashes");
	while (st && sqlite3_step(st) == SQLITE_ROW)
		json_string(w, (const char *)sqlite3_column_text(st, 0),
			    (const char *)sqlite3_column_text(st, 1));
	sqlite3_finalize(st);
	json_end_object(w);
	json_end_object(w);
}

int report_section_reproduce(const struct report_context *ctx)
{
	char *record = report_meta(ctx, "record.cmdline");
	char *analyzer = db_lookup_text(ctx->db, "SELECT value FROM schema_info WHERE key = ?1",
					"analyzer", NULL);
	sqlite3_stmt *st;

	if (ctx->json) {
		write_json(ctx, record);
		free(record);
		free(analyzer);
		return 0;
	}
	fprintf(ctx->out, "\nReproduce\n");
	fprintf(ctx->out, "  record command   %s\n", record ? record : "- (not in the capture)");
	fprintf(ctx->out, "  analyze command  %s\n",
		ctx->opts->analyze_command ? ctx->opts->analyze_command : "-");
	fprintf(ctx->out, "  capture sha256   %s\n", ctx->capture_sha256[0] ? ctx->capture_sha256 :
		"- (capture file not available)");
	fprintf(ctx->out, "  imported by      %s\n", analyzer ? analyzer : "-");
	st = program_hashes(ctx);
	while (st && sqlite3_step(st) == SQLITE_ROW)
		fprintf(ctx->out, "  program sha256   %s  %s\n", sqlite3_column_text(st, 1),
			sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	free(record);
	free(analyzer);
	return 0;
}
