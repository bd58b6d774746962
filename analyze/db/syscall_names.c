/* syscall_names.c - fills the syscall_names table (syscall_names.h) from
 * the system call facts of util/syscalls.c, one row per known number. */
#include "batch_insert.h"
#include "db.h"
#include "syscall_names.h"
#include "common/syscall_table.h"
#include "util/syscalls.h"

static const char *io_direction(uint8_t flags)
{
	if (flags & SC_F_READ)
		return "read";
	if (flags & SC_F_WRITE)
		return "write";
	return NULL;
}

int syscalls_store(sqlite3 *db)
{
	struct batch_insert rows;
	int rc = batch_init(&rows, db,
			    "syscall_names (nr, name, family, fd_arg, count_arg, io)", 6);

	for (unsigned nr = 0; rc == 0 && nr < SYSCALL_NR_MAX; nr++) {
		const struct syscall_info *info = syscall_info(nr);
		uint8_t *kind;
		int64_t *row;

		if (!info->name)
			continue;
		row = batch_row(&rows, &kind);
		row[0] = nr;
		batch_text(row, kind, 1, info->name);
		batch_text(row, kind, 2, syscall_family_name(info->family));
		row[3] = (info->flags & SC_F_FD) != 0;
		row[4] = (info->flags & SC_F_COUNT) != 0;
		batch_text(row, kind, 5, io_direction(info->flags));
		rc = batch_commit_row(&rows);
	}
	if (rc == 0)
		rc = batch_flush(&rows);
	batch_free(&rows);
	return rc;
}
