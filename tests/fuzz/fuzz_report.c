/* fuzz_report.c - libFuzzer target: report generation on a capture
 * imported into a temporary database. The first byte picks the output:
 * text, --json, --folded or --html (a page in a scratch directory); the
 * rest is the capture. */
#include <stdio.h>
#include <unistd.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], page[128];

	if (size < 1)
		return 0;
	fuzz_memfile(0, data + 1, size - 1, path);
	switch (data[0] & 3) {
	case 0:
		fuzz_analyze("report", "--no-local-files", path, NULL);
		break;
	case 1:
		fuzz_analyze("report", "--json", "--no-local-files", path, NULL);
		break;
	case 2:
		fuzz_analyze("report", "--folded", "--no-local-files", path, NULL);
		break;
	default:
		snprintf(page, sizeof(page), "%s/page.html", fuzz_scratch_dir());
		fuzz_analyze("report", "--html", page, "--no-local-files", path, NULL);
		break;
	}
	return 0;
}
