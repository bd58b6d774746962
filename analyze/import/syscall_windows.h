/* syscall_windows.h - the syscall program's windows (SYSCALL_WINDOW
 * records, format 1.14) while a capture loads: which window each SYSCALL
 * record was paired in (its row's window_ts), and the table
 * syscall_windows written at the end, which the view syscalls joins for
 * each call's weight (db/schema.c). */
#ifndef ANALYZE_SYSCALL_WINDOWS_H
#define ANALYZE_SYSCALL_WINDOWS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "perfcap_format.h"

struct syscall_window {
	uint64_t ts, open_ns, period_ns, rate;
};

struct syscall_windows {
	struct syscall_window *v;   /* by ts: records come as windows open */
	size_t n, cap;
	size_t last;                /* the window the last lookup found */
};

/* One record: appended, or (same ts as the last: the recording's end cut
 * its period) replacing the last. 1 added, 0 malformed (out of order or
 * inconsistent: not used), -1 out of memory. */
int syscall_windows_add(struct syscall_windows *w, const struct pc_rec_syscall_window *r);

/* The window a call that entered at ts was paired in, or NULL: none (a
 * period followed whole). */
const struct syscall_window *syscall_windows_find(struct syscall_windows *w, uint64_t ts);

/* What a call of duration ns paired in window x stands for (1 without a
 * window): period / max(open - ns, open / 4), as the view syscalls. */
double syscall_window_weight(const struct syscall_window *x, uint64_t ns);

/* The rows of table syscall_windows. 0 or -1. */
int syscall_windows_store(sqlite3 *db, const struct syscall_windows *w);

void syscall_windows_release(struct syscall_windows *w);

#endif /* ANALYZE_SYSCALL_WINDOWS_H */
