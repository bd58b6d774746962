/* jvm_perfmap.c - HotSpot's attach protocol, just enough to run
 * Compiler.perfmap (see jvm_perfmap.h). Every step is bounded in time: the
 * socket is waited for 5 s, the child that talks to the JVM is given 10 s
 * and killed past them.
 *
 * The JVM's /tmp belongs to the traced process, which may be hostile (a
 * container's root): a `tmp` or `.java_pid` that is a symlink would make
 * the recorder create its trigger file, or connect, somewhere on the host.
 * So /proc/PID/root/tmp is opened once without following a symlink, the
 * trigger is created and removed relative to that directory, and the
 * socket is opened O_PATH without following one, checked to be a socket
 * of the JVM's user, and connected to through /proc/self/fd. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jvm_perfmap.h"
#include "perfmap.h"
#include "util/util.h"

#define SOCKET_WAIT_MS 5000
#define CHILD_WAIT_MS  10000
#define STEP_MS        50

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The JVM's /tmp as a directory fd, not through a symlink. */
static int open_tmp(uint32_t pid, char *why, size_t len)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/root/tmp", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		snprintf(why, len, "%s: %s", path,
			 errno == ELOOP || errno == ENOTDIR ? "not a directory (a symlink?)" :
			 strerror(errno));
	return fd;
}

/* The attach socket as an O_PATH fd: a socket (not a symlink) of the
 * JVM's user. -1 when there is none (yet). */
static int open_socket(int tmp, const char *name, const struct stat *owner)
{
	struct stat st;
	int fd = openat(tmp, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != owner->st_uid) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Makes the JVM open its attach socket: trigger file, SIGQUIT, wait.
 * Returns the socket's O_PATH fd, or -1 with why. */
static int start_listener(uint32_t pid, int tmp, const char *trigger, const char *name,
			  const struct stat *owner, char *why, size_t len)
{
	int fd, sock = -1;

	fd = openat(tmp, trigger, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, len, "cannot create %s in its /tmp: %s", trigger, strerror(errno));
		return -1;
	}
	if (fchown(fd, owner->st_uid, owner->st_gid) != 0) {
		snprintf(why, len, "cannot hand %s to uid %u: %s", trigger,
			 (unsigned)owner->st_uid, strerror(errno));
		close(fd);
		unlinkat(tmp, trigger, 0);
		return -1;
	}
	close(fd);
	if (kill((pid_t)pid, SIGQUIT) != 0) {
		snprintf(why, len, "SIGQUIT: %s", strerror(errno));
	} else {
		for (int waited = 0; waited < SOCKET_WAIT_MS && sock < 0; waited += STEP_MS) {
			sleep_ms(STEP_MS);
			sock = open_socket(tmp, name, owner);
		}
		if (sock < 0)
			snprintf(why, len, "no attach socket after %d s (attach disabled?)",
				 SOCKET_WAIT_MS / 1000);
	}
	unlinkat(tmp, trigger, 0);
	return sock;
}

/* In the child: the JVM's credentials, the request, the reply's status.
 * Exit status 0: the command ran; 2: it failed; 3: no connection. */
static void talk(const struct sockaddr_un *addr, const struct stat *owner)
{
	static const char request[] = "1\0jcmd\0Compiler.perfmap\0\0\0";
	struct timeval tv = { CHILD_WAIT_MS / 1000, 0 };
	char reply[64] = "";
	ssize_t n;
	int fd;

	/* only system calls from here: the recorder has other threads */
	if (setgroups(0, NULL) != 0 || setgid(owner->st_gid) != 0 || setuid(owner->st_uid) != 0)
		_exit(3);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0)
		_exit(3);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, request, sizeof(request) - 1) != (ssize_t)(sizeof(request) - 1))
		_exit(3);
	n = read(fd, reply, sizeof(reply) - 1);
	_exit(n > 0 && reply[0] == '0' && (n == 1 || reply[1] == '\n') ? 0 : 2);
}

/* Runs talk() in a child, bounded in time. */
static int run_child(int sock, const struct stat *owner, char *why, size_t len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int status = 0;
	pid_t child;

	/* the socket itself, whatever its name now points to */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", sock);
	child = fork();
	if (child < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		return -1;
	}
	if (child == 0)
		talk(&addr, owner);
	for (int waited = 0; waited < CHILD_WAIT_MS; waited += STEP_MS) {
		pid_t r = waitpid(child, &status, WNOHANG);

		if (r == child) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				return 0;
			snprintf(why, len, "%s", WIFEXITED(status) && WEXITSTATUS(status) == 2 ?
				 "the JVM refused Compiler.perfmap (JDK before 17?)" :
				 "cannot connect to the attach socket as the JVM's user");
			return -1;
		}
		sleep_ms(STEP_MS);
	}
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	snprintf(why, len, "no reply within %d s", CHILD_WAIT_MS / 1000);
	return -1;
}

int jvm_perfmap_request(uint32_t pid, char *why, size_t len)
{
	uint32_t nspid = perfmap_namespace_pid(pid);
	char proc[32], name[32], trigger[32];
	struct stat owner;
	int tmp, sock, rc;

	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	if (stat(proc, &owner) != 0) {
		snprintf(why, len, "%s: %s", proc, strerror(errno));
		return -1;
	}
	tmp = open_tmp(pid, why, len);
	if (tmp < 0)
		return -1;
	snprintf(name, sizeof(name), ".java_pid%u", nspid);
	snprintf(trigger, sizeof(trigger), ".attach_pid%u", nspid);
	sock = open_socket(tmp, name, &owner);
	if (sock < 0)
		sock = start_listener(pid, tmp, trigger, name, &owner, why, len);
	close(tmp);
	if (sock < 0)
		return -1;
	rc = run_child(sock, &owner, why, len);
	close(sock);
	return rc;
}

/* Whether an address space maps HotSpot's libjvm.so. */
static bool maps_libjvm(const struct process_table *pt, const struct address_space *as)
{
	for (uint32_t i = 0; i < as->nmaps; i++) {
		uint32_t m = as->maps[i].module;
		const char *path, *base;

		if (m == MODULE_NONE || m >= pt->modules.n)
			continue;
		path = pt->modules.mods[m].path;
		base = strrchr(path, '/');
		if (base && strcmp(base, "/libjvm.so") == 0)
			return true;
	}
	return false;
}

void jvm_perfmaps_request(const struct process_table *pt, struct jvm_perfmap_stats *st)
{
	for (uint32_t a = 0; a < pt->naspaces; a++) {
		const struct address_space *as = &pt->aspaces[a];
		char why[160];

		if (as->free || as->gone || as->retired_ns || kill((pid_t)as->pid, 0) != 0 ||
		    !maps_libjvm(pt, as))
			continue;
		st->asked++;
		if (jvm_perfmap_request(as->pid, why, sizeof(why)) == 0) {
			st->written++;
			verbose_line("JVM %u wrote its perf map (Compiler.perfmap)", as->pid);
		} else {
			st->failed++;
			warning_line("JVM %u did not write its perf map: %s", as->pid, why);
		}
	}
}

int jvm_perfmap_stats_kv(struct chunk_buffer *kv, const struct jvm_perfmap_stats *st)
{
	int err = 0;

	if (!st->asked)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "jit.jvm_perfmap.asked", st->asked);
	err |= chunk_buffer_add_kv_u64(kv, "jit.jvm_perfmap.written", st->written);
	err |= chunk_buffer_add_kv_u64(kv, "jit.jvm_perfmap.failed", st->failed);
	return err ? -ENOMEM : 0;
}
