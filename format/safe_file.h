/* safe_file.h - opening files whose paths someone else may control:
 * outputs that never follow a symlink planted at their path and are
 * always mode 0600, inputs that must be regular files (a FIFO or a device
 * named by a capture or typed by mistake must not block or be read), and
 * recorded paths confined to a directory. Used by both programs. */
#ifndef PERFCAP_SAFE_FILE_H
#define PERFCAP_SAFE_FILE_H

#include <stdio.h>

/* Creates path for writing with mode 0600, O_EXCL|O_NOFOLLOW: a symlink
 * (even a dangling one) at path is never followed. With force, an
 * existing regular file or symlink at path is unlinked first (the link,
 * not its target); anything else (directory, FIFO, device) is refused
 * with -EINVAL. Returns an fd or -errno (-EEXIST without force). */
int pc_create_output(const char *path, int force);

/* Opens path read-only without blocking on a FIFO or device, requires a
 * regular file (else -EINVAL), then clears O_NONBLOCK. nofollow adds
 * O_NOFOLLOW (a symlink as the last component gives -ELOOP). Returns an
 * fd or -errno. */
int pc_open_regular(const char *path, int nofollow);

/* pc_open_regular(path, 0) as a stdio stream "rb"; NULL with errno set. */
FILE *pc_fopen_regular(const char *path);

/* As pc_open_regular for a path recorded in a capture, resolved inside
 * root as if root were "/": ".." cannot climb above it and symlinks are
 * resolved within it (openat2 RESOLVE_IN_ROOT; lexically normalised with
 * O_NOFOLLOW where openat2 is missing). root NULL or "/" means the real
 * root. Returns an fd or -errno. */
int pc_open_confined(const char *root, const char *path);

/* Normalises path lexically in place: duplicate slashes and "." removed,
 * ".." removed together with the component before it, never above the
 * start (so "/a/../../etc" becomes "/etc", "../x" becomes "x"). */
void pc_path_normalise(char *path);

/* Why an output renamed over path must not be written there: NULL when
 * path does not exist or is a regular file or a symlink (replaced, never
 * followed), else a reason: a device such as /dev/null, a FIFO, a socket
 * or a directory is never replaced by a rename (as root that would swap
 * /dev/null for a regular file). */
const char *pc_output_refusal(const char *path);

/* Creates a new empty file "<path>.tmp-XXXXXX" (mode 0600, O_EXCL) in
 * path's directory for an output to be renamed over path when complete.
 * Sets *tmp (malloc'd name) and returns its fd, or -errno (-EEXIST when
 * pc_output_refusal() refuses path). */
int pc_create_temp_beside(const char *path, char **tmp);

#endif /* PERFCAP_SAFE_FILE_H */
