/* test_elf_module.c - reading ELF files (build-id, segments, symbols) and
 * the PC_REC_MODULE round trip, checked against readelf and nm. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/elf_module.h"
#include "helpers.h"
#include "synthetic.h"

static void load_fixture(struct pc_elf_module *m, const char *name,
			 char path[TEST_PATH_MAX])
{
	char err[256] = "";

	fixture_path(path, name);
	cr_assert_eq(pc_elf_module_load(m, path, err, sizeof(err)), 0, "%s", err);
}

static const struct pc_symbol *find_symbol(const struct pc_elf_module *m,
					   const char *name)
{
	uint32_t i;

	for (i = 0; i < m->nsyms; i++) {
		if (strcmp(pc_elf_symbol_name(m, &m->syms[i]), name) == 0)
			return &m->syms[i];
	}
	return NULL;
}

Test(elf_module, pie_matches_readelf_and_nm)
{
	char path[TEST_PATH_MAX], hex[41], ours[41];
	struct pc_elf_module m;
	const struct pc_symbol *sym;
	uint64_t addr, size;
	uint32_t i;

	load_fixture(&m, "fixture_prog", path);
	cr_assert_eq(readelf_build_id(path, hex), 0);
	cr_assert_eq(m.build_id_len, strlen(hex) / 2);
	for (i = 0; i < m.build_id_len; i++)
		snprintf(ours + 2 * i, 3, "%02x", m.build_id[i]);
	cr_assert_str_eq(ours, hex);
	cr_assert_eq(m.e_type, ET_DYN);
	cr_assert_eq(m.nsegs, (uint32_t)readelf_load_count(path));
	cr_assert(m.has_debug_info);
	cr_assert(m.has_symtab);
	cr_assert_str_eq(m.path, path);

	cr_assert_eq(nm_symbol(path, "leaf_work", &addr, &size), 0);
	sym = find_symbol(&m, "leaf_work");
	cr_assert_not_null(sym);
	cr_assert_eq(sym->addr, addr);
	cr_assert_eq(sym->size, size);
	cr_assert_eq(pc_elf_module_lookup(&m, addr + size - 1), sym);
	for (i = 1; i < m.nsyms; i++)
		cr_assert_gt(m.syms[i].addr, m.syms[i - 1].addr, "sorted, unique");
	pc_elf_module_free(&m);
}

Test(elf_module, stripped_and_debug_files)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module stripped, debug, full;

	load_fixture(&stripped, "fixture_prog.stripped", path);
	load_fixture(&debug, "fixture_prog.debug", path);
	load_fixture(&full, "fixture_prog", path);
	cr_assert(!stripped.has_symtab);
	cr_assert(!stripped.has_debug_info);
	cr_assert(debug.has_debug_info);
	cr_assert_eq(stripped.build_id_len, 20);
	cr_assert_eq(memcmp(stripped.build_id, full.build_id, 20), 0);
	cr_assert_eq(memcmp(debug.build_id, full.build_id, 20), 0);
	cr_assert_eq(debug.nsyms, full.nsyms, "debug file keeps .symtab");
	pc_elf_module_free(&stripped);
	pc_elf_module_free(&debug);
	pc_elf_module_free(&full);
}

Test(elf_module, no_build_id)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module m;

	load_fixture(&m, "fixture_prog.nobid", path);
	cr_assert_eq(m.build_id_len, 0);
	cr_assert_not_null(find_symbol(&m, "leaf_work"));
	pc_elf_module_free(&m);
}

Test(elf_module, offsets_follow_segments)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module m;
	uint64_t vaddr, expected, offset;
	uint32_t i;

	load_fixture(&m, "libfixture.so", path);
	cr_assert_eq(m.nsegs, (uint32_t)readelf_load_count(path));
	for (i = 0; i < m.nsegs; i++) {
		const struct pc_segment *seg = &m.segs[i];

		expected = seg->vaddr + seg->filesz - 1;
		cr_assert_eq(readelf_vaddr_to_offset(path, expected, &offset), 0);
		cr_assert_eq(pc_elf_offset_to_vaddr(&m, offset, &vaddr), 0);
		cr_assert_eq(vaddr, expected);
		cr_assert_neq(seg->offset, seg->vaddr, "nonzero base");
	}
	cr_assert_eq(pc_elf_offset_to_vaddr(&m, 1ull << 40, &vaddr), -ENOENT);
	pc_elf_module_free(&m);
}

/* One address, names real_fn (global), __real_internal (global), weak_alias
 * (weak): the global without leading underscores is kept, once. */
Test(elf_module, aliases_deduplicated_deterministically)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module m;
	uint64_t addr, size;
	const struct pc_symbol *sym;

	load_fixture(&m, "libalias.so", path);
	cr_assert_eq(nm_symbol(path, "real_fn", &addr, &size), 0);
	sym = pc_elf_module_lookup(&m, addr);
	cr_assert_not_null(sym);
	cr_assert_str_eq(pc_elf_symbol_name(&m, sym), "real_fn");
	cr_assert_null(find_symbol(&m, "weak_alias"));
	cr_assert_null(find_symbol(&m, "__real_internal"));
	cr_assert_not_null(find_symbol(&m, "other_fn"));
	pc_elf_module_free(&m);
}

Test(elf_module, lookup_sized_and_unsized)
{
	struct pc_elf_module m;

	synthetic_elf_module(&m);
	cr_assert_null(pc_elf_module_lookup(&m, 0x10ff));
	cr_assert_eq(pc_elf_module_lookup(&m, 0x1100), &m.syms[0]);
	cr_assert_eq(pc_elf_module_lookup(&m, 0x113f), &m.syms[0]);
	cr_assert_eq(pc_elf_module_lookup(&m, 0x1140), &m.syms[1]);
	cr_assert_eq(pc_elf_module_lookup(&m, 0x11ff), &m.syms[1], "size 0 extends");
	cr_assert_eq(pc_elf_module_lookup(&m, 0x120f), &m.syms[2]);
	cr_assert_null(pc_elf_module_lookup(&m, 0x1210), "sized ends");
}

static void assert_same_module(const struct pc_elf_module *a,
			       const struct pc_elf_module *b)
{
	uint32_t i;

	cr_assert_eq(a->kind, b->kind);
	cr_assert_eq(a->build_id_len, b->build_id_len);
	cr_assert_eq(memcmp(a->build_id, b->build_id, a->build_id_len), 0);
	cr_assert_str_eq(a->path, b->path);
	cr_assert_eq(a->nsegs, b->nsegs);
	cr_assert_eq(memcmp(a->segs, b->segs, a->nsegs * sizeof(*a->segs)), 0);
	cr_assert_eq(a->nsyms, b->nsyms);
	for (i = 0; i < a->nsyms; i++) {
		cr_assert_eq(a->syms[i].addr, b->syms[i].addr);
		cr_assert_eq(a->syms[i].size, b->syms[i].size);
		cr_assert_str_eq(pc_elf_symbol_name(a, &a->syms[i]),
				 pc_elf_symbol_name(b, &b->syms[i]));
	}
}

Test(elf_module, record_round_trip)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module m, back;
	struct pc_buf b = { 0 };
	const struct pc_rec *rec;

	load_fixture(&m, "libfixture.so", path);
	cr_assert_eq(pc_buf_add_module(&b, &m, NULL, 0), 0);
	rec = (const struct pc_rec *)b.data;
	cr_assert_eq(rec->type, PC_REC_MODULE);
	cr_assert_eq(rec->size, b.len);
	cr_assert_eq(rec->size % 8, 0);
	cr_assert_eq(pc_elf_module_from_rec(&back, rec), 0);
	assert_same_module(&m, &back);
	pc_elf_module_free(&back);
	pc_elf_module_free(&m);
	pc_buf_free(&b);
}

Test(elf_module, reduced_record_compacts_strtab)
{
	struct pc_elf_module m, back;
	struct pc_buf b = { 0 };
	uint64_t addrs[] = { 0x1150, 0x1144, 0x5000 };

	synthetic_elf_module(&m);
	cr_assert_eq(pc_buf_add_module(&b, &m, addrs, 3), 0);
	cr_assert_eq(pc_elf_module_from_rec(&back, (const struct pc_rec *)b.data), 0);
	cr_assert_eq(back.nsyms, 1);
	cr_assert_str_eq(pc_elf_symbol_name(&back, &back.syms[0]), "beta");
	cr_assert_eq(back.strtab_len, sizeof("beta"));
	cr_assert_eq(back.syms[0].size, 0xc0, "extent to the next symbol");
	cr_assert_eq(back.nsegs, 2);
	pc_elf_module_free(&back);
	pc_buf_free(&b);
}
