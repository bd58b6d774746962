/* fuzz_analyze.c - running perfcap-analyze's main() in-process for the
 * fuzz targets that drive its commands (see fuzz_common.h). */
#include <fcntl.h>
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

const char *fuzz_scratch_dir(void)
{
	static char dir[64];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/perfcap-fuzz.XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}
