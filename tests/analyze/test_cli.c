/* test_cli.c - the command line teaches: --help, help CMD and CMD --help
 * show options and EXAMPLES; bad usage exits 2 with a hint. */
#include <criterion/criterion.h>
#include <string.h>

#include "run_tool.h"

Test(cli, main_help_lists_commands_and_examples)
{
	struct tool_result r;

	run_analyze(&r, "--help", NULL);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "COMMANDS:"));
	cr_expect(strstr(r.out, "EXAMPLES:"));
	cr_expect(strstr(r.out, "report --folded"));
	tool_result_free(&r);
}

Test(cli, help_for_each_command)
{
	const char *commands[] = { "info", "import", "report" };

	for (size_t i = 0; i < 3; i++) {
		struct tool_result via_help, via_flag;
		run_analyze(&via_help, "help", commands[i], NULL);
		run_analyze(&via_flag, commands[i], "--help", NULL);
		cr_expect_eq(via_help.status, 0, "%s", commands[i]);
		cr_expect(strstr(via_help.out, "EXAMPLES:"), "%s", commands[i]);
		cr_expect(strstr(via_help.out, "Usage: perfcap-analyze "), "%s", via_help.out);
		cr_expect_str_eq(via_help.out, via_flag.out);
		tool_result_free(&via_help);
		tool_result_free(&via_flag);
	}
}

Test(cli, report_help_names_its_options)
{
	struct tool_result r;

	run_analyze(&r, "help", "report", NULL);
	const char *options[] = { "--top", "--pid", "--comm", "--symfs", "--no-local-files",
				  "--folded" };
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		cr_expect(strstr(r.out, options[i]), "%s", options[i]);
	tool_result_free(&r);
}

Test(cli, version)
{
	struct tool_result r;

	run_analyze(&r, "--version", NULL);
	cr_expect_eq(r.status, 0);
	cr_expect(strncmp(r.out, "perfcap-analyze ", 16) == 0, "%s", r.out);
	tool_result_free(&r);
}

Test(cli, usage_errors_exit_2)
{
	struct tool_result r;

	run_analyze(&r, "frobnicate", NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown command 'frobnicate'"));
	tool_result_free(&r);
	run_analyze(&r, "import", "x.perfcap", NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "-o DB is missing"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "report", "--top", "zero", "x.perfcap", NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	run_analyze(&r, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
}
