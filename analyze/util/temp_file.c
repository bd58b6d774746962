/* temp_file.c - an unlinked temporary file (see temp_file.h). */
#include <errno.h>
#include <stdlib.h>
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
