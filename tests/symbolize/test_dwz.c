/* test_dwz.c - a debug file compressed with dwz: the inlined function's
 * DWARF lives in the shared (alt) file, found by its build-id in the
 * configured debug directory. Built at test time; skipped without dwz. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"
#include "symbolize/symbolize.h"

#define MAX_FRAMES 8

static int run(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
}

/* tmp/one and tmp/two sharing tmp/multi.debug. 0, or -1 without dwz. */
static int build_dwz_pair(const char *tmp)
{
	char cmd[4 * TEST_PATH_MAX], src[TEST_PATH_MAX];

	if (run("dwz --version >/dev/null 2>&1") != 0)
		return -1;
	snprintf(src, sizeof(src), "%s/fixture_dwz.c", getenv("SYM_SOURCES"));
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && cc -g -O0 -fPIE -pie -DVARIANT=1 -o one '%s' && "
		 "cc -g -O0 -fPIE -pie -DVARIANT=2 -o two '%s' && "
		 "dwz -m multi.debug -M /nonexistent/perfcap-multi.debug one two",
		 tmp, src, src);
	cr_assert_eq(run(cmd), 0, "%s", cmd);
	return 0;
}

static void place_multifile(const char *tmp, const char *debug_dir)
{
	char multi[TEST_PATH_MAX], dest[2 * TEST_PATH_MAX], hex[41];

	snprintf(multi, sizeof(multi), "%s/multi.debug", tmp);
	cr_assert_eq(readelf_build_id(multi, hex), 0);
	snprintf(dest, sizeof(dest), "%s/.build-id/%.2s/%s.debug", debug_dir,
		 hex, hex + 2);
	cr_assert_eq(copy_file(multi, dest), 0);
}

/* Scans dwz_user for an address with the 2-frame inline chain. */
static int find_dwz_chain(struct symbolizer *s, const char *bin,
			  struct sym_frame out[MAX_FRAMES])
{
	uint64_t addr, size, offset, i;
	uint8_t id[20];
	int len = file_build_id(bin, id), n;

	cr_assert_eq(nm_symbol(bin, "dwz_user", &addr, &size), 0);
	offset = function_offset(bin, "dwz_user");
	for (i = 0; i < size; i++) {
		n = symbolizer_resolve_user(s, bin, id, (size_t)len, offset + i,
					    out, MAX_FRAMES);
		cr_assert_str_eq(out[n - 1].function, "dwz_user");
		if (n == 2)
			return 1;
	}
	return 0;
}

Test(dwz, inline_names_from_alt_file)
{
	char tmp[TEST_TMP_MAX], bin[TEST_PATH_MAX], debug_dir[TEST_PATH_MAX];
	struct symbolizer_opts opts = { .local_files = 1 };
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;

	make_temp_dir(tmp);
	if (build_dwz_pair(tmp) != 0) {
		remove_temp_dir(tmp);
		cr_skip_test("dwz is not installed");
	}
	snprintf(bin, sizeof(bin), "%s/one", tmp);
	snprintf(debug_dir, sizeof(debug_dir), "%s/debug", tmp);
	place_multifile(tmp, debug_dir);
	opts.debug_dir = debug_dir;
	s = symbolizer_new(&opts);
	cr_assert(find_dwz_chain(s, bin, out));
	cr_assert_str_eq(out[0].function, "dwz_inline");
	cr_assert_eq(out[0].inlined, 1);
	cr_assert_eq(out[0].line,
		     source_marker_line("fixture_dwz.c", "MARK_dwz_inline"));
	cr_assert_eq(out[1].line,
		     source_marker_line("fixture_dwz.c", "MARK_dwz_call"));
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

/* Without the alt file the inlined frame has no name: it is left out,
 * never returned blank. */
Test(dwz, missing_alt_file_gives_no_blank_frame)
{
	char tmp[TEST_TMP_MAX], bin[TEST_PATH_MAX];
	struct symbolizer_opts opts = { .local_files = 1 };
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;

	make_temp_dir(tmp);
	if (build_dwz_pair(tmp) != 0) {
		remove_temp_dir(tmp);
		cr_skip_test("dwz is not installed");
	}
	snprintf(bin, sizeof(bin), "%s/one", tmp);
	opts.debug_dir = tmp;
	s = symbolizer_new(&opts);
	cr_assert(!find_dwz_chain(s, bin, out), "no 2-frame chain");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}
