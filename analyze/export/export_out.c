/* export_out.c - where exports go: a file created as a 0600 temporary
 * beside its path (never through a symlink planted there) and renamed
 * into place only when complete, so a failed export leaves no partial
 * file; a directory for the tables; and the scope as SQL for the writers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "export_internal.h"
#include "safe_file.h"
#include "util/messages.h"

int export_out_open(struct export_out *o, const char *path)
{
	const char *why;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	if ((why = pc_output_refusal(path)))
		return fail_file(path, why);
	fd = pc_create_temp_beside(path, &o->tmp);
	if (fd < 0)
		return fail_file(path, strerror(-fd));
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		return fail_file(path, strerror(errno));
	}
	o->path = strdup(path);
	return 0;
}

int export_out_commit(struct export_out *o, int ok)
{
	const char *name = o->path ? o->path : "stdout";
	int failed = ferror(o->fp) != 0;

	if (fflush(o->fp) != 0)
		failed = 1;
	if (o->tmp && fclose(o->fp) != 0)
		failed = 1;
	if (failed && ok)
		fail_file(name, "write error");
	if (o->tmp) {
		if (ok && !failed && rename(o->tmp, o->path) < 0) {
			fail_file(o->path, strerror(errno));
			failed = 1;
		}
		if (!ok || failed)
			unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	return ok && !failed ? 0 : 1;
}

int export_out_directory(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return fail_file(dir, strerror(errno));
	if (lstat(dir, &st) < 0)
		return fail_file(dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail_file(dir, "exists and is not a directory (a symlink is not followed)");
	return 0;
}

const char *export_scope_sql(const struct export_ctx *cx, char *buf, size_t len,
			     const char *pid_col, const char *tid_col,
			     const char *start_col, const char *end_col)
{
	if (start_col && cx->scope.windowed)
		return report_scope_sql(buf, len, pid_col, tid_col, start_col, end_col);
	/* no window: the filters alone, as report_scope_sql words them */
	snprintf(buf, len,
		 "(:pid IS NULL OR %s = :pid) AND (:tid IS NULL OR %s = :tid)"
		 " AND (:comm IS NULL OR %s IN (SELECT pid FROM processes WHERE comm = :comm)"
		 " OR %s IN (SELECT tid FROM threads WHERE comm = :comm))",
		 pid_col, tid_col, pid_col, tid_col);
	return buf;
}

sqlite3_stmt *export_prepare(const struct export_ctx *cx, const char *sql)
{
	sqlite3_stmt *st = db_prepare(cx->db, sql);

	if (st)
		report_scope_bind(st, &cx->scope);
	return st;
}
