/* run_tool.c - running perfcap-analyze from tests (see run_tool.h). */
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_tool.h"

static char *read_fd(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)(size > 0 ? size : 0) + 1);

	if (text && size > 0 && pread(fd, text, (size_t)size, 0) != size)
		text[0] = '\0';
	close(fd);
	return text;
}

void run_analyze(struct tool_result *r, const char *arg, ...)
{
	const char *tool = getenv("PERFCAP_ANALYZE");
	const char *argv[64];
	int argc = 0, status = 0;
	int out_fd = memfd_create("stdout", 0), err_fd = memfd_create("stderr", 0);
	va_list ap;
	pid_t pid;

	argv[argc++] = tool ? tool : "perfcap-analyze";
	va_start(ap, arg);
	for (const char *a = arg; a && argc < 63; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(out_fd, 1);
		dup2(err_fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = read_fd(out_fd);
	r->err = read_fd(err_fd);
}

void tool_result_free(struct tool_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

char *scratch_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char *dir;

	if (asprintf(&dir, "%s/pcana-XXXXXX", tmp ? tmp : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *scratch_path(const char *dir, const char *name)
{
	char *path;

	return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : path;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void scratch_remove(char *dir)
{
	if (dir)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

int copy_prefix(const char *src, const char *dst, size_t len)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char *buf = malloc(len ? len : 1);
	int rc = -1;

	if (in && out && buf && fread(buf, 1, len, in) == len &&
	    fwrite(buf, 1, len, out) == len)
		rc = 0;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	free(buf);
	return rc;
}

int count_lines_with(const char *text, const char *needle)
{
	int n = 0;

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (memmem(line, len, needle, strlen(needle)))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}
