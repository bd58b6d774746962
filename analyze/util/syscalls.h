/* syscalls.h - what perfcap-analyze knows about x86_64 system calls: their
 * names (common/syscall_table.c, generated from <asm/unistd_64.h>) and the few
 * facts the correlations use: which take a file descriptor as args[0],
 * which move bytes (and whether args[2] is the byte count), and which wait
 * family a call that blocks belongs to. */
#ifndef ANALYZE_SYSCALLS_H
#define ANALYZE_SYSCALLS_H

#include <stdint.h>

/* What a call waits for when it blocks. */
enum syscall_family {
	SC_OTHER = 0,
	SC_FUTEX,    /* futex, futex_waitv */
	SC_POLL,     /* poll, select, epoll_wait and their variants */
	SC_SLEEP,    /* nanosleep, clock_nanosleep, pause, rt_sigsuspend */
	SC_SYNC,     /* fsync, fdatasync, sync, syncfs, sync_file_range, msync */
	SC_RW,       /* read/write family on any fd */
	SC_NET,      /* socket calls: accept, connect, send*, recv* */
};

#define SC_F_FD    0x1   /* args[0] is a file descriptor */
#define SC_F_COUNT 0x2   /* args[2] is the byte count asked for */
#define SC_F_READ  0x4   /* moves bytes to the caller; ret >= 0 is bytes */
#define SC_F_WRITE 0x8   /* moves bytes from the caller; ret >= 0 is bytes */
#define SC_F_CLOSE 0x10  /* releases args[0] */

struct syscall_info {
	const char *name;         /* NULL for a number this table does not know */
	uint8_t family;           /* enum syscall_family */
	uint8_t flags;            /* SC_F_* */
};

/* Facts about syscall nr; never NULL (all zero for unknown numbers). */
const struct syscall_info *syscall_info(uint32_t nr);

/* "futex", "poll", "sleep", "sync", "rw", "net", or NULL for SC_OTHER. */
const char *syscall_family_name(enum syscall_family family);

#endif /* ANALYZE_SYSCALLS_H */
