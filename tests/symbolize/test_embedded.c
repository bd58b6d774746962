/* test_embedded.c - frames resolved from symbol data embedded in the
 * capture (PC_REC_MODULE records), with the binary gone, and the order of
 * embedded data versus a local file's richer symbol table. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "helpers.h"
#include "symbolize/symbolize.h"

#define MAX_FRAMES 8

/* Appends path's module record to b, keeping the symbols covering addrs
 * (all of them if addrs is NULL). */
static void add_module_record(struct pc_buf *b, const char *path,
			      const uint64_t *addrs, size_t naddrs)
{
	struct pc_elf_module m;
	char err[256] = "";

	cr_assert_eq(pc_elf_module_load(&m, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(pc_buf_add_module(b, &m, addrs, naddrs), 0);
	pc_elf_module_free(&m);
}

static uint64_t symbol_vaddr(const char *path, const char *name)
{
	uint64_t addr, size;

	cr_assert_eq(nm_symbol(path, name, &addr, &size), 0, "%s", name);
	return addr;
}

static struct symbolizer *capture_only_symbolizer(void)
{
	struct symbolizer_opts opts = { .local_files = 0 };
	struct symbolizer *s = symbolizer_new(&opts);

	cr_assert_not_null(s);
	return s;
}

Test(embedded, binary_deleted_resolves_from_capture)
{
	char tmp[TEST_TMP_MAX], orig[TEST_PATH_MAX], bin[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct pc_buf b = { 0 };
	struct pc_elf_module parsed;
	struct symbolizer *s;
	uint64_t addrs[3], off_leaf, off_caller, off_other;
	uint8_t id[20];
	int len;

	make_temp_dir(tmp);
	fixture_path(orig, "fixture_prog");
	snprintf(bin, sizeof(bin), "%s/prog", tmp);
	cr_assert_eq(copy_file(orig, bin), 0);
	addrs[0] = symbol_vaddr(bin, "leaf_work");
	addrs[1] = symbol_vaddr(bin, "inline_caller") + 4;
	addrs[2] = addrs[0] + 1; /* same function twice: stored once */
	off_leaf = function_offset(bin, "leaf_work");
	off_caller = function_offset(bin, "inline_caller");
	off_other = function_offset(bin, "not_embedded");
	len = file_build_id(bin, id);
	add_module_record(&b, bin, addrs, 3);
	cr_assert_eq(unlink(bin), 0);

	cr_assert_eq(pc_elf_module_from_rec(&parsed, (const struct pc_rec *)b.data), 0);
	cr_assert_eq(parsed.nsyms, 2);
	cr_assert_str_eq(parsed.path, bin);
	pc_elf_module_free(&parsed);

	s = capture_only_symbolizer();
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b.data), 0);
	cr_assert_eq(symbolizer_resolve_user(s, bin, id, (size_t)len, off_leaf,
					     out, MAX_FRAMES), 1);
	cr_assert_str_eq(out[0].function, "leaf_work");
	cr_assert_eq(out[0].source, SYM_SRC_CAPTURE);
	cr_assert_eq(out[0].mode, SYM_MODE_SYMBOL);
	cr_assert_null(out[0].file);

	symbolizer_resolve_user(s, bin, id, (size_t)len, off_caller + 4, out,
				MAX_FRAMES);
	cr_assert_str_eq(out[0].function, "inline_caller");
	cr_assert_eq(out[0].sym_offset, 4);

	/* a function no sample hit is not in the record */
	symbolizer_resolve_user(s, bin, id, (size_t)len, off_other, out,
				MAX_FRAMES);
	cr_assert_eq(out[0].mode, SYM_MODE_UNRESOLVED);
	cr_assert_str_eq(out[0].module, bin);
	cr_assert_eq(out[0].module_offset, off_other);
	symbolizer_free(s);
	pc_buf_free(&b);
	remove_temp_dir(tmp);
}

Test(embedded, empty_path_takes_the_record_path)
{
	char path[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct pc_buf b = { 0 };
	struct symbolizer *s;
	uint8_t id[20];
	int len;

	fixture_path(path, "fixture_prog");
	len = file_build_id(path, id);
	add_module_record(&b, path, NULL, 0);
	s = capture_only_symbolizer();
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b.data), 0);
	symbolizer_resolve_user(s, "", id, (size_t)len,
				function_offset(path, "leaf_work"), out, 1);
	cr_assert_str_eq(out[0].function, "leaf_work");
	cr_assert_str_eq(out[0].module, path);
	symbolizer_free(s);
	pc_buf_free(&b);
}

Test(embedded, keyed_by_path_without_build_id)
{
	char path[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct pc_buf b = { 0 };
	struct symbolizer *s;

	fixture_path(path, "fixture_prog.nobid");
	add_module_record(&b, path, NULL, 0);
	s = capture_only_symbolizer();
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b.data), 0);
	symbolizer_resolve_user(s, path, NULL, 0,
				function_offset(path, "not_embedded"), out, 1);
	cr_assert_str_eq(out[0].function, "not_embedded");
	cr_assert_eq(out[0].source, SYM_SRC_CAPTURE);
	symbolizer_free(s);
	pc_buf_free(&b);
}

/* Modules added after a lookup are used: the cached miss is forgotten. */
Test(embedded, module_added_after_a_miss)
{
	char path[TEST_PATH_MAX];
	struct sym_frame out[MAX_FRAMES];
	struct pc_buf b = { 0 };
	struct symbolizer *s;
	uint64_t offset;
	uint8_t id[20];
	int len;

	fixture_path(path, "fixture_prog");
	len = file_build_id(path, id);
	offset = function_offset(path, "leaf_work");
	s = capture_only_symbolizer();
	symbolizer_resolve_user(s, path, id, (size_t)len, offset, out, 1);
	cr_assert_eq(out[0].mode, SYM_MODE_UNRESOLVED);
	add_module_record(&b, path, NULL, 0);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b.data), 0);
	symbolizer_resolve_user(s, path, id, (size_t)len, offset, out, 1);
	cr_assert_str_eq(out[0].function, "leaf_work");
	symbolizer_free(s);
	pc_buf_free(&b);
}

/* The capture was recorded from a stripped binary (dynsym only); a local
 * copy with a .symtab but no DWARF names a function
 * the capture cannot. */
Test(embedded, local_symtab_beats_embedded_dynsym)
{
	char tmp[TEST_TMP_MAX], stripped[TEST_PATH_MAX], full[TEST_PATH_MAX];
	char bin[TEST_PATH_MAX], cmd[3 * TEST_PATH_MAX];
	struct symbolizer_opts opts = { .local_files = 1 };
	struct sym_frame out[MAX_FRAMES];
	struct pc_buf b = { 0 };
	struct pc_elf_module local;
	struct symbolizer *s;
	uint8_t id[20];
	int len;

	make_temp_dir(tmp);
	fixture_path(stripped, "fixture_prog.stripped");
	fixture_path(full, "fixture_prog");
	snprintf(bin, sizeof(bin), "%s/prog", tmp);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' '%s'", full, bin);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(pc_elf_module_load(&local, bin, NULL, 0), 0);
	cr_assert(local.has_symtab);
	cr_assert(!local.has_debug_info);
	pc_elf_module_free(&local);

	add_module_record(&b, stripped, NULL, 0);
	len = file_build_id(bin, id);
	opts.debug_dir = tmp;
	s = symbolizer_new(&opts);
	cr_assert_eq(symbolizer_add_module(s, (const struct pc_rec *)b.data), 0);
	symbolizer_resolve_user(s, bin, id, (size_t)len,
				function_offset(full, "leaf_work"), out, 1);
	cr_assert_str_eq(out[0].function, "leaf_work");
	cr_assert_eq(out[0].source, SYM_SRC_LOCAL);
	cr_assert_eq(out[0].mode, SYM_MODE_SYMBOL);
	symbolizer_free(s);
	pc_buf_free(&b);
	remove_temp_dir(tmp);
}
