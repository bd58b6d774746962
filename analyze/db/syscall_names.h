/* syscall_names.h - the syscall_names table of a database: every x86_64
 * system call util/syscalls.h knows, with its family and argument facts,
 * so views and queries refer to calls by name. */
#ifndef ANALYZE_DB_SYSCALL_NAMES_H
#define ANALYZE_DB_SYSCALL_NAMES_H

#include <sqlite3.h>

/* Fills the syscall_names table. 0 or -1 (reported). */
int syscalls_store(sqlite3 *db);

#endif /* ANALYZE_DB_SYSCALL_NAMES_H */
