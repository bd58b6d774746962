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

/* Unresolved frames are named by module, never by address (ASLR-free). */
Test(report, unresolved_frames_show_module_not_address)
{
	char *dir = scratch_dir();
	struct capture_spec spec = { .a = 10, .unmapped = 5, .nosyms = 5 };
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	struct function_row row;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0);
	cr_expect(find_function(r.out, "[unknown]", "[unknown]", &row), "%s", r.out);
	cr_expect_str_eq(row.self_pct, "25.0%");
	cr_expect(find_function(r.out, "[unknown] in libnosyms.so", "[libnosyms.so]", &row));
	cr_expect(!strstr(r.out, "+0x"), "%s", r.out);
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

Test(report, sections_in_book_order_and_empty_ones_say_why)
{
	static const char *const sections[] = { "\nSummary\n", "\nMethod and scope\n",
		"\nLatency breakdown\n", "\nCPU hot paths\n", "\nTop functions", "\nTop stacks",
		"\nI/O\n", "\nContention and scheduling\n", "\nEvidence tables\n",
		"\nData quality\n", "\nReproduce\n" };
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;
	const char *last = NULL;

	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const char *at = strstr(r.out, sections[i]);
		cr_expect(at, "missing section %s", sections[i]);
		cr_expect(!last || !at || at > last, "section %s out of order", sections[i]);
		last = at ? at : last;
	}
	cr_expect(strstr(r.out, "  no block I/O recorded (source 'block' not enabled:"
			 " perfcap-record -e block)\n"), "%s", r.out);
	cr_expect(strstr(r.out, "  1. cpu_bound"), "%s", r.out);
	cr_expect(strstr(r.out, "  record command   perfcap-record -F 100 -- ./app\n"));
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, reproduce_hashes_the_capture_like_sha256sum)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap = make_capture(dir, "run.perfcap", &spec);
	char cmd[1024], expected[80] = "", line[128];
	struct tool_result r;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "sha256sum %s", cap);
	p = popen(cmd, "r");
	cr_assert(p);
	cr_assert(fscanf(p, "%64s", expected) == 1);
	pclose(p);
	run_analyze(&r, "report", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0);
	snprintf(line, sizeof(line), "  capture sha256   %s\n", expected);
	cr_expect(strstr(r.out, line), "%s not in %s", line, r.out);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, bad_scope_options_are_one_line_errors)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap = make_capture(dir, "run.perfcap", &spec);
	struct tool_result r;

	run_analyze(&r, "report", "--from", "soon", cap, NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--from: 'soon' is neither"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "report", "--to", "-5s", cap, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	run_analyze(&r, "report", "--tid", "x1", cap, NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--tid: 'x1' is not a thread id"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "report", "--json", "--folded", cap, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	run_analyze(&r, "report", "--no-local-files", "--from", "3600s", cap, NULL);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "outside the capture"), "%s", r.err);
	cr_expect_eq(count_lines_with(r.err, "perfcap-analyze"), 1, "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "report", "--no-local-files", "--from", "2s", "--to", "1s", cap, NULL);
	cr_expect_eq(r.status, 1);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(report, json_is_valid_and_has_the_contract_keys)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap = make_capture(dir, "run.perfcap", &spec);
	char *out = scratch_path(dir, "r.json");
	char cmd[2048];
	struct tool_result r;
	FILE *f;

	run_analyze(&r, "report", "--json", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	f = fopen(out, "w");
	cr_assert(f);
	fputs(r.out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
		 " keys={\"kind\",\"report_version\",\"capture\",\"summary\",\"scope\",\"diagnosis\","
		 "\"latency\",\"cpu\",\"io\",\"contention\",\"threads\",\"timeline\",\"data_quality\","
		 "\"reproduce\"}; assert keys <= set(d), keys - set(d);"
		 " assert d[\"kind\"] == \"report\" and d[\"report_version\"] == 1;"
		 " assert d[\"cpu\"][\"samples\"] == 400;"
		 " assert sum(x[\"count\"] for x in d[\"cpu\"][\"folded\"]) == 400;"
		 " assert d[\"cpu\"][\"functions\"][0][\"name\"] == \"A\";"
		 " assert d[\"reproduce\"][\"capture_sha256\"] == d[\"capture\"][\"sha256\"];"
		 " assert d[\"diagnosis\"][\"confidence\"] in (\"high\", \"medium\", \"low\")' %s",
		 out);
	cr_expect_eq(system(cmd), 0, "%s", r.out);
	tool_result_free(&r);
	free(out);
	free(cap);
	scratch_remove(dir);
}

Test(report, json_of_a_damaged_capture_is_valid_and_says_so)
{
	char *dir = scratch_dir();
	struct capture_spec spec = capture_spec_basic();
	char *cap, *out = scratch_path(dir, "r.json");
	char cmd[1024];
	struct tool_result r;
	FILE *f;

	spec.no_end = 1;
	cap = make_capture(dir, "cut.perfcap", &spec);
	run_analyze(&r, "report", "--json", "--no-local-files", cap, NULL);
	cr_expect_eq(r.status, 3, "%s", r.err);
	f = fopen(out, "w");
	cr_assert(f);
	fputs(r.out, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
		 " q=[x for x in d[\"data_quality\"] if x[\"source\"] == \"file\"];"
		 " assert q and q[0][\"value\"] == 1, q' %s", out);
	cr_expect_eq(system(cmd), 0, "%s", r.out);
	tool_result_free(&r);
	free(out);
	free(cap);
	scratch_remove(dir);
}
