/* test_report.c - the text report on synthetic captures with known answers:
 * self/total shares, CPU time estimates, filters, --top, and that a report
 * on a capture equals the report on its imported database. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "run_tool.h"

struct function_row {
	char self_pct[16];
	char total_pct[16];
	char self[32];
	char total[32];
	char self_cpu[32];
};

/* Finds the "Top functions" row of name and module label, e.g. "A", "[app]". */
static int find_function(const char *report, const char *name, const char *module,
			 struct function_row *row)
{
	char suffix[256];
	const char *line = strstr(report, "Top functions");
	const char *section_end = line ? strstr(line, "\nTop stacks") : NULL;

	snprintf(suffix, sizeof(suffix), "  %s  %s\n", name, module);
	for (; line && *line && (!section_end || line < section_end);
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
		if (len < strlen(suffix) || strncmp(line + len - strlen(suffix), suffix,
						    strlen(suffix)) != 0)
			continue;
		char unit[8];
		if (sscanf(line, "%15s %15s %31s %31s %31s %7s", row->self_pct, row->total_pct,
			   row->self, row->total, row->self_cpu, unit) != 6)
			return 0;
		strcat(row->self_cpu, " ");
		strcat(row->self_cpu, unit);
		return 1;
	}
	return 0;
}

/* Removes the "analyze command" line of a report in place (the one line
 * that names the input as given: a capture or its database). */
static void drop_analyze_command(char *report)
{
	char *line = strstr(report, "  analyze command  ");
	char *end = line ? strchr(line, '\n') : NULL;

	if (line && end)
		memmove(line, end + 1, strlen(end + 1) + 1);
}

static char *make_capture(char *dir, const char *name, const struct capture_spec *spec)
{
	char *path = scratch_path(dir, name);

	cr_assert_eq(build_capture(path, spec, NULL), 0);
	return path;
}

Test(report, self_and_total_shares)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert(find_function(r.out, "A", "[app]", &row), "%s", r.out);
	cr_expect_str_eq(row.self_pct, "75.0%");
	cr_expect_str_eq(row.total_pct, "75.0%");
	cr_expect_str_eq(row.self, "300");
	cr_expect_str_eq(row.self_cpu, "3.00 s");
	cr_assert(find_function(r.out, "B", "[app]", &row));
	cr_expect_str_eq(row.self_pct, "25.0%");
	cr_expect_str_eq(row.self, "100");
	cr_assert(find_function(r.out, "caller", "[app]", &row));
	cr_expect_str_eq(row.self_pct, "0.0%");
	cr_expect_str_eq(row.total_pct, "100.0%");
	cr_expect_str_eq(row.total, "400");
	cr_expect(strstr(r.out, "host        testhost"));
	cr_expect(strstr(r.out, "frequency   100 Hz"));
	cr_expect(strstr(r.out, "samples     400\n"));
	cr_expect(strstr(r.out, "lost 0 of 400 events"));
	cr_expect(strstr(r.out, "intact, end marker present"));
	cr_expect_str_empty(r.err);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, kernel_frames_are_innermost)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 30, .a_kernel = 10 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(find_function(r.out, "ksys_read", "[kernel]", &row), "%s", r.out);
	cr_expect_str_eq(row.self_pct, "25.0%");
	cr_assert(find_function(r.out, "do_syscall_64", "[kernel]", &row));
	cr_expect_str_eq(row.self_pct, "0.0%");
	cr_expect_str_eq(row.total_pct, "25.0%");
	cr_assert(find_function(r.out, "A", "[app]", &row));
	cr_expect_str_eq(row.self_pct, "75.0%");
	cr_expect_str_eq(row.total_pct, "100.0%");
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, unresolved_frames_show_module_and_offset)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 10, .unmapped = 5, .nosyms = 5 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_expect(find_function(r.out, "[unknown]+0x7000000000", "[unknown]", &row), "%s", r.out);
	cr_expect_str_eq(row.self_pct, "25.0%");
	cr_expect(find_function(r.out, "libnosyms.so+0x1100", "[libnosyms.so]", &row));
	/* 2 unresolved frames of 4 in 10 of 20 samples: 10 / 80 sampled frames */
	cr_expect(strstr(r.out, "Unresolved frames:   12.5% of sampled frames"), "%s", r.out);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, pid_and_comm_filters)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 30, .b_worker = 10, .other = 60 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", "--pid", "200", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_expect(strstr(r.out, "samples     60 selected of 100"), "%s", r.out);
	cr_assert(find_function(r.out, "A", "[app]", &row));
	cr_expect_str_eq(row.self_pct, "100.0%");
	cr_expect(!find_function(r.out, "B", "[app]", &row));
	tool_result_free(&r);

	run_analyze(&r, "report", "--no-local-files", "--comm", "worker", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(find_function(r.out, "B", "[app]", &row), "%s", r.out);
	cr_expect_str_eq(row.self_pct, "100.0%");
	cr_expect_str_eq(row.self, "10");
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, top_limits_rows_and_thousands_separators)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 1500, .b = 500 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", "--top", "2", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert(find_function(r.out, "A", "[app]", &row));
	cr_expect_str_eq(row.self, "1,500");
	cr_expect_str_eq(row.total, "1,500");
	cr_expect(find_function(r.out, "B", "[app]", &row));
	cr_expect(!find_function(r.out, "_start", "[app]", &row), "--top 2 shows 2 rows");
	cr_expect(strstr(r.out, "samples     2,000\n"));
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, database_and_capture_reports_are_identical)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 300, .b = 100, .b_worker = 7, .a_kernel = 9,
				     .unmapped = 3, .other = 20, .truncated = 2,
				     .short_stack = 4, .no_stack = 1, .lost_kernel = 3 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	char *db = scratch_path(dir, "run.db");
	struct tool_result from_capture, from_db, imported;

	run_analyze(&imported, "import", "--no-local-files", cap, "-o", db, NULL);
	cr_assert_eq(imported.status, 0, "%s", imported.err);
	run_analyze(&from_capture, "report", "--no-local-files", cap, NULL);
	run_analyze(&from_db, "report", db, NULL);
	cr_assert_eq(from_capture.status, 0);
	cr_assert_eq(from_db.status, 0, "%s", from_db.err);
	cr_expect(strstr(from_capture.out, "analyze command  perfcap-analyze report"
			 " --no-local-files "), "%s", from_capture.out);
	drop_analyze_command(from_capture.out);
	drop_analyze_command(from_db.out);
	cr_expect_str_eq(from_capture.out, from_db.out);
	tool_result_free(&from_capture);
	tool_result_free(&from_db);

	run_analyze(&from_capture, "report", "--folded", "--no-local-files", cap, NULL);
	run_analyze(&from_db, "report", "--folded", db, NULL);
	cr_expect_str_eq(from_capture.out, from_db.out);
	tool_result_free(&from_capture);
	tool_result_free(&from_db);
	tool_result_free(&imported);
	free(cap);
	free(db);
	scratch_remove(dir);
}

Test(report, data_quality_counts)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 90, .truncated = 4, .short_stack = 6,
				     .lost_kernel = 5, .lost_user = 1 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_expect(strstr(r.out, "lost 6 of 106 events (5.7%; kernel 5, user 1)"), "%s", r.out);
	cr_expect(strstr(r.out, "Truncated stacks:    4.0% of samples (distinct stacks: 1;"));
	cr_expect(strstr(r.out, "Probably truncated:  6.0% of samples (distinct stacks: 1;"));
	cr_expect(strstr(r.out, "Stack errors:        0.0% of samples"));
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}
