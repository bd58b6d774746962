/* cgroup.c - resolving --cgroup PATH to the cgroup v2 id and level.
 *
 * The id comes from the directory's file handle (for cgroupfs it is the
 * kernfs node id, the same number the kernel's cgroup->kn->id holds). The
 * level is the number of parent directories, still on the same cgroup2
 * mount, between PATH and the mount's root.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "cgroup.h"

#define CGROUP2_MAGIC 0x63677270

static bool is_cgroup2(const char *path, dev_t *dev)
{
	struct statfs fs;
	struct stat st;

	if (statfs(path, &fs) || fs.f_type != CGROUP2_MAGIC || stat(path, &st))
		return false;
	*dev = st.st_dev;
	return true;
}

static int cgroup_id_of(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} handle = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, path, &handle.fh, &mount_id, 0))
		return -errno;
	memcpy(id, handle.fh.f_handle, sizeof(*id));
	return 0;
}

/* Depth of dir below the root of its cgroup2 mount. */
static uint32_t depth_below_root(char *dir, dev_t dev)
{
	uint32_t level = 0;
	dev_t parent_dev;

	for (;;) {
		char *slash = strrchr(dir, '/');

		if (!slash || slash == dir)
			return level; /* "/" itself: cannot be a cgroup2 mount's child */
		*slash = '\0';
		if (!is_cgroup2(dir, &parent_dev) || parent_dev != dev)
			return level;
		level++;
	}
}

int cgroup_resolve(const char *path, uint64_t *id, uint32_t *level, char *why, size_t len)
{
	char real[PATH_MAX];
	struct stat st;
	dev_t dev;
	int err;

	if (!realpath(path, real) || stat(real, &st)) {
		err = -errno;
		snprintf(why, len, "cgroup '%s': %s", path, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode) || !is_cgroup2(real, &dev)) {
		snprintf(why, len, "'%s' is not a cgroup v2 directory (cgroup2 is usually "
			 "mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified)", path);
		return -EINVAL;
	}
	err = cgroup_id_of(real, id);
	if (err) {
		snprintf(why, len, "cannot read the id of cgroup '%s': %s", path, strerror(-err));
		return err;
	}
	*level = depth_below_root(real, dev);
	return 0;
}
