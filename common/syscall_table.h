/* syscall_table.h - the x86_64 system call names by number, one table for
 * both programs (syscall_table.c, generated from <asm/unistd_64.h> by
 * gen_syscall_table.sh). */
#ifndef COMMON_SYSCALL_TABLE_H
#define COMMON_SYSCALL_TABLE_H

#include <stddef.h>

/* Numbers 0-511; the recorder's PERFCAP_SYSCALL_NR_MAX is the same. */
#define SYSCALL_NR_MAX 512

/* NULL where the header names no call. */
extern const char *const syscall_names[SYSCALL_NR_MAX];

/* The name of nr, or NULL. */
const char *syscall_table_name(unsigned nr);

/* The number named by the len bytes at name, or -1. */
int syscall_table_nr(const char *name, size_t len);

#endif /* COMMON_SYSCALL_TABLE_H */
