/* temp_file.c - unlinked temporary files and reading runs back from them
 * (see temp_file.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "temp_file.h"

FILE *temp_file_open(const char *prefix)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *file;
	int fd, saved;

	if (snprintf(path, sizeof(path), "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", prefix) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	unlink(path);
	file = fdopen(fd, "w+b");
	if (!file) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return file;
}

int temp_file_read(FILE *f, void *buf, size_t max, off_t *next, off_t end, size_t *got)
{
	size_t want = end - *next < (off_t)max ? (size_t)(end - *next) : max;
	ssize_t n;

	*got = 0;
	if (want == 0)
		return 0;
	errno = 0;
	n = pread(fileno(f), buf, want, *next);
	if (n != (ssize_t)want)
		return -1;
	*next += n;
	*got = want;
	return 0;
}

int temp_file_fail(const char *who, const char *what)
{
	fprintf(stderr, "perfcap-analyze: %s: %s: %s\n", who, what,
		errno ? strerror(errno) : "short read");
	return -1;
}

size_t temp_file_run_size(const char *name, size_t fallback)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return fallback;
	n = strtoull(v, &end, 10);
	return *end || !n ? fallback : (size_t)n;
}
