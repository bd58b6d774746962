/* fuzz_diff.c - libFuzzer target: diff of two inputs. The bytes are split
 * at the first "\n--PERFCAP-FUZZ-SPLIT--\n" (or in half): BASE before,
 * NEW after; the first byte picks text or --json. */
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"

static const char split[] = "\n--PERFCAP-FUZZ-SPLIT--\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char base[64], new[64];
	const uint8_t *at;
	size_t n;
	int json;

	if (size < 1)
		return 0;
	json = data[0] & 1;
	data++;
	size--;
	at = memmem(data, size, split, sizeof(split) - 1);
	n = at ? (size_t)(at - data) : size / 2;
	fuzz_memfile(0, data, n, base);
	if (at)
		n += sizeof(split) - 1;
	fuzz_memfile(1, data + n, size - n, new);
	if (json)
		fuzz_analyze("diff", "--json", "--no-local-files", base, new, NULL);
	else
		fuzz_analyze("diff", "--no-local-files", base, new, NULL);
	return 0;
}
