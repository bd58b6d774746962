/* fuzz_gopclntab.c - libFuzzer target: the Go pclntab parser
 * (common/gopclntab.c) on hostile tables, as a stripped Go binary the
 * recorder opens can carry them. Input layout: u64 text start (the value a
 * relocation would give; missing bytes are 0), then the table. The parser
 * must refuse or return functions whose names lie inside the table, with
 * entries increasing; the table is copied to an exact-size buffer so any
 * read past its end is a sanitizer report. */
#include <stdlib.h>
#include <string.h>

#include "common/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	}
	free(f);
	free(tab);
	return 0;
}
