/* safe_file.c - hostile-path-safe opening of outputs and inputs (see
 * safe_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "safe_file.h"

#define CREATE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
#define CREATE_TRIES 8

/* Removes what is at path so that it can be created again: a regular file
 * or a symlink (never its target); anything else is refused. */
static int remove_old_output(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode))
		return S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int pc_create_output(const char *path, int force)
{
	for (int i = 0; i < CREATE_TRIES; i++) {
		int fd = open(path, CREATE_FLAGS, 0600);
		int err;

		if (fd >= 0)
			return fd;
		if (errno != EEXIST || !force)
			return -errno;
		err = remove_old_output(path);
		if (err)
			return err;
	}
	return -EEXIST; /* someone keeps re-creating it */
}

/* fd from open(O_NONBLOCK): kept if it is a regular file, blocking again. */
static int require_regular(int fd)
{
	struct stat sb;
	int flags, err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int pc_open_regular(const char *path, int nofollow)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

	return require_regular(open(path, flags | (nofollow ? O_NOFOLLOW : 0)));
}

FILE *pc_fopen_regular(const char *path)
{
	int fd = pc_open_regular(path, 0);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "rb");
	if (!f)
		close(fd);
	return f;
}

void pc_path_normalise(char *path)
{
	char *out = path, *in = path;
	int absolute = path[0] == '/';
	size_t base = absolute ? 1 : 0; /* never remove below this */

	out += base;
	while (*in) {
		char *end;
		size_t len;

		while (*in == '/')
			in++;
		end = strchrnul(in, '/');
		len = (size_t)(end - in);
		if (len == 0 || (len == 1 && in[0] == '.')) {
			in = end;
			continue;
		}
		if (len == 2 && in[0] == '.' && in[1] == '.') {
			while (out > path + base && out[-1] == '/')
				out--;
			while (out > path + base && out[-1] != '/')
				out--;
			in = end;
			continue;
		}
		memmove(out, in, len);
		out += len;
		if (*end == '/')
			*out++ = '/';
		in = end;
	}
	if (out > path + base && out[-1] == '/')
		out--;
	*out = '\0';
}

/* openat2 RESOLVE_IN_ROOT: the kernel keeps ".." and symlinks inside. */
static int open_in_root(int dirfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
}

/* Without openat2: the lexically normalised path, last component not
 * followed. */
static int open_normalised(const char *root, const char *rel)
{
	char *full;
	int fd;

	if (asprintf(&full, "%s/%s", root, rel) < 0)
		return -ENOMEM;
	fd = pc_open_regular(full, 1);
	free(full);
	return fd;
}

int pc_open_confined(const char *root, const char *path)
{
	char *rel = strdup(path);
	int dirfd, fd;

	if (!rel)
		return -ENOMEM;
	pc_path_normalise(rel);
	if (!root || !root[0])
		root = "/";
	dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		free(rel);
		return -errno;
	}
	fd = open_in_root(dirfd, rel[0] == '/' ? rel + 1 : rel);
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		fd = open_normalised(root, rel);
	else
		fd = require_regular(fd);
	close(dirfd);
	free(rel);
	return fd;
}

const char *pc_output_refusal(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return NULL;
	return S_ISDIR(st.st_mode) ? "is a directory" :
	       "exists and is not a regular file (a device, FIFO or socket is never replaced)";
}

int pc_create_temp_beside(const char *path, char **tmp)
{
	int fd;

	*tmp = NULL;
	if (pc_output_refusal(path))
		return -EEXIST;
	if (asprintf(tmp, "%s.tmp-XXXXXX", path) < 0) {
		*tmp = NULL;
		return -ENOMEM;
	}
	fd = mkostemp(*tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
	if (fd < 0) {
		int err = -errno;
		free(*tmp);
		*tmp = NULL;
		return err;
	}
	return fd;
}
