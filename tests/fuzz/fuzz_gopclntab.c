/* fuzz_gopclntab.c - libFuzzer target: the Go pclntab parser
 * (common/gopclntab.c) on hostile tables, as a stripped Go binary the
 * recorder opens can carry them. Input layout: u64 text start (the value a
 * relocation would give; missing bytes are 0), then the table. The parser
 * must refuse or return functions whose names lie inside the table, with
 * entries increasing; the table is copied to an exact-size buffer so any
 * read past its end is a sanitizer report. The functions' SP-delta tables
 * then become call frame information (common/gopclntab_cfi.c), every
 * function a candidate, as the recorder does for a stripped Go binary. */
#include <stdlib.h>
#include <string.h>

#include "common/gopclntab.h"
#include "common/gopclntab_cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cfi(uint8_t *tab, size_t len, struct pc_gofunc *f, size_t n)
{
	struct pc_go_pclntab g = { .data = tab, .len = len, .funcs = f, .nfuncs = n, .quantum = 1 };
	struct pc_unwind_table t = { 0 };
	uint64_t *cand = malloc((n ? n : 1) * sizeof(*cand));
	uint32_t nfdes;

	if (!cand)
		return;
	for (size_t i = 0; i < n; i++)
		cand[i] = f[i].entry;
	if (pc_unwind_table_from_go(&t, &g, cand, n, &nfdes) == 0)
		pc_unwind_table_free(&t);
	free(cand);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t text = 0;
	struct pc_gofunc *f = NULL;
	size_t n = 0, len;
	uint8_t *tab;
	char why[128];

	memcpy(&text, data, size < 8 ? size : 8);
	len = size > 8 ? size - 8 : 0;
	tab = malloc(len ? len : 1);
	if (tab == NULL)
		return 0;
	memcpy(tab, data + (size > 8 ? 8 : size), len);
	if (pc_gopclntab_parse(tab, len, text, &f, &n, NULL, why, sizeof(why)) == 0) {
		for (size_t i = 0; i < n; i++) {
			const uint8_t *s = (const uint8_t *)f[i].name;

			if (s < tab || s >= tab + len || !memchr(s, 0, (size_t)(tab + len - s)) ||
			    (i > 0 && f[i].entry <= f[i - 1].entry))
				abort();
		}
		cfi(tab, len, f, n);
	}
	free(f);
	free(tab);
	return 0;
}
