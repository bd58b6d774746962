/* test_resolve.c - user frames resolved from local files: function names,
 * source lines and inline chains through DWARF, build-id matching, the
 * separate debug file found by build-id or .gnu_debuglink, unresolved
 * frames, and the cache. Expected answers come from nm, readelf and the
 * MARK_ comments of the fixture sources. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_module.h"
#include "helpers.h"
#include "symbolize/symbolize.h"

#define MAX_FRAMES 8

/* A symbolizer that reads local files but not /usr/lib/debug. */
static struct symbolizer *local_symbolizer(const char *debug_dir)
{
	struct symbolizer_opts opts = { .debug_dir = debug_dir,
					.local_files = 1 };
	struct symbolizer *s = symbolizer_new(&opts);

	cr_assert_not_null(s);
	return s;
}

static int resolve(struct symbolizer *s, const char *path, uint64_t offset,
		   struct sym_frame *out, int max)
{
	uint8_t id[20];
	int len = file_build_id(path, id);

	return symbolizer_resolve_user(s, path, id, (size_t)len, offset, out, max);
}

static void assert_frame(const struct sym_frame *f, const char *function,
			 const char *source_file, const char *marker)
{
	cr_assert_not_null(f->function);
	cr_assert_str_eq(f->function, function);
	cr_assert(ends_with(f->file, source_file), "file %s", f->file);
	cr_assert_eq(f->line, source_marker_line(source_file, marker),
		     "%s: line %d", function, f->line);
	cr_assert_eq(f->mode, SYM_MODE_LINE);
}

Test(resolve, pie_function_name_and_line)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;
	uint64_t offset;
	int n;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	offset = function_offset(path, "leaf_work");
	s = local_symbolizer(tmp);
	n = resolve(s, path, offset + 2, out, MAX_FRAMES);
	cr_assert_eq(n, 1);
	assert_frame(&out[0], "leaf_work", "fixture_prog.c", "MARK_leaf");
	cr_assert_eq(out[0].sym_offset, 2);
	cr_assert_eq(out[0].inlined, 0);
	cr_assert_eq(out[0].source, SYM_SRC_LOCAL);
	cr_assert_str_eq(out[0].module, path);
	cr_assert_eq(out[0].module_offset, offset + 2);
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

/* Scans a function for an address whose inline chain is inner -> outer,
 * checking that every address resolves to outer in the end. */
static int find_inline_chain(struct symbolizer *s, const char *path,
			     const char *outer, const char *inner,
			     struct sym_frame chain[2])
{
	uint64_t addr, size, offset, i;
	struct sym_frame out[MAX_FRAMES];
	int found = 0, n;

	cr_assert_eq(nm_symbol(path, outer, &addr, &size), 0);
	offset = function_offset(path, outer);
	for (i = 0; i < size; i++) {
		n = resolve(s, path, offset + i, out, MAX_FRAMES);
		cr_assert_str_eq(out[n - 1].function, outer);
		cr_assert_eq(out[n - 1].inlined, 0);
		cr_assert_eq(out[n - 1].sym_offset, i);
		if (n == 2 && !found) {
			cr_assert_str_eq(out[0].function, inner);
			cr_assert_eq(out[0].inlined, 1);
			memcpy(chain, out, 2 * sizeof(*out));
			found = 1;
		}
	}
	return found;
}

Test(resolve, pie_inline_chain)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame chain[2];
	struct symbolizer *s;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	s = local_symbolizer(tmp);
	cr_assert(find_inline_chain(s, path, "inline_caller", "inline_helper",
				    chain));
	assert_frame(&chain[0], "inline_helper", "fixture_prog.c",
		     "MARK_inline_body");
	assert_frame(&chain[1], "inline_caller", "fixture_prog.c",
		     "MARK_inline_call");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, max_one_frame_keeps_the_real_function)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame chain[2], out[1];
	struct symbolizer *s;
	uint64_t offset;
	int n, i;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	s = local_symbolizer(tmp);
	cr_assert(find_inline_chain(s, path, "inline_caller", "inline_helper",
				    chain));
	offset = chain[1].module_offset;
	for (i = 0; i < 2; i++) { /* uncached, then cached */
		n = resolve(s, path, offset, out, 1);
		cr_assert_eq(n, 1);
		assert_frame(&out[0], "inline_caller", "fixture_prog.c",
			     "MARK_inline_call");
	}
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, shared_library_at_nonzero_base)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame out[MAX_FRAMES], chain[2];
	struct pc_elf_module m;
	struct symbolizer *s;
	uint64_t vaddr, size, offset, translated;

	make_temp_dir(tmp);
	fixture_path(path, "libfixture.so");
	cr_assert_eq(nm_symbol(path, "lib_leaf", &vaddr, &size), 0);
	offset = function_offset(path, "lib_leaf");
	cr_assert_neq(offset, vaddr, "the fixture must have offset != vaddr");
	cr_assert_eq(pc_elf_module_load(&m, path, NULL, 0), 0);
	cr_assert_eq(pc_elf_offset_to_vaddr(&m, offset, &translated), 0);
	cr_assert_eq(translated, vaddr);
	pc_elf_module_free(&m);

	s = local_symbolizer(tmp);
	cr_assert_eq(resolve(s, path, offset, out, MAX_FRAMES), 1);
	assert_frame(&out[0], "lib_leaf", "fixture_lib.c", "MARK_lib_leaf");
	cr_assert(find_inline_chain(s, path, "lib_entry", "lib_inline", chain));
	assert_frame(&chain[0], "lib_inline", "fixture_lib.c", "MARK_lib_inline");
	assert_frame(&chain[1], "lib_entry", "fixture_lib.c", "MARK_lib_call");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

/* tmp/bin/prog is the stripped binary; returns the leaf_work offset. */
static uint64_t install_stripped(const char *tmp, char bin[TEST_PATH_MAX])
{
	char stripped[TEST_PATH_MAX], full[TEST_PATH_MAX];

	fixture_path(stripped, "fixture_prog.stripped");
	fixture_path(full, "fixture_prog");
	snprintf(bin, TEST_PATH_MAX, "%s/bin/prog", tmp);
	cr_assert_eq(copy_file(stripped, bin), 0);
	/* strip keeps the loaded layout: nm of the full file applies */
	return function_offset(full, "leaf_work");
}

Test(resolve, stripped_with_build_id_debug_file)
{
	char tmp[TEST_TMP_MAX], bin[TEST_PATH_MAX], debug[TEST_PATH_MAX];
	char dest[2 * TEST_PATH_MAX], hex[41];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;
	uint64_t offset;

	make_temp_dir(tmp);
	offset = install_stripped(tmp, bin);
	fixture_path(debug, "fixture_prog.debug");
	cr_assert_eq(readelf_build_id(bin, hex), 0);
	snprintf(dest, sizeof(dest), "%s/.build-id/%.2s/%s.debug", tmp, hex,
		 hex + 2);
	cr_assert_eq(copy_file(debug, dest), 0);

	s = local_symbolizer(tmp);
	cr_assert_eq(resolve(s, bin, offset, out, MAX_FRAMES), 1);
	assert_frame(&out[0], "leaf_work", "fixture_prog.c", "MARK_leaf");
	cr_assert_eq(out[0].source, SYM_SRC_LOCAL);
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, stripped_with_debuglink_file)
{
	char tmp[TEST_TMP_MAX], bin[TEST_PATH_MAX], debug[TEST_PATH_MAX];
	char dest[2 * TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;
	uint64_t offset;

	make_temp_dir(tmp);
	offset = install_stripped(tmp, bin);
	fixture_path(debug, "fixture_prog.debug");
	snprintf(dest, sizeof(dest), "%s/bin/.debug/fixture_prog.debug", tmp);
	cr_assert_eq(copy_file(debug, dest), 0);

	s = local_symbolizer(tmp);
	cr_assert_eq(resolve(s, bin, offset, out, MAX_FRAMES), 1);
	assert_frame(&out[0], "leaf_work", "fixture_prog.c", "MARK_leaf");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, stripped_without_debug_is_unresolved)
{
	char tmp[TEST_TMP_MAX], bin[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offset;

	make_temp_dir(tmp);
	offset = install_stripped(tmp, bin);
	s = local_symbolizer(tmp);
	cr_assert_eq(resolve(s, bin, offset, out, MAX_FRAMES), 1);
	cr_assert_null(out[0].function);
	cr_assert_eq(out[0].mode, SYM_MODE_UNRESOLVED);
	cr_assert_eq(out[0].source, SYM_SRC_NONE);
	cr_assert_str_eq(out[0].module, bin);
	cr_assert_eq(out[0].module_offset, offset);
	symbolizer_get_stats(s, &st);
	cr_assert_eq(st.unresolved, 1);
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, file_with_other_build_id_is_ignored)
{
	char tmp[TEST_TMP_MAX], prog[TEST_PATH_MAX], lib[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;
	uint8_t id[20];
	int len;

	make_temp_dir(tmp);
	fixture_path(prog, "fixture_prog");
	fixture_path(lib, "libfixture.so");
	len = file_build_id(prog, id);
	s = local_symbolizer(tmp);
	/* the capture says "prog's build-id at lib's path" */
	cr_assert_eq(symbolizer_resolve_user(s, lib, id, (size_t)len,
					     function_offset(lib, "lib_leaf"),
					     out, MAX_FRAMES), 1);
	cr_assert_eq(out[0].mode, SYM_MODE_UNRESOLVED);
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, no_build_id_uses_the_path)
{
	char tmp[TEST_TMP_MAX], path[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog.nobid");
	cr_assert_eq(file_build_id(path, (uint8_t[20]){ 0 }), 0);
	s = local_symbolizer(tmp);
	cr_assert_eq(symbolizer_resolve_user(s, path, NULL, 0,
					     function_offset(path, "leaf_work"),
					     out, MAX_FRAMES), 1);
	assert_frame(&out[0], "leaf_work", "fixture_prog.c", "MARK_leaf");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, symfs_root)
{
	char tmp[TEST_TMP_MAX], path[TEST_PATH_MAX], dest[2 * TEST_PATH_MAX];
	struct symbolizer_opts opts = { .local_files = 1 };
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer *s;
	uint8_t id[20];
	int len;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	len = file_build_id(path, id);
	snprintf(dest, sizeof(dest), "%s/opt/app/prog", tmp);
	cr_assert_eq(copy_file(path, dest), 0);
	opts.symfs = tmp;
	opts.debug_dir = tmp;
	s = symbolizer_new(&opts);
	/* recorded at /opt/app/prog, which exists only under the symfs */
	cr_assert_eq(symbolizer_resolve_user(s, "/opt/app/prog", id, (size_t)len,
					     function_offset(path, "leaf_work"),
					     out, MAX_FRAMES), 1);
	assert_frame(&out[0], "leaf_work", "fixture_prog.c", "MARK_leaf");
	cr_assert_str_eq(out[0].module, "/opt/app/prog");
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

Test(resolve, cache_hits_and_same_answer)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame a[MAX_FRAMES], b[MAX_FRAMES];
	struct symbolizer_stats st;
	struct symbolizer *s;
	uint64_t offset;
	int na, nb, i;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	offset = function_offset(path, "inline_caller");
	s = local_symbolizer(tmp);
	na = resolve(s, path, offset + 8, a, MAX_FRAMES);
	symbolizer_get_stats(s, &st);
	cr_assert_eq(st.lookups, 1);
	cr_assert_eq(st.cache_hits, 0);
	nb = resolve(s, path, offset + 8, b, MAX_FRAMES);
	symbolizer_get_stats(s, &st);
	cr_assert_eq(st.lookups, 2);
	cr_assert_eq(st.cache_hits, 1);
	cr_assert_eq(na, nb);
	for (i = 0; i < na; i++) {
		cr_assert_str_eq(a[i].function, b[i].function);
		cr_assert_eq(a[i].line, b[i].line);
		cr_assert_eq(a[i].module, b[i].module);
	}
	symbolizer_free(s);
	remove_temp_dir(tmp);
}

/* Two symbolizers given the same calls in opposite orders agree. */
Test(resolve, deterministic_across_instances)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX];
	struct sym_frame a[MAX_FRAMES], b[MAX_FRAMES];
	struct symbolizer *s1, *s2;
	uint64_t addr, size, offset, i;
	int na, nb, k;

	make_temp_dir(tmp);
	fixture_path(path, "fixture_prog");
	cr_assert_eq(nm_symbol(path, "main", &addr, &size), 0);
	offset = function_offset(path, "leaf_work");
	s1 = local_symbolizer(tmp);
	s2 = local_symbolizer(tmp);
	for (i = 0; i < 0x100; i++)
		resolve(s2, path, offset + 0x100 - i, b, MAX_FRAMES);
	for (i = 0; i < 0x100; i++) {
		na = resolve(s1, path, offset + i, a, MAX_FRAMES);
		nb = resolve(s2, path, offset + i, b, MAX_FRAMES);
		cr_assert_eq(na, nb);
		for (k = 0; k < na; k++) {
			cr_assert_eq(a[k].mode, b[k].mode);
			cr_assert_eq(a[k].line, b[k].line);
			cr_assert_eq(a[k].sym_offset, b[k].sym_offset);
			if (a[k].function)
				cr_assert_str_eq(a[k].function, b[k].function);
		}
	}
	symbolizer_free(s1);
	symbolizer_free(s2);
	remove_temp_dir(tmp);
}
