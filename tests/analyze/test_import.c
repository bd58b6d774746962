/* test_import.c - the database written by "import": row counts, schema
 * version, frame sources and modes, quality rows, unknown content counted
 * and not fatal, refusing to overwrite without -f. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture_builder.h"
#include "run_tool.h"

static sqlite3 *imported_db(char *dir, const struct capture_spec *spec)
{
	char *cap = scratch_path(dir, "run.perfcap");
	char *db_path = scratch_path(dir, "run.db");
	struct tool_result r;
	sqlite3 *db = NULL;

	cr_assert_eq(build_capture(cap, spec, NULL), 0);
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db_path, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_expect(strstr(r.out, "imported"), "%s", r.out);
	tool_result_free(&r);
	cr_assert_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	free(cap);
	free(db_path);
	return db;
}

static long long query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long value = -1;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
		     sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		value = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return value;
}

static char *query_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *value = NULL;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		value = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return value;
}

#define expect_count(db, sql, n) \
	cr_expect_eq(query_int(db, sql), (n), "%s", sql)

Test(import, row_counts)
{
	char *dir = scratch_dir();
	struct capture_spec spec = {
		.a = 300, .b = 100, .b_worker = 20, .a_kernel = 10, .kernel_only = 5,
		.unmapped = 7, .nosyms = 3, .other = 50, .truncated = 4, .short_stack = 6,
		.no_stack = 2,
	};
	sqlite3 *db = imported_db(dir, &spec);

	expect_count(db, "PRAGMA user_version", 2);
	expect_count(db, "SELECT value FROM schema_info WHERE key='schema_version'", 2);
	expect_count(db, "SELECT count(*) FROM samples", 507);
	expect_count(db, "SELECT sum(count) FROM sample_counts", 507);
	expect_count(db, "SELECT count(*) FROM samples WHERE ustack_id IS NULL", 7);
	expect_count(db, "SELECT count(*) FROM stacks", 8);
	expect_count(db, "SELECT count(*) FROM stacks WHERE kind='kernel'", 1);
	expect_count(db, "SELECT count(*) FROM processes", 2);
	expect_count(db, "SELECT count(*) FROM threads", 3);
	expect_count(db, "SELECT count(*) FROM maps", 3);
	expect_count(db, "SELECT count(*) FROM modules", 2);
	expect_count(db, "SELECT count(*) FROM chunks", 8);
	expect_count(db, "SELECT count(*) FROM meta", 7);
	/* distinct (address space, ip, return?) resolutions */
	expect_count(db, "SELECT count(*) FROM frames", 14);
	expect_count(db, "SELECT count(*) FROM stack_frames", 26);
	expect_count(db, "SELECT count(*) FROM frames WHERE mode='unresolved'", 2);
	expect_count(db, "SELECT count(*) FROM frames WHERE source='capture'", 10);
	expect_count(db, "SELECT count(*) FROM frames WHERE source='kernel'", 2);
	expect_count(db, "SELECT value FROM quality WHERE source='cpu' AND key='samples'", 507);
	expect_count(db, "SELECT value FROM quality WHERE source='stacks' AND key='truncated'", 1);
	expect_count(db, "SELECT value FROM quality WHERE source='stacks'"
		     " AND key='probably_truncated'", 1);
	expect_count(db, "SELECT probably_truncated FROM stacks WHERE stack_id=7", 1);
	expect_count(db, "SELECT value FROM quality WHERE source='file' AND key='end_seen'", 1);
	expect_count(db, "SELECT count(*) FROM quality WHERE source='file' AND key='damage'"
		     " AND value IS NULL", 1);
	sqlite3_close(db);
	scratch_remove(dir);
}

Test(import, frames_carry_source_mode_and_offsets)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	sqlite3 *db = imported_db(dir, &spec);
	char *text;

	/* A+0x10, innermost frame of stack 0: file offset 0x1310 */
	expect_count(db, "SELECT module_offset FROM frames f JOIN stack_frames sf"
		     " USING (frame_id) WHERE sf.stack_id=0 AND sf.position=0", 0x1310);
	expect_count(db, "SELECT sym_offset FROM frames WHERE name='A'", 0x10);
	/* return address caller+0x50 is looked up at -1 but keeps its offset */
	expect_count(db, "SELECT sym_offset FROM frames WHERE name='caller'"
		     " AND module_offset=0x1250", 0x50);
	text = query_text(db, "SELECT source || '/' || mode || '/' || module FROM frames"
			  " WHERE name='A'");
	cr_expect_str_eq(text, "capture/symbol//usr/bin/app");
	free(text);
	text = query_text(db, "SELECT name FROM frames f JOIN stack_frames sf USING (frame_id)"
			  " WHERE sf.stack_id=0 ORDER BY position DESC LIMIT 1");
	cr_expect_str_eq(text, "_start");
	free(text);
	expect_count(db, "SELECT count(*) FROM frames WHERE name IS NULL OR name=''", 0);
	sqlite3_close(db);
	scratch_remove(dir);
}

Test(import, unknown_chunks_and_records_are_counted)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	sqlite3 *db;

	spec.unknown_content = 1;
	db = imported_db(dir, &spec);
	expect_count(db, "SELECT count(*) FROM samples", 400);
	expect_count(db, "SELECT value FROM quality WHERE source='format'"
		     " AND key='chunks.unknown'", 1);
	expect_count(db, "SELECT value FROM quality WHERE source='format'"
		     " AND key='unknown_chunk.99'", 1);
	expect_count(db, "SELECT value FROM quality WHERE source='format'"
		     " AND key='records.unknown'", 3);
	expect_count(db, "SELECT value FROM quality WHERE source='format'"
		     " AND key='unknown_record.2.200'", 3);
	expect_count(db, "SELECT count(*) FROM chunks WHERE type=99", 1);
	sqlite3_close(db);
	scratch_remove(dir);
}

Test(import, refuses_to_overwrite_without_force)
{
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "run.perfcap");
	char *db_path = scratch_path(dir, "run.db");
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;
	FILE *f;
	struct stat st;

	cr_assert_eq(build_capture(cap, &spec, NULL), 0);
	f = fopen(db_path, "w");
	fputs("precious", f);
	fclose(f);
	run_analyze(&r, "import", cap, "-o", db_path, NULL);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "exists (use -f to overwrite)"), "%s", r.err);
	cr_expect_eq(stat(db_path, &st), 0);
	cr_expect_eq(st.st_size, 8, "file left untouched");
	tool_result_free(&r);

	run_analyze(&r, "import", "--no-local-files", "-f", cap, "-o", db_path, NULL);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(stat(db_path, &st), 0);
	cr_expect_gt(st.st_size, 8);
	tool_result_free(&r);

	run_analyze(&r, "import", "-f", cap, "-o", cap, NULL);
	cr_expect_eq(r.status, 1, "never overwrites the input");
	tool_result_free(&r);
	free(cap);
	free(db_path);
	scratch_remove(dir);
}
