/* perfmap.c - reading /tmp/perf-PID.map files (see perfmap.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfmap.h"
#include "util/util.h"

#define PERFMAP_MAX_BYTES (512u << 20) /* larger files are refused */
/* A file's mtime comes from a coarse clock and the process's start is in
 * clock ticks: a map older than its process by less than this is taken. */
#define PERFMAP_STALE_SLACK_NS 1000000000ll

struct entry {
	uint64_t addr;
	uint32_t size;
	uint32_t name_off;
	uint32_t line;            /* order in the file, for "last one wins" */
};

struct builder {
	struct entry *v;
	uint32_t n, cap;
	struct text names;        /* NUL-terminated names, back to back */
};

static int add_entry(struct builder *b, uint64_t addr, uint64_t size,
		     const char *name, size_t name_len)
{
	uint32_t name_off = (uint32_t)b->names.len;
	struct entry *v = array_reserve(b->v, &b->cap, b->n + 1, sizeof(*b->v));

	if (!v)
		return -ENOMEM;
	b->v = v;
	if (text_append(&b->names, name, name_len) || text_append(&b->names, "", 1))
		return -ENOMEM;
	b->v[b->n] = (struct entry){ .addr = addr,
				     .size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
				     .name_off = name_off, .line = b->n };
	b->n++;
	return 0;
}

/* One hex number at *p (optional 0x), then at least one blank. */
static int parse_hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (digits >= 16)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	if (digits == 0 || s >= end || (*s != ' ' && *s != '\t'))
		return -1;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*p = s;
	*out = v;
	return 0;
}

static int parse_line(struct builder *b, const char *s, const char *end, uint64_t *malformed)
{
	uint64_t addr, size;

	while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (s == end)
		return 0;
	if (parse_hex_field(&s, end, &addr) || parse_hex_field(&s, end, &size) ||
	    s == end || memchr(s, '\0', (size_t)(end - s))) {
		(*malformed)++;
		return 0;
	}
	return add_entry(b, addr, size, s, (size_t)(end - s));
}

static int by_addr_then_line(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Sorted, one entry per address (the last line), into m. */
static int finish(struct builder *b, struct pc_elf_module *m)
{
	size_t out = 0;

	if (b->n > 1)
		qsort(b->v, b->n, sizeof(*b->v), by_addr_then_line);
	for (size_t i = 0; i < b->n; i++) {
		if (out > 0 && b->v[out - 1].addr == b->v[i].addr)
			out--;
		b->v[out++] = b->v[i];
	}
	m->syms = calloc(out ? out : 1, sizeof(*m->syms));
	if (!m->syms)
		return -ENOMEM;
	for (size_t i = 0; i < out; i++)
		m->syms[i] = (struct pc_symbol){ .addr = b->v[i].addr, .size = b->v[i].size,
						 .name_off = b->v[i].name_off };
	m->nsyms = (uint32_t)out;
	m->strtab = b->names.s;
	m->strtab_len = b->names.len;
	b->names = (struct text){ 0 };
	return 0;
}

int perfmap_parse(struct pc_elf_module *m, const char *text, size_t len,
		  uint64_t *malformed)
{
	struct builder b = { 0 };
	const char *p = text, *end = text + len;
	int err = 0;

	memset(m, 0, sizeof(*m));
	m->kind = PC_MODULE_PERFMAP;
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		err = parse_line(&b, p, line_end, malformed);
		p = line_end + 1;
	}
	if (!err)
		err = finish(&b, m);
	free(b.v);
	text_free(&b.names);
	if (err)
		pc_elf_module_free(m);
	return err;
}

/* The pid of the process inside its own pid namespace (last NSpid
 * field), or pid itself. */
uint32_t perfmap_namespace_pid(uint32_t pid)
{
	char path[64], line[256];
	unsigned long ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *s = line + 6, *e;
			for (;;) {
				unsigned long v = strtoul(s, &e, 10);
				if (e == s)
					break;
				ns = v;
				s = e;
			}
			break;
		}
	}
	fclose(f);
	return (uint32_t)ns;
}

/* Opens the perf map without following a symlink; it must be a regular
 * file owned by root or by the owner of the process (when it still runs),
 * so a user cannot make the recorder embed another user's file. */
static int open_checked(const char *path, uint32_t pid, struct stat *st)
{
	char proc[32];
	struct stat owner;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/%u", pid);
	if (fstat(fd, st) || !S_ISREG(st->st_mode) ||
	    (st->st_uid != 0 && stat(proc, &owner) == 0 && owner.st_uid != st->st_uid)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static int read_all(int fd, size_t size, char **out)
{
	char *buf = malloc(size ? size : 1);
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* the file shrank: use what is there */
		got += (size_t)n;
	}
	*out = buf;
	return (int)got;
}

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000ll + t->tv_nsec;
}

/* Whether the file was last written before the process started (start_ns
 * since boot, turned into wall-clock time like the file's mtime). */
static bool older_than_process(const struct stat *sb, uint64_t start_ns)
{
	struct timespec real, boot;
	int64_t started;

	if (!start_ns || clock_gettime(CLOCK_REALTIME, &real) ||
	    clock_gettime(CLOCK_BOOTTIME, &boot))
		return false;
	started = ts_ns(&real) - (ts_ns(&boot) - (int64_t)start_ns);
	return ts_ns(&sb->st_mtim) + PERFMAP_STALE_SLACK_NS < started;
}

int perfmap_load(struct pc_elf_module *m, uint32_t pid, uint64_t start_ns,
		 struct perfmap_stats *st, char *why, size_t why_len)
{
	char inside[96], outside[64];
	const char *path = inside;
	struct stat sb;
	char *text;
	int fd, got, err;

	snprintf(inside, sizeof(inside), "/proc/%u/root/tmp/perf-%u.map", pid, perfmap_namespace_pid(pid));
	snprintf(outside, sizeof(outside), "/tmp/perf-%u.map", pid);
	fd = open_checked(inside, pid, &sb);
	if (fd == -ENOENT || fd == -ESRCH || fd == -ENOTDIR) {
		path = outside;
		fd = open_checked(outside, pid, &sb);
	}
	if (fd < 0) {
		if (fd == -EPERM || fd == -ELOOP)
			st->files_refused++;
		snprintf(why, why_len, "%s: %s", path,
			 fd == -EPERM ? "not a regular file owned by the process's user" :
			 strerror(-fd));
		return fd == -ELOOP ? -EPERM : fd;
	}
	if ((uint64_t)sb.st_size > PERFMAP_MAX_BYTES) {
		close(fd);
		st->files_refused++;
		snprintf(why, why_len, "%s: larger than %u MiB", path, PERFMAP_MAX_BYTES >> 20);
		return -EFBIG;
	}
	if (older_than_process(&sb, start_ns)) {
		close(fd);
		st->files_stale++;
		snprintf(why, why_len, "%s: older than the process (left by an earlier "
			 "process with pid %u)", path, pid);
		return -ESTALE;
	}
	got = read_all(fd, (size_t)sb.st_size, &text);
	close(fd);
	if (got < 0)
		return got;
	err = perfmap_parse(m, text, (size_t)got, &st->lines_malformed);
	free(text);
	if (err)
		return err;
	m->pid = pid;
	m->path = strdup(path == inside ? outside : path);
	st->files_read++;
	return m->path ? 0 : -ENOMEM;
}
