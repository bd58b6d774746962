/* fuzz_import.c - libFuzzer target: the whole import path (reader,
 * loader, symbolizer on the embedded symbols, correlation, SQLite) as
 * `perfcap-analyze import -f --no-local-files FILE -o DB`, then `info`. */
#include <stdio.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], db[128];
	fuzz_memfile(0, data, size, path);

	snprintf(db, sizeof(db), "%s/import.db", fuzz_scratch_dir());
	fuzz_analyze("import", "-f", "--no-local-files", path, "-o", db, NULL);
	fuzz_analyze("info", path, NULL);
	return 0;
}
