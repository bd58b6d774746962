/* syscall_pace.h - the table syscall_pace: each thread's pace outside its
 * syscall windows against inside, which the view syscalls multiplies the
 * windows' weights by (syscall_pace.c). */
#ifndef ANALYZE_SYSCALL_PACE_H
#define ANALYZE_SYSCALL_PACE_H

#include <sqlite3.h>

/* After syscall_windows and syscall_rows are stored. 0 or -1. */
int syscall_pace_build(sqlite3 *db);

#endif /* ANALYZE_SYSCALL_PACE_H */
