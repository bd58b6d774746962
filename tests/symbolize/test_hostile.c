/* test_hostile.c - malformed PC_REC_MODULE records: every inconsistency is
 * rejected with -EINVAL and nothing is read outside the record (run under
 * ASan: each record lives in a buffer of exactly its size). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_module.h"
#include "symbolize/symbolize.h"
#include "synthetic.h"

/* A valid record of the synthetic module, in a buffer of its exact size. */
static struct pc_rec_module *valid_record(void)
{
	struct pc_elf_module m;
	struct pc_buf b = { 0 };
	void *copy;

	synthetic_elf_module(&m);
	cr_assert_eq(pc_buf_add_module(&b, &m, NULL, 0), 0);
	copy = malloc(b.len);
	memcpy(copy, b.data, b.len);
	pc_buf_free(&b);
	return copy;
}

static int parse(const void *rec)
{
	struct pc_elf_module m;
	int err = pc_elf_module_from_rec(&m, rec);

	pc_elf_module_free(&m);
	return err;
}

/* Byte offsets in the record body of the synthetic module. */
#define SYMS_AT    (sizeof(struct pc_rec_module) + 2 * sizeof(struct pc_segment))
#define PATH_AT    (SYMS_AT + 3 * sizeof(struct pc_symbol))
#define STRTAB_AT  (PATH_AT + sizeof("/usr/bin/synthetic") - 1)

static struct pc_symbol *record_symbol(struct pc_rec_module *r, int i)
{
	return (struct pc_symbol *)((uint8_t *)r + SYMS_AT) + i;
}

Test(hostile, valid_record_parses)
{
	struct pc_rec_module *r = valid_record();

	cr_assert_eq(parse(r), 0);
	free(r);
}

Test(hostile, header_fields)
{
	struct pc_rec_module *r = valid_record(), saved = *r;

	r->h.type = PC_REC_MAP;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->kind = PC_MODULE_PERFMAP + 1;   /* unknown kind */
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->build_id_len = PC_BUILD_ID_MAX + 1;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->nsyms += 1;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->nsegs = UINT32_MAX;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->path_len = UINT32_MAX;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	r->strtab_len = r->h.size;
	cr_assert_eq(parse(r), -EINVAL);
	*r = saved;
	cr_assert_eq(parse(r), 0);
	cr_assert_eq(parse(NULL), -EINVAL);
	free(r);
}

Test(hostile, shorter_than_its_header)
{
	struct pc_rec *h = malloc(sizeof(*h));

	h->type = PC_REC_MODULE;
	h->flags = 0;
	h->size = sizeof(*h);
	cr_assert_eq(parse(h), -EINVAL);
	free(h);
}

Test(hostile, truncated_record)
{
	struct pc_rec_module *r = valid_record();
	uint32_t size;

	for (size = sizeof(*r); size < STRTAB_AT + sizeof("alpha\0beta\0gamma");
	     size += 8) {
		struct pc_rec_module *cut = malloc(size);

		memcpy(cut, r, size);
		cut->h.size = size;
		cr_assert_eq(parse(cut), -EINVAL, "size %u", size);
		free(cut);
	}
	free(r);
}

Test(hostile, symbol_table_contents)
{
	struct pc_rec_module *r = valid_record();

	record_symbol(r, 2)->name_off = 1000;
	cr_assert_eq(parse(r), -EINVAL, "name outside the string table");
	free(r);

	r = valid_record();
	record_symbol(r, 0)->addr = 0x9000;
	cr_assert_eq(parse(r), -EINVAL, "unsorted");
	free(r);

	r = valid_record();
	((uint8_t *)r)[STRTAB_AT + r->strtab_len - 1] = 'x';
	cr_assert_eq(parse(r), -EINVAL, "unterminated string table");
	free(r);
}

/* Random corruption: parsing either fails or yields a module whose every
 * lookup and name stays inside its own memory. */
Test(hostile, random_corruption)
{
	struct pc_rec_module *r = valid_record();
	uint32_t size = r->h.size;
	int round, k;

	srand(12345);
	for (round = 0; round < 5000; round++) {
		uint8_t *copy = malloc(size);
		struct pc_elf_module m;

		memcpy(copy, r, size);
		for (k = 0; k < 1 + rand() % 4; k++)
			copy[8 + rand() % (size - 8)] ^= (uint8_t)(1 + rand() % 255);
		if (pc_elf_module_from_rec(&m, (struct pc_rec *)copy) == 0) {
			for (k = 0; k < 16; k++) {
				uint64_t addr = 0x1000 + (uint64_t)(rand() % 0x400);
				const struct pc_symbol *s = pc_elf_module_lookup(&m, addr);

				if (s != NULL)
					cr_assert_lt(strlen(pc_elf_symbol_name(&m, s)),
						     m.strtab_len);
			}
			pc_elf_module_free(&m);
		}
		free(copy);
	}
	free(r);
}

Test(hostile, symbolizer_counts_bad_modules)
{
	struct pc_rec_module *r = valid_record();
	struct symbolizer *s = symbolizer_new(NULL);
	struct symbolizer_stats st;

	r->nsyms = 1000;
	cr_assert_eq(symbolizer_add_module(s, &r->h), -EINVAL);
	symbolizer_get_stats(s, &st);
	cr_assert_eq(st.bad_modules, 1);
	symbolizer_free(s);
	free(r);
}
