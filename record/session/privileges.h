/* privileges.h - what the recorder gives up once it no longer needs it:
 * after every source is attached and the output file is open, all
 * capabilities but the few the rest of the recording uses; and the
 * identity the recorded command runs with under sudo. */
#ifndef RECORD_PRIVILEGES_H
#define RECORD_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Who the command runs as: the invoking user under sudo. */
struct run_identity {
	bool  change;            /* false: run as the recorder runs */
	uid_t uid;
	gid_t gid;
	char  user[64];          /* for the supplementary groups */
};

/* From SUDO_UID / SUDO_GID when the recorder runs as root under sudo.
 * Returns 0 (identity->change tells), or -EINVAL for unusable values. */
int privileges_invoking_user(struct run_identity *identity);

/* In the command's child before exec: takes on identity's groups, gid and
 * uid. 0 or -errno. */
int privileges_become(const struct run_identity *identity);

/* Capabilities kept only when asked for (privileges.c says why). */
#define PRIV_KEEP_JVM_ATTACH   0x1  /* --jvm-perfmap */
#define PRIV_KEEP_PROBE_ATTACH 0x2  /* -e gc: uprobes attached at a later exec */

/* Keeps only the capabilities listed in privileges.c (in all three sets,
 * and in the bounding set; those with a PRIV_KEEP_* flag only when extra
 * has it), clears the ambient set and sets no_new_privs. Affects the
 * calling thread: call it before starting other threads. Writes the names
 * kept into kept ("cap_sys_ptrace,..."). 0 or -errno. */
int privileges_drop(char *kept, size_t len, unsigned extra);

#endif /* RECORD_PRIVILEGES_H */
