/* test_gopclntab.c - stripped Go binaries named from their pclntab.
 *
 * The binaries come from tests/go/build.sh (the system's go; without it the
 * files are empty and these tests skip, saying so). The answers come from
 * binutils nm on the same program built with its symbols: go_hot.strip is
 * go_hot.full through strip (one layout, so every function is checked);
 * go_hot.stripped (-ldflags='-s -w') and the PIE builds are compared by
 * name with their unstripped twins (Go builds are reproducible). Hostile
 * tables (truncated, mutated, random) must be refused or read within
 * bounds, never crash (the suite runs under ASan and UBSan in test.sh).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "common/gopclntab.h"
#include "helpers.h"

/* $GO_FIXTURES/name, or a skip (loud: the reason goes to stderr) when go
 * was missing at build time. */
static void go_fixture(char out[TEST_PATH_MAX], const char *name)
{
	const char *dir = getenv("GO_FIXTURES");
	struct stat st;

	cr_assert_not_null(dir, "GO_FIXTURES not set");
	snprintf(out, TEST_PATH_MAX, "%s/%s", dir, name);
	if (stat(out, &st) != 0 || st.st_size == 0) {
		fprintf(stderr, "SKIP: %s is empty: no go (or no cgo) at build time; "
			"install golang-go\n", out);
		cr_skip_test("no go at build time: %s empty", name);
	}
}

static void load(struct pc_elf_module *m, const char *path)
{
	char err[256] = "";

	cr_assert_eq(pc_elf_module_load(m, path, err, sizeof(err)), 0, "%s", err);
}

static const struct pc_symbol *find_symbol(const struct pc_elf_module *m, const char *name)
{
	for (uint32_t i = 0; i < m->nsyms; i++)
		if (strcmp(pc_elf_symbol_name(m, &m->syms[i]), name) == 0)
			return &m->syms[i];
	return NULL;
}

/* Each function of the stripped build at the address nm gives it in the
 * unstripped one, and lookups inside it name it. */
static void check_named_like(const char *stripped, const char *full)
{
	static const char *const names[] = {
		"main.hotLoop", "main.main", "runtime.main", "runtime.mallocgc",
		"runtime.schedule", "time.Now",
	};
	struct pc_elf_module m;
	char path[TEST_PATH_MAX], full_path[TEST_PATH_MAX];

	go_fixture(path, stripped);
	go_fixture(full_path, full);
	load(&m, path);
	cr_assert(!m.has_symtab, "%s has no .symtab", stripped);
	cr_assert_eq(m.go_pclntab, 1, "%s: %s", stripped, m.go_pclntab_note);
	cr_assert(strstr(m.go_pclntab_note, "magic 0xfffffff") != NULL, "%s", m.go_pclntab_note);
	cr_assert_gt(m.nsyms, 1000, "a Go binary has thousands of functions");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct pc_symbol *sym = find_symbol(&m, names[i]);
		uint64_t addr, size;

		cr_assert_eq(nm_symbol(full_path, names[i], &addr, &size), 0, "nm %s", names[i]);
		cr_assert_not_null(sym, "%s: %s not named", stripped, names[i]);
		cr_assert_eq(sym->addr, addr, "%s: %s at %#lx, nm says %#lx", stripped, names[i],
			     (unsigned long)sym->addr, (unsigned long)addr);
		cr_assert_geq(sym->size, size, "%s extends to the next function", names[i]);
		cr_assert_eq(pc_elf_module_lookup(&m, addr + size - 1), sym);
	}
	pc_elf_module_free(&m);
}

Test(gopclntab, stripped_build_named_like_unstripped)
{
	check_named_like("go_hot.stripped", "go_hot.full");
}

Test(gopclntab, pie_internal_linker)
{
	check_named_like("go_hot.pie", "go_hot.pie.full");
}

/* External linker: the table is inside .data.rel.ro and its text start is
 * 0 in the file (a relocation fills it), while .text begins with C code. */
Test(gopclntab, pie_external_linker)
{
	check_named_like("go_hot.extpie", "go_hot.extpie.full");
}

/* With a .symtab nothing changes: the symbols are the ELF ones. */
Test(gopclntab, unstripped_uses_symtab)
{
	struct pc_elf_module m;
	char path[TEST_PATH_MAX];
	uint64_t addr, size;
	const struct pc_symbol *sym;

	go_fixture(path, "go_hot.full");
	load(&m, path);
	cr_assert(m.has_symtab);
	cr_assert_eq(m.go_pclntab, 0, "the pclntab is not read when .symtab names functions");
	cr_assert_eq(nm_symbol(path, "main.hotLoop", &addr, &size), 0);
	sym = find_symbol(&m, "main.hotLoop");
	cr_assert_not_null(sym);
	cr_assert_eq(sym->addr, addr);
	cr_assert_eq(sym->size, size);
	pc_elf_module_free(&m);
}

/* nm's text symbols of the unstripped build: name -> address. */
struct nm_sym {
	uint64_t addr;
	char name[256];
};

static size_t read_nm(const char *path, struct nm_sym **out)
{
	char cmd[TEST_PATH_MAX + 32], line[512];
	size_t n = 0, cap = 0;
	struct nm_sym *v = NULL;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char type, *name;
		int at = 0;

		/* the name is the rest of the line: Go's have spaces */
		if (sscanf(line, "%llx %c %n", &addr, &type, &at) != 2 || at == 0 ||
		    (type != 'T' && type != 't'))
			continue;
		name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
			cr_assert_not_null(v);
		}
		v[n].addr = addr;
		snprintf(v[n].name, sizeof(v[n].name), "%s", name);
		n++;
	}
	pclose(p);
	*out = v;
	return n;
}

/* The pclntab's name of a function is its .symtab name, except that
 * .symtab marks assembly (ABI0) functions "name.abi0" and the pclntab
 * writes array lengths in type names as "[...]". */
static int same_go_name(const char *pcln, const char *sym)
{
	while (*pcln && *pcln == *sym) {
		if (strncmp(pcln, "[...]", 5) == 0 && sym[0] == '[') {
			const char *close = strchr(sym, ']');

			if (close == NULL)
				return 0;
			pcln += 5;
			sym = close + 1;
			continue;
		}
		pcln++;
		sym++;
	}
	if (*pcln == '\0')
		return *sym == '\0' || strcmp(sym, ".abi0") == 0;
	return 0;
}

/* binutils strip keeps the layout: every function the pclntab names is a
 * text symbol of the unstripped file at the same address, and almost every
 * text symbol is named (the rest are markers such as runtime.text). */
Test(gopclntab, every_function_matches_nm)
{
	char path[TEST_PATH_MAX], full[TEST_PATH_MAX];
	struct pc_elf_module m;
	struct nm_sym *nm;
	size_t nnm, matched = 0;

	go_fixture(path, "go_hot.strip");
	go_fixture(full, "go_hot.full");
	load(&m, path);
	cr_assert_eq(m.go_pclntab, 1, "%s", m.go_pclntab_note);
	nnm = read_nm(full, &nm);
	cr_assert_gt(nnm, 1000);
	for (uint32_t i = 0; i < m.nsyms; i++) {
		const char *name = pc_elf_symbol_name(&m, &m.syms[i]);
		int found = 0;

		for (size_t j = 0; j < nnm && !found; j++)
			found = nm[j].addr == m.syms[i].addr && same_go_name(name, nm[j].name);
		cr_assert(found, "%s at %#lx is not a symbol of %s", name,
			  (unsigned long)m.syms[i].addr, full);
		matched++;
	}
	cr_log_info("%zu pclntab functions, %zu nm text symbols", matched, nnm);
	cr_assert_geq(matched * 100, nnm * 95, "%zu of %zu text symbols named", matched, nnm);
	free(nm);
	pc_elf_module_free(&m);
}

/* ---- hostile tables -------------------------------------------------- */

/* A malloc'd copy of section name of path (its sh_offset into *offset). */
static uint8_t *section_copy(const char *path, const char *name, size_t *len, uint64_t *offset)
{
	int fd = open(path, O_RDONLY);
	uint8_t *copy = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;
	Elf *elf;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert_not_null(elf);
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *d;

		if (gelf_getshdr(scn, &shdr) == NULL ||
		    strcmp(elf_strptr(elf, shstrndx, shdr.sh_name), name) != 0)
			continue;
		d = elf_getdata(scn, NULL);
		cr_assert_not_null(d);
		copy = malloc(d->d_size);
		cr_assert_not_null(copy);
		memcpy(copy, d->d_buf, d->d_size);
		*len = d->d_size;
		*offset = shdr.sh_offset;
		break;
	}
	elf_end(elf);
	close(fd);
	cr_assert_not_null(copy, "%s has no %s", path, name);
	return copy;
}

/* Parses data[0..len) into a heap copy of exactly len bytes, so ASan sees
 * any read past the end; checks what a success returns. */
static int parse_exact(const uint8_t *data, size_t len)
{
	uint8_t *exact = malloc(len ? len : 1);
	struct pc_gopclntab_info info;
	struct pc_gofunc *f = NULL;
	char why[128];
	size_t n = 0;
	int err;

	cr_assert_not_null(exact);
	memcpy(exact, data, len);
	err = pc_gopclntab_parse(exact, len, 0x401000, &f, &n, &info, why, sizeof(why));
	if (err == 0) {
		for (size_t i = 0; i < n; i++) {
			const char *s = f[i].name;

			cr_assert(s >= (const char *)exact && s < (const char *)exact + len);
			cr_assert_not_null(memchr(s, '\0', (size_t)((const char *)exact + len - s)));
			cr_assert(i == 0 || f[i].entry > f[i - 1].entry);
		}
	} else {
		cr_assert(err == -EINVAL || err == -ENOTSUP, "err %d", err);
		cr_assert_gt(strlen(why), 0, "a refusal has a reason");
	}
	free(f);
	free(exact);
	return err;
}

Test(gopclntab, truncated_tables)
{
	char path[TEST_PATH_MAX];
	uint64_t off;
	size_t len, refused = 0, tries = 0;
	uint8_t *tab;

	go_fixture(path, "go_hot.stripped");
	tab = section_copy(path, ".gopclntab", &len, &off);
	cr_assert_eq(parse_exact(tab, len), 0, "the whole table parses");
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : len / 997 + 1) {
		refused += parse_exact(tab, cut) != 0;
		tries++;
	}
	cr_log_info("%zu truncations, %zu refused", tries, refused);
	/* the function table and the names lie past the first half */
	cr_assert_eq(parse_exact(tab, len / 2) != 0, 1);
	free(tab);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

Test(gopclntab, mutated_and_random_tables)
{
	char path[TEST_PATH_MAX];
	uint64_t off;
	size_t len, ok = 0;
	uint8_t *tab, *work;

	go_fixture(path, "go_hot.stripped");
	tab = section_copy(path, ".gopclntab", &len, &off);
	work = malloc(len);
	cr_assert_not_null(work);
	/* a few bytes changed, most often in the header and the function table */
	for (int round = 0; round < 600; round++) {
		uint64_t pcln = 0;

		memcpy(work, tab, len);
		memcpy(&pcln, tab + 8 + 7 * 8, 8);
		for (int k = 0, nk = 1 + (int)(rng() % 8); k < nk; k++) {
			uint64_t r = rng(), at;

			switch (r % 3) {
			case 0: at = 8 + (r >> 8) % 64; break;
			case 1: at = pcln + (r >> 8) % (len - pcln); break;
			default: at = (r >> 8) % len; break;
			}
			work[at] = (uint8_t)(rng() >> 24);
		}
		ok += parse_exact(work, len) == 0;
	}
	/* random bytes behind a valid header of each layout */
	for (int round = 0; round < 400; round++) {
		static const uint32_t magics[] = { 0xfffffffb, 0xfffffffa, 0xfffffff0, 0xfffffff1 };
		size_t n = 16 + rng() % 4096;

		for (size_t i = 0; i < n; i++)
			work[i] = (uint8_t)rng();
		memcpy(work, &magics[round % 4], 4);
		work[4] = work[5] = 0;
		work[6] = 1;
		work[7] = round & 4 ? 4 : 8;
		/* small counts and offsets now and then, to get past the header */
		if (round & 8) {
			memset(work + 8, 0, 8);
			work[8] = (uint8_t)(1 + rng() % 40);
			for (int f = 1; f < 8; f++) {
				memset(work + 8 + f * work[7], 0, work[7]);
				work[8 + f * work[7]] = (uint8_t)(rng() % 200);
			}
		}
		ok += parse_exact(work, n) == 0;
	}
	cr_log_info("%zu of 1000 hostile tables parsed within bounds", ok);
	free(work);
	free(tab);
}

/* A binary whose table is broken still loads; the table is refused with a
 * reason and no Go function is named. */
Test(gopclntab, broken_table_refused_on_load)
{
	char path[TEST_PATH_MAX], tmp[TEST_TMP_MAX], copy[TEST_PATH_MAX];
	struct pc_elf_module m;
	uint64_t off;
	size_t len;
	uint8_t *tab, huge[8] = { 0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0 };
	FILE *f;

	go_fixture(path, "go_hot.stripped");
	tab = section_copy(path, ".gopclntab", &len, &off);
	make_temp_dir(tmp);
	snprintf(copy, sizeof(copy), "%s/go_hot.broken", tmp);
	cr_assert_eq(copy_file(path, copy), 0);
	f = fopen(copy, "r+b");
	cr_assert_not_null(f);
	cr_assert_eq(fseek(f, (long)off + 8, SEEK_SET), 0); /* nfunc */
	cr_assert_eq(fwrite(huge, 1, 8, f), 8);
	fclose(f);
	load(&m, copy);
	cr_assert_eq(m.go_pclntab, -1);
	cr_assert(strstr(m.go_pclntab_note, "refused: function count") != NULL, "%s",
		  m.go_pclntab_note);
	cr_assert_null(find_symbol(&m, "main.hotLoop"));
	pc_elf_module_free(&m);
	remove_temp_dir(tmp);
	free(tab);
}

/* ---- the other layouts, built by hand -------------------------------- */

static void put(uint8_t *b, size_t off, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		b[off + i] = (uint8_t)(v >> (8 * i));
}

/* Three functions a, bb, ccc at 0x1000, 0x1040, 0x10a0, text ending at
 * 0x1100, in the layout of magic (pointer size ps): header, names, the
 * function table, then the _func records. Returns the table's length. */
static size_t synth_table(uint8_t *b, uint32_t magic, unsigned ps)
{
	static const uint64_t entries[] = { 0x1000, 0x1040, 0x10a0, 0x1100 };
	static const size_t local_name[] = { 0, 2, 5 };
	int rel = magic == 0xfffffff0 || magic == 0xfffffff1, v12 = magic == 0xfffffffb;
	unsigned slot = rel ? 4 : ps;
	size_t hdr, names, ftab, funcs;

	memset(b, 0, 4096);
	put(b, 0, magic, 4);
	b[6] = 1;
	b[7] = (uint8_t)ps;
	put(b, 8, 3, ps);
	if (v12) {
		/* 1.2: the function table follows nfunc; offsets count from 0 */
		ftab = 8 + ps;
		names = (ftab + 7 * slot + 7) & ~(size_t)7;
	} else {
		hdr = 8 + (rel ? 8 : 7) * ps;
		names = hdr;
		ftab = (names + 9 + 7) & ~(size_t)7;
		if (magic == 0xfffffffa) {
			put(b, 8 + 2 * ps, names, ps);
			put(b, 8 + 6 * ps, ftab, ps);
		} else {
			put(b, 8 + 2 * ps, 0x1000, ps);
			put(b, 8 + 3 * ps, names, ps);
			put(b, 8 + 7 * ps, ftab, ps);
		}
	}
	memcpy(b + names, "a\0bb\0ccc", 9);
	funcs = ((v12 ? names + 9 : ftab + 7 * slot) + 7) & ~(size_t)7;
	for (int i = 0; i < 4; i++) {
		uint64_t e = rel ? entries[i] - 0x1000 : entries[i];
		size_t rec = funcs + 16 * (size_t)i;

		put(b, ftab + 2 * (size_t)i * slot, e, slot);
		if (i == 3)
			break;
		put(b, ftab + (2 * (size_t)i + 1) * slot, v12 ? rec : rec - ftab, slot);
		put(b, rec, e, slot);
		put(b, rec + slot, v12 ? names + local_name[i] : local_name[i], 4);
	}
	return funcs + 48;
}

static void check_synth(uint32_t magic, unsigned ps, const char *version)
{
	static const char *const want[] = { "a", "bb", "ccc" };
	struct pc_gopclntab_info info;
	struct pc_gofunc *f;
	uint8_t buf[4096];
	size_t len = synth_table(buf, magic, ps), n;
	char why[128] = "";

	cr_assert_eq(pc_gopclntab_parse(buf, len, 0, &f, &n, &info, why, sizeof(why)), 0,
		     "%#x: %s", magic, why);
	cr_assert_str_eq(info.version, version);
	cr_assert_eq(n, 3);
	for (int i = 0; i < 3; i++)
		cr_assert_str_eq(f[i].name, want[i]);
	cr_assert_eq(f[0].entry, 0x1000);
	cr_assert_eq(f[1].entry, 0x1040);
	cr_assert_eq(f[2].size, 0x60);
	free(f);
	/* every truncation is refused or bounded */
	for (size_t cut = 0; cut < len; cut++)
		parse_exact(buf, cut);
}

Test(gopclntab, synthetic_layouts)
{
	check_synth(0xfffffffb, 8, "1.2");
	check_synth(0xfffffffb, 4, "1.2");
	check_synth(0xfffffffa, 8, "1.16");
	check_synth(0xfffffff0, 8, "1.18");
	check_synth(0xfffffff1, 8, "1.20");
	check_synth(0xfffffff1, 4, "1.20");
}

/* Section headers gone (e_shoff, e_shnum, e_shstrndx zeroed, as sstrip
 * does): the table is found by its header in a read-only load segment. */
Test(gopclntab, no_section_headers)
{
	char path[TEST_PATH_MAX], full[TEST_PATH_MAX], tmp[TEST_TMP_MAX], copy[TEST_PATH_MAX];
	struct pc_elf_module m;
	const struct pc_symbol *sym;
	uint64_t addr, size;
	Elf64_Ehdr eh;
	FILE *f;

	go_fixture(path, "go_hot.stripped");
	go_fixture(full, "go_hot.full");
	make_temp_dir(tmp);
	snprintf(copy, sizeof(copy), "%s/go_hot.noshdr", tmp);
	cr_assert_eq(copy_file(path, copy), 0);
	f = fopen(copy, "r+b");
	cr_assert_not_null(f);
	cr_assert_eq(fread(&eh, sizeof(eh), 1, f), 1);
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	cr_assert_eq(fseek(f, 0, SEEK_SET), 0);
	cr_assert_eq(fwrite(&eh, sizeof(eh), 1, f), 1);
	fclose(f);
	load(&m, copy);
	cr_assert_eq(m.go_pclntab, 1, "%s", m.go_pclntab_note);
	cr_assert_eq(nm_symbol(full, "main.hotLoop", &addr, &size), 0);
	sym = find_symbol(&m, "main.hotLoop");
	cr_assert_not_null(sym);
	cr_assert_eq(sym->addr, addr);
	pc_elf_module_free(&m);
	remove_temp_dir(tmp);
}

/* A stripped C program is not a Go binary: nothing read, nothing said. */
Test(gopclntab, stripped_c_program_untouched)
{
	char path[TEST_PATH_MAX];
	struct pc_elf_module m;

	fixture_path(path, "fixture_prog.stripped");
	load(&m, path);
	cr_assert_eq(m.go_pclntab, 0);
	cr_assert_str_eq(m.go_pclntab_note, "");
	pc_elf_module_free(&m);
}
