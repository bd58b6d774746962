/* privileges.c - giving up capabilities after attach, and the command's
 * identity under sudo. No libcap: capget/capset and prctl directly.
 *
 * Kept after attach (only those the recorder had), and why:
 *   CAP_SYS_PTRACE         read /proc/PID/maps and /proc/PID/exe of other
 *                          users' processes (ptrace read access check)
 *   CAP_DAC_READ_SEARCH    open their mapped binaries for build-ids and
 *                          symbols when file permissions would not allow
 *   CAP_CHECKPOINT_RESTORE open files through /proc/PID/map_files (deleted
 *                          or replaced binaries, other mount namespaces)
 *   CAP_KILL               stop the recorded command at -d or Ctrl-C when
 *                          it runs as the invoking user
 *   CAP_BPF                only on kernels before 6.5, where every bpf()
 *                          command (map reads for loss counters, target
 *                          updates) needs it
 *   CAP_SETUID, CAP_SETGID, CAP_CHOWN
 *                          only with --jvm-perfmap: hand the attach trigger
 *                          file to a JVM's user and talk to its attach
 *                          socket as that user (consume/jvm_perfmap.c)
 *   CAP_SYS_ADMIN, CAP_PERFMON, CAP_BPF
 *                          only with -e gc: a traced process that execs a
 *                          runtime gets its GC probes then;
 *                          creating a uprobe perf event needs them (6.18
 *                          refuses it to CAP_PERFMON without CAP_SYS_ADMIN)
 * Everything else goes, from the bounding set too; no_new_privs is set.
 * The recorder keeps its uid (0): the open file descriptors (output file,
 * perf events, BPF links and maps) carry the rest of the recording.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/capability.h>

#include "privileges.h"
#include "util/util.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#define CAP_WORDS 2

struct kept_cap {
	int cap;
	const char *name;
	unsigned only_for;        /* PRIV_KEEP_* that must be asked for, 0: always */
};

static const struct kept_cap kept_caps[] = {
	{ CAP_SYS_PTRACE, "cap_sys_ptrace", 0 },
	{ CAP_DAC_READ_SEARCH, "cap_dac_read_search", 0 },
	{ CAP_CHECKPOINT_RESTORE, "cap_checkpoint_restore", 0 },
	{ CAP_KILL, "cap_kill", 0 },
	{ CAP_BPF, "cap_bpf", 0 },
	{ CAP_PERFMON, "cap_perfmon", PRIV_KEEP_PROBE_ATTACH },
	{ CAP_SYS_ADMIN, "cap_sys_admin", PRIV_KEEP_PROBE_ATTACH },
	{ CAP_SETUID, "cap_setuid", PRIV_KEEP_JVM_ATTACH },
	{ CAP_SETGID, "cap_setgid", PRIV_KEEP_JVM_ATTACH },
	{ CAP_CHOWN, "cap_chown", PRIV_KEEP_JVM_ATTACH },
};


/* ---- the command's identity ---------------------------------------------- */

static bool parse_id(const char *text, unsigned long *out)
{
	char *end;

	if (!text || !*text)
		return false;
	errno = 0;
	*out = strtoul(text, &end, 10);
	return !errno && !*end && *out < 0xffffffffUL;
}

int privileges_invoking_user(struct run_identity *identity)
{
	const char *uid_text = getenv("SUDO_UID"), *gid_text = getenv("SUDO_GID");
	unsigned long uid, gid;
	struct passwd *pw;

	memset(identity, 0, sizeof(*identity));
	if (geteuid() != 0 || !uid_text)
		return 0;
	if (!parse_id(uid_text, &uid) || !parse_id(gid_text, &gid))
		return -EINVAL;
	if (uid == 0)
		return 0;
	identity->change = true;
	identity->uid = (uid_t)uid;
	identity->gid = (gid_t)gid;
	pw = getpwuid(identity->uid);
	if (pw)
		snprintf(identity->user, sizeof(identity->user), "%s", pw->pw_name);
	return 0;
}

int privileges_become(const struct run_identity *identity)
{
	if (!identity->change)
		return 0;
	if (identity->user[0] ? initgroups(identity->user, identity->gid)
			      : setgroups(0, NULL))
		return -errno;
	if (setresgid(identity->gid, identity->gid, identity->gid) ||
	    setresuid(identity->uid, identity->uid, identity->uid))
		return -errno;
	return 0;
}

/* ---- capabilities ----------------------------------------------------------- */

static bool kernel_before(int major, int minor)
{
	struct utsname uts;
	int kmajor = 0, kminor = 0;

	if (uname(&uts) || sscanf(uts.release, "%d.%d", &kmajor, &kminor) != 2)
		return false;
	return kmajor < major || (kmajor == major && kminor < minor);
}

static bool wanted(int cap, unsigned extra)
{
	if (cap == CAP_BPF)
		return (extra & PRIV_KEEP_PROBE_ATTACH) || kernel_before(6, 5);
	return true;
}

static int last_cap(void)
{
	char line[32];

	if (read_first_line("/proc/sys/kernel/cap_last_cap", line, sizeof(line)))
		return CAP_CHECKPOINT_RESTORE;
	return atoi(line);
}

static bool is_kept(int cap, unsigned extra)
{
	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]); i++) {
		if (kept_caps[i].cap == cap)
			return wanted(cap, extra) &&
			       (!kept_caps[i].only_for || (kept_caps[i].only_for & extra));
	}
	return false;
}

/* Drops every other capability from the bounding set (needs CAP_SETPCAP,
 * so before capset). Not having CAP_SETPCAP is not an error. */
static void shrink_bounding_set(unsigned extra)
{
	int last = last_cap();

	for (int cap = 0; cap <= last; cap++) {
		if (!is_kept(cap, extra) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno == EPERM)
			return;
	}
}

static void describe_kept(const struct __user_cap_data_struct data[CAP_WORDS], char *buf,
			  size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(kept_caps) / sizeof(kept_caps[0]) && used < len; i++) {
		int cap = kept_caps[i].cap;

		if (data[cap / 32].effective & (1u << (cap % 32)))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
						 kept_caps[i].name);
	}
}

int privileges_drop(char *kept, size_t len, unsigned extra)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[CAP_WORDS];
	uint32_t keep[CAP_WORDS] = { 0, 0 };

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &header, data))
		return -errno;
	for (int cap = 0; cap < 32 * CAP_WORDS; cap++) {
		if (is_kept(cap, extra))
			keep[cap / 32] |= 1u << (cap % 32);
	}
	shrink_bounding_set(extra);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	for (int w = 0; w < CAP_WORDS; w++) {
		data[w].permitted &= keep[w];
		data[w].effective = data[w].permitted;
		data[w].inheritable = 0;
	}
	if (syscall(SYS_capset, &header, data))
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	describe_kept(data, kept, len);
	return 0;
}
