/* fuzz_common.c - helpers of the fuzz targets (see fuzz_common.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int fuzz_memfile(int slot, const uint8_t *data, size_t size, char path[64])
{
	static int fds[2] = { -1, -1 };
	int fd;

	if (fds[slot] < 0)
		fds[slot] = memfd_create("fuzz-input", MFD_CLOEXEC);
	fd = fds[slot];
	if (fd < 0 || ftruncate(fd, 0) < 0) {
		perror("memfd");
		abort();
	}
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);
		if (n <= 0)
			abort();
		off += (size_t)n;
	}
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}
