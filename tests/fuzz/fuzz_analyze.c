/* fuzz_analyze.c - running perfcap-analyze's main() in-process for the
 * fuzz targets that drive its commands (see fuzz_common.h). */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_common.h"

int perfcap_analyze_main(int argc, char **argv);

void fuzz_quiet_stdout(void)
{
	static int done;
	int fd;

	if (done++)
		return;
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

int fuzz_analyze(const char *arg, ...)
{
	char *argv[16] = { (char *)"perfcap-analyze" };
	int argc = 1;
	va_list ap;

	va_start(ap, arg);
	for (const char *a = arg; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	fuzz_quiet_stdout();
	return perfcap_analyze_main(argc, argv);
}

static char scratch[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The scratch directory goes when the fuzzer exits (libFuzzer ends its
 * -max_total_time with exit()): each run left one behind in /tmp. */
static void remove_scratch(void)
{
	if (scratch[0])
		nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_scratch_dir(void)
{
	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/perfcap-fuzz.XXXXXX");
		if (!mkdtemp(scratch))
			abort();
		atexit(remove_scratch);
	}
	return scratch;
}
