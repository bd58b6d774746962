/* test_damage.c - damaged and foreign files: truncated copies still give
 * every complete chunk, report the damage and exit 3; a flipped byte costs one
 * chunk; files that are not captures (or come from a newer major version)
 * fail with one clear line and exit status 1. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_builder.h"
#include "perfcap_format.h"
#include "run_tool.h"

struct damaged {
	char *dir;
	char *intact;
	char *damaged;
	struct capture_layout layout;
};

static void make_intact(struct damaged *d, const struct capture_spec *spec)
{
	d->dir = scratch_dir();
	d->intact = scratch_path(d->dir, "intact.perfcap");
	d->damaged = scratch_path(d->dir, "damaged.perfcap");
	cr_assert_eq(build_capture(d->intact, spec, &d->layout), 0);
}

static void damaged_free(struct damaged *d)
{
	free(d->intact);
	free(d->damaged);
	scratch_remove(d->dir);
}

/* Offset in the middle of the n-th chunk of the given type. */
static uint64_t middle_of_chunk(const struct damaged *d, uint16_t type, int nth)
{
	for (int i = 1; i < d->layout.nchunks; i++) {
		if (d->layout.chunk_type[i] == type && nth-- == 0)
			return (d->layout.chunk_end[i - 1] + d->layout.chunk_end[i]) / 2;
	}
	cr_assert_fail("no such chunk");
	return 0;
}

Test(damage, truncated_copy_keeps_complete_chunks)
{
	struct damaged d;
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;
	char *db = NULL;

	make_intact(&d, &spec);
	/* cut inside the second EVENTS chunk: the 300 A samples survive */
	cr_assert_eq(copy_prefix(d.intact, d.damaged, middle_of_chunk(&d, PC_CHUNK_EVENTS, 1)), 0);
	db = scratch_path(d.dir, "damaged.db");
	run_analyze(&r, "import", "--no-local-files", d.damaged, "-o", db, NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cr_expect(strstr(r.err, "warning"), "%s", r.err);
	cr_expect(strstr(r.err, "file cut at byte"), "%s", r.err);
	cr_expect(strstr(r.out, "(300 samples)"), "%s", r.out);
	tool_result_free(&r);

	run_analyze(&r, "report", db, NULL);
	cr_assert_eq(r.status, 3);
	cr_expect(strstr(r.out, "samples     300\n"), "%s", r.out);
	cr_expect(strstr(r.out, "File:                file cut at byte"), "%s", r.out);
	/* symbols came after the cut: frames print as "[unknown] in module" */
	cr_expect(strstr(r.out, "[unknown] in app  [app]"), "%s", r.out);
	tool_result_free(&r);

	run_analyze(&r, "info", d.damaged, NULL);
	cr_expect_eq(r.status, 3);
	cr_expect(strstr(r.out, "status       file cut at byte"), "%s", r.out);
	cr_expect(strstr(r.err, "warning"));
	tool_result_free(&r);
	free(db);
	damaged_free(&d);
}

Test(damage, missing_end_marker_is_reported)
{
	struct damaged d;
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;

	spec.no_end = 1;
	make_intact(&d, &spec);
	run_analyze(&r, "report", "--no-local-files", d.intact, NULL);
	cr_assert_eq(r.status, 3);
	cr_expect(strstr(r.out, "samples     400\n"));
	cr_expect(strstr(r.out, "no end marker"), "%s", r.out);
	cr_expect(strstr(r.err, "no end marker"), "%s", r.err);
	tool_result_free(&r);
	damaged_free(&d);
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	return size;
}

static void flip_byte(const char *path, uint64_t at)
{
	FILE *f = fopen(path, "r+b");
	int c;

	cr_assert(f);
	fseek(f, (long)at, SEEK_SET);
	c = fgetc(f);
	fseek(f, (long)at, SEEK_SET);
	fputc(c ^ 0x5a, f);
	fclose(f);
}

Test(damage, flipped_byte_costs_one_chunk)
{
	struct damaged d;
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;

	make_intact(&d, &spec);
	cr_assert_eq(copy_prefix(d.intact, d.damaged, (size_t)file_size(d.intact)), 0);
	flip_byte(d.damaged, middle_of_chunk(&d, PC_CHUNK_EVENTS, 1));

	run_analyze(&r, "report", "--no-local-files", d.damaged, NULL);
	cr_assert_eq(r.status, 3, "%s", r.err);
	cr_expect(strstr(r.out, "samples     300\n"), "%s", r.out);
	cr_expect(strstr(r.out, "1 chunk(s) failed checksum"), "%s", r.out);
	/* symbols after the bad chunk are still used */
	cr_expect(strstr(r.out, "  A  [app]"), "%s", r.out);
	tool_result_free(&r);
	damaged_free(&d);
}

static void expect_refused(const char *path, const char *message)
{
	const char *commands[] = { "info", "report", "import" };
	char expected[512];

	snprintf(expected, sizeof(expected), "perfcap-analyze: %s: %s\n", path, message);
	for (size_t i = 0; i < 3; i++) {
		struct tool_result r;
		if (strcmp(commands[i], "import") == 0) {
			char db[600];
			snprintf(db, sizeof(db), "%s.db", path);
			run_analyze(&r, commands[i], path, "-o", db, NULL);
		} else {
			run_analyze(&r, commands[i], path, NULL);
		}
		cr_expect_eq(r.status, 1, "%s", commands[i]);
		cr_expect_str_eq(r.err, expected, "%s", commands[i]);
		cr_expect_str_empty(r.out, "%s", commands[i]);
		tool_result_free(&r);
	}
}

Test(damage, not_a_capture)
{
	char *dir = scratch_dir();
	char *text = scratch_path(dir, "notes.txt");
	char *empty = scratch_path(dir, "empty");
	FILE *f = fopen(text, "w");

	fputs("this is not a capture, just some text that is long enough\n", f);
	fclose(f);
	fclose(fopen(empty, "w"));
	expect_refused(text, "not a perfcap capture");
	expect_refused(empty, "not a perfcap capture");
	free(text);
	free(empty);
	scratch_remove(dir);
}

Test(damage, newer_major_version)
{
	struct damaged d;
	struct capture_spec spec = capture_spec_basic();
	struct tool_result r;
	uint16_t major = PC_FORMAT_MAJOR + 1;
	FILE *f;

	make_intact(&d, &spec);
	f = fopen(d.intact, "r+b");
	fseek(f, 8, SEEK_SET);
	fwrite(&major, sizeof(major), 1, f);
	fclose(f);
	run_analyze(&r, "report", d.intact, NULL);
	cr_expect_eq(r.status, 1);
	cr_expect(strncmp(r.err, "perfcap-analyze: ", 17) == 0, "%s", r.err);
	cr_expect(strstr(r.err, d.intact), "%s", r.err);
	cr_expect_eq(count_lines_with(r.err, ""), 1, "one line: %s", r.err);
	tool_result_free(&r);
	damaged_free(&d);
}
