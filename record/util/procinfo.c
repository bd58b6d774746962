/* procinfo.c - reading one process's facts from /proc: ids and start time,
 * name, executable, command line, thread names, executable mappings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procinfo.h"
#include "util.h"
#include "safe_file.h"

#define MAX_CMDLINE_BYTES (64u << 10)

/* "1234 (some name) S 1 ..." - comm may hold spaces and ')', so the fields
 * after it are found from the last ')'. */
static int parse_stat(const char *text, struct proc_stat *out)
{
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	unsigned long long starttime = 0;
	unsigned ppid = 0;
	size_t comm_len;
	long ticks;
	char state;

	if (!open || !close || close < open)
		return -EINVAL;
	comm_len = (size_t)(close - open - 1);
	if (comm_len > sizeof(out->comm) - 1)
		comm_len = sizeof(out->comm) - 1;
	memset(out->comm, 0, sizeof(out->comm));
	memcpy(out->comm, open + 1, comm_len);

	/* fields 3 (state), 4 (ppid) ... 22 (starttime) */
	if (sscanf(close + 1, " %c %u %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u"
		   " %*d %*d %*d %*d %*d %*d %llu", &state, &ppid, &starttime) != 3)
		return -EINVAL;
	ticks = sysconf(_SC_CLK_TCK);
	if (ticks <= 0)
		ticks = 100;
	out->state = state;
	out->ppid = ppid;
	out->start_ns = starttime * (1000000000ull / (unsigned long long)ticks);
	return 0;
}

int procinfo_read_stat(uint32_t pid, struct proc_stat *out)
{
	char path[64], *text;
	long len;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	len = read_whole_file(path, &text, 4096);
	if (len < 0)
		return (int)len;
	err = parse_stat(text, out);
	free(text);
	return err;
}

int procinfo_read_exe(uint32_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

long procinfo_read_cmdline(uint32_t pid, char **out)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	return read_whole_file(path, out, MAX_CMDLINE_BYTES);
}

int procinfo_for_each_tid(uint32_t pid, procinfo_tid_fn fn, void *ctx)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!ret && (de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || end == de->d_name || !tid)
			continue;
		ret = fn(ctx, (uint32_t)tid);
	}
	closedir(dir);
	return ret;
}

struct named_walk {
	uint32_t pid;
	procinfo_thread_fn fn;
	void *ctx;
};

static int with_comm(void *ctx, uint32_t tid)
{
	struct named_walk *w = ctx;
	char path[96], comm[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", w->pid, tid);
	if (read_first_line(path, comm, sizeof(comm)))
		return 0; /* the thread exited meanwhile */
	return w->fn(w->ctx, tid, comm);
}

int procinfo_for_each_thread(uint32_t pid, procinfo_thread_fn fn, void *ctx)
{
	struct named_walk w = { pid, fn, ctx };

	return procinfo_for_each_tid(pid, with_comm, &w);
}

int procinfo_thread_switches(uint32_t pid, uint32_t tid, uint64_t *out)
{
	char path[96], line[128];
	unsigned long long run, wait, count;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", pid, tid);
	err = read_first_line(path, line, sizeof(line));
	if (err)
		return err;
	if (sscanf(line, "%llu %llu %llu", &run, &wait, &count) != 3)
		return -EINVAL;
	*out = count;
	return 0;
}

static uint32_t parse_prot(const char *perms)
{
	uint32_t prot = 0;

	if (perms[0] == 'r')
		prot |= PROT_READ;
	if (perms[1] == 'w')
		prot |= PROT_WRITE;
	if (perms[2] == 'x')
		prot |= PROT_EXEC;
	return prot;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_map_line(char *line, struct map_entry *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned major, minor;
	char perms[8];
	int path_at = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		   &pgoff, &major, &minor, &inode, &path_at) < 7 || strlen(perms) < 3)
		return -EINVAL;
	line[strcspn(line, "\n")] = '\0';
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->inode = inode;
	m->dev_major = major;
	m->dev_minor = minor;
	m->prot = parse_prot(perms);
	m->path = path_at ? line + path_at : "";
	return 0;
}

int procinfo_for_each_exec_map(uint32_t pid, procinfo_map_fn fn, void *ctx)
{
	char path[64];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!ret && getline(&line, &cap, f) > 0) {
		struct map_entry m;

		if (parse_map_line(line, &m) || !(m.prot & PROT_EXEC))
			continue;
		ret = fn(ctx, &m);
	}
	free(line);
	fclose(f);
	return ret;
}

bool map_entry_is_file(const struct map_entry *m)
{
	return m->path[0] == '/';
}

bool map_entry_is_vdso(const struct map_entry *m)
{
	return strcmp(m->path, "[vdso]") == 0;
}

int procinfo_open_mapped_file(uint32_t pid, const struct map_entry *m)
{
	char path[96];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
		 pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || !map_entry_is_file(m))
		return fd >= 0 ? fd : -errno;

	/* The path names a file in the target's mount namespace; accept it
	 * only if it is the same inode. */
	fd = pc_open_regular(m->path, 0); /* a FIFO must not block */
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != m->inode) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}
