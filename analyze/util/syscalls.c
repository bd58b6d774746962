/* syscalls.c - x86_64 system call facts (see syscalls.h). Names come from
 * the generated common/syscall_table.c; the facts below are keyed by name so they
 * never repeat a number. */
#include <string.h>

#include "common/syscall_table.h"
#include "syscalls.h"

#define SYSCALL_NR_LIMIT 1024

struct syscall_fact {
	const char *name;
	uint8_t family;
	uint8_t flags;
};

#define RD (SC_F_FD | SC_F_READ)
#define WR (SC_F_FD | SC_F_WRITE)

static const struct syscall_fact facts[] = {
	{ "read", SC_RW, RD | SC_F_COUNT },      { "write", SC_RW, WR | SC_F_COUNT },
	{ "pread64", SC_RW, RD | SC_F_COUNT },   { "pwrite64", SC_RW, WR | SC_F_COUNT },
	{ "readv", SC_RW, RD },                  { "writev", SC_RW, WR },
	{ "preadv", SC_RW, RD },                 { "pwritev", SC_RW, WR },
	{ "preadv2", SC_RW, RD },                { "pwritev2", SC_RW, WR },
	{ "sendfile", SC_RW, WR },               { "splice", SC_RW, SC_F_FD },
	{ "copy_file_range", SC_RW, SC_F_FD },   { "tee", SC_RW, SC_F_FD },
	{ "recvfrom", SC_NET, RD | SC_F_COUNT }, { "sendto", SC_NET, WR | SC_F_COUNT },
	{ "recvmsg", SC_NET, RD },               { "sendmsg", SC_NET, WR },
	{ "recvmmsg", SC_NET, SC_F_FD },         { "sendmmsg", SC_NET, SC_F_FD },
	{ "accept", SC_NET, SC_F_FD },           { "accept4", SC_NET, SC_F_FD },
	{ "connect", SC_NET, SC_F_FD },
	{ "futex", SC_FUTEX, 0 },                { "futex_waitv", SC_FUTEX, 0 },
	{ "poll", SC_POLL, 0 },                  { "ppoll", SC_POLL, 0 },
	{ "select", SC_POLL, 0 },                { "pselect6", SC_POLL, 0 },
	{ "epoll_wait", SC_POLL, SC_F_FD },      { "epoll_pwait", SC_POLL, SC_F_FD },
	{ "epoll_pwait2", SC_POLL, SC_F_FD },
	{ "nanosleep", SC_SLEEP, 0 },            { "clock_nanosleep", SC_SLEEP, 0 },
	{ "pause", SC_SLEEP, 0 },                { "rt_sigsuspend", SC_SLEEP, 0 },
	{ "fsync", SC_SYNC, SC_F_FD },           { "fdatasync", SC_SYNC, SC_F_FD },
	{ "syncfs", SC_SYNC, SC_F_FD },          { "sync_file_range", SC_SYNC, SC_F_FD },
	{ "sync", SC_SYNC, 0 },                  { "msync", SC_SYNC, 0 },
	{ "close", SC_OTHER, SC_F_FD | SC_F_CLOSE },
	{ "fstat", SC_OTHER, SC_F_FD },          { "lseek", SC_OTHER, SC_F_FD },
	{ "ioctl", SC_OTHER, SC_F_FD },          { "fcntl", SC_OTHER, SC_F_FD },
	{ "flock", SC_OTHER, SC_F_FD },          { "ftruncate", SC_OTHER, SC_F_FD },
	{ "fallocate", SC_OTHER, SC_F_FD },      { "fadvise64", SC_OTHER, SC_F_FD },
	{ "readahead", SC_OTHER, SC_F_FD },      { "getdents", SC_OTHER, SC_F_FD },
	{ "getdents64", SC_OTHER, SC_F_FD },     { "fchmod", SC_OTHER, SC_F_FD },
	{ "fchown", SC_OTHER, SC_F_FD },         { "fchdir", SC_OTHER, SC_F_FD },
	{ "fstatfs", SC_OTHER, SC_F_FD },        { "fgetxattr", SC_OTHER, SC_F_FD },
	{ "fsetxattr", SC_OTHER, SC_F_FD },      { "bind", SC_OTHER, SC_F_FD },
	{ "listen", SC_OTHER, SC_F_FD },         { "shutdown", SC_OTHER, SC_F_FD },
	{ "getsockname", SC_OTHER, SC_F_FD },    { "getpeername", SC_OTHER, SC_F_FD },
	{ "setsockopt", SC_OTHER, SC_F_FD },     { "getsockopt", SC_OTHER, SC_F_FD },
	{ "epoll_ctl", SC_OTHER, SC_F_FD },      { "dup", SC_OTHER, SC_F_FD },
	{ "dup2", SC_OTHER, SC_F_FD },           { "dup3", SC_OTHER, SC_F_FD },
	{ "timerfd_settime", SC_OTHER, SC_F_FD },{ "timerfd_gettime", SC_OTHER, SC_F_FD },
	{ "inotify_add_watch", SC_OTHER, SC_F_FD },
};

static struct syscall_info by_nr[SYSCALL_NR_LIMIT];
static int by_nr_ready;

static const struct syscall_fact *find_fact(const char *name)
{
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		if (strcmp(facts[i].name, name) == 0)
			return &facts[i];
	return NULL;
}

static void build_by_nr(void)
{
	for (unsigned nr = 0; nr < SYSCALL_NR_MAX; nr++) {
		const char *name = syscall_names[nr];
		const struct syscall_fact *f;

		if (!name)
			continue;
		f = find_fact(name);
		by_nr[nr].name = name;
		by_nr[nr].family = f ? f->family : SC_OTHER;
		by_nr[nr].flags = f ? f->flags : 0;
	}
	by_nr_ready = 1;
}

const struct syscall_info *syscall_info(uint32_t nr)
{
	static const struct syscall_info unknown = { 0 };

	if (!by_nr_ready)
		build_by_nr();
	return nr < SYSCALL_NR_LIMIT ? &by_nr[nr] : &unknown;
}

const char *syscall_family_name(enum syscall_family family)
{
	switch (family) {
	case SC_FUTEX: return "futex";
	case SC_POLL:  return "poll";
	case SC_SLEEP: return "sleep";
	case SC_SYNC:  return "sync";
	case SC_RW:    return "rw";
	case SC_NET:   return "net";
	default:       return NULL;
	}
}
