/* syscall_sets.h - which system calls the one syscall BPF program
 * (bpf/syscall.bpf.c) emits, and for which source.
 *
 * Five sources share that program: syscall (its set is --syscalls, or the
 * default set below), and mux, net, lock and mem, whose sets are fixed.
 * The kernel table (struct perfcap_syscall_sel per number) is the union of
 * the sets of the selected sources; a number in several sets is emitted
 * once, owned by the first selected source in this order: mux, lock, net,
 * mem, syscall (the specific before the general), and it gets a user stack
 * when any set that holds it asks for one (lock: futex).
 *
 * Names are x86_64 names (common/syscall_table.c, generated from
 * <asm/unistd_64.h> by common/gen_syscall_table.sh); numbers 0-511 are accepted
 * too, for calls newer than that header.
 */
#ifndef RECORD_SYSCALL_SETS_H
#define RECORD_SYSCALL_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/syscall_table.h"
#include "perfcap_bpf.h"

/* The syscall source's set when --syscalls is not given. */
#define SYSCALL_DEFAULT_SET \
	"read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2," \
	"sendto,recvfrom,sendmsg,recvmsg,sendmmsg,recvmmsg,sendfile," \
	"accept,accept4,connect,close,shutdown,futex,futex_waitv," \
	"poll,ppoll,select,pselect6,epoll_wait,epoll_pwait,epoll_pwait2," \
	"nanosleep,clock_nanosleep,fsync,fdatasync,openat,openat2"

_Static_assert(SYSCALL_NR_MAX == PERFCAP_SYSCALL_NR_MAX,
	       "common/syscall_table.h numbers the calls the kernel table has");

struct syscall_set {
	uint64_t bits[PERFCAP_SYSCALL_NR_MAX / 64];
};

/* The fixed set of a source that shares the syscall program. */
struct syscall_source_set {
	const char *source;     /* registry name (-e) */
	const char *members;    /* comma-separated names */
	uint8_t flags;          /* PERFCAP_SYSCALL_F_* for every member */
};

/* "read", or "sys_455" for a number the table does not name. */
const char *syscall_name(uint32_t nr, char *buf, size_t len);

/* The number of a name or of a decimal number 0-511; -1 if neither. */
int syscall_number(const char *name_or_number);

bool syscall_set_has(const struct syscall_set *s, uint32_t nr);
void syscall_set_add(struct syscall_set *s, uint32_t nr);

/* Parses "read,write,42" into out. On an unknown or empty name fills why
 * with one line and returns -EINVAL. */
int syscall_set_parse(const char *list, struct syscall_set *out, char *why, size_t len);

/* Members' names, comma-separated, in number order: a malloc'd string, or
 * NULL when out of memory. */
char *syscall_set_format(const struct syscall_set *s);

/* The set of source `name` (the fixed ones; "syscall" gets user_set).
 * Returns false for a source that contributes no set. */
bool syscall_set_of(const char *name, const struct syscall_set *user_set,
		    struct syscall_set *out);

/* Fills sel[] (the BPF program's syscall_set) from the selected sources
 * (by id, as in struct source_env). */
/* Whether any selected source records raw SYSCALL records (syscall, or a
 * source sharing its program): agg then leaves slow calls to them. */
bool syscall_sets_wanted(const bool selected[PERFCAP_SRC_MAX]);

void syscall_sets_build(const bool selected[PERFCAP_SRC_MAX], const struct syscall_set *user_set,
			struct perfcap_syscall_sel sel[PERFCAP_SYSCALL_NR_MAX]);

#endif /* RECORD_SYSCALL_SETS_H */
