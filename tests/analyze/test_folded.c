/* test_folded.c - folded stacks: exact lines, order, kernel suffix,
 * thread names, merging and filters. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "run_tool.h"

static void expect_folded(const struct capture_spec *spec, const char *filter_flag,
			  const char *filter_value, const char *expected)
{
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "run.perfcap");
	struct tool_result r;

	cr_assert_eq(build_capture(cap, spec, NULL), 0);
	if (filter_flag)
		run_analyze(&r, "report", "--folded", "--no-local-files", filter_flag,
			    filter_value, cap, NULL);
	else
		run_analyze(&r, "report", "--folded", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_expect_str_eq(r.out, expected);
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}

Test(folded, basic_lines_root_first)
{
	struct capture_spec spec = capture_spec_basic();

	expect_folded(&spec, NULL, NULL,
		      "app;_start;main;caller;A 300\n"
		      "app;_start;main;caller;B 100\n");
}

Test(folded, every_kind_of_stack)
{
	struct capture_spec spec = {
		.a = 300, .b = 100, .b_worker = 20, .a_kernel = 10, .kernel_only = 5,
		.unmapped = 7, .nosyms = 3, .other = 50, .truncated = 4, .short_stack = 6,
		.no_stack = 2, .unknown_content = 1,
	};

	expect_folded(&spec, NULL, NULL,
		      "app;[no stack] 2\n"
		      "app;_start;main;caller;A 300\n"
		      "app;_start;main;caller;A;do_syscall_64_[k];ksys_read_[k] 10\n"
		      "app;_start;main;caller;B 100\n"
		      "app;_start;main;caller;[unknown] 7\n"
		      "app;_start;main;caller;[unknown] in libnosyms.so 3\n"
		      "app;caller;A 10\n"
		      "app;do_syscall_64_[k];ksys_read_[k] 5\n"
		      "other;_start;main;caller;A 50\n"
		      "worker;_start;main;caller;B 20\n");
}

Test(folded, pid_filter)
{
	struct capture_spec spec = { .a = 3, .other = 4 };

	expect_folded(&spec, "--pid", "200", "other;_start;main;caller;A 4\n");
}

Test(folded, comm_filter_matches_threads)
{
	struct capture_spec spec = { .a = 3, .b_worker = 4, .other = 5 };

	expect_folded(&spec, "--comm", "worker", "worker;_start;main;caller;B 4\n");
}

/* A return address in no mapping is the junk of a frame-pointer walk gone
 * astray: the stack keeps its real frames around it, the junk frame is not
 * in the folded line (so diff keys never contain an address), and the
 * data quality counts it. */
Test(folded, junk_return_address_dropped_and_counted)
{
	struct capture_spec spec = { .a = 2, .junk = 5 };
	char *dir = scratch_dir();
	char *cap = scratch_path(dir, "run.perfcap");
	struct tool_result r;

	expect_folded(&spec, NULL, NULL, "app;_start;main;caller;A 7\n");
	cr_assert_eq(build_capture(cap, &spec, NULL), 0);
	run_analyze(&r, "report", "--json", "--no-local-files", cap, NULL);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_expect(strstr(r.out, "\"key\": \"sampled.junk\"") != NULL, "no sampled.junk row");
	tool_result_free(&r);
	free(cap);
	scratch_remove(dir);
}
