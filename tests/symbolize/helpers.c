/* helpers.c - fixture paths and binutils-based expectations for the
 * symbolizer tests (see helpers.h). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elf_module.h"
#include "helpers.h"

static const char *env_dir(const char *name)
{
	const char *dir = getenv(name);

	cr_assert_not_null(dir, "%s is not set (run the tests through meson)",
			   name);
	return dir;
}

void fixture_path(char out[TEST_PATH_MAX], const char *name)
{
	snprintf(out, TEST_PATH_MAX, "%s/%s", env_dir("SYM_FIXTURES"), name);
}

int source_marker_line(const char *source, const char *marker)
{
	char path[TEST_PATH_MAX], line[1024];
	int number = 0, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", env_dir("SYM_SOURCES"), source);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f) != NULL) {
		number++;
		if (strstr(line, marker) != NULL)
			found = number;
	}
	fclose(f);
	return found;
}

/* Runs a command and hands each output line to fn until it returns 1. */
static int scan_command(const char *cmd, int (*fn)(const char *line, void *ctx),
			void *ctx)
{
	char line[1024];
	int done = 0;
	FILE *p = popen(cmd, "r");

	if (p == NULL)
		return -1;
	while (!done && fgets(line, sizeof(line), p) != NULL)
		done = fn(line, ctx);
	while (fgets(line, sizeof(line), p) != NULL)
		;
	pclose(p);
	return done ? 0 : -1;
}

struct nm_query {
	const char *name;
	uint64_t addr, size;
};

static int match_nm_line(const char *line, void *ctx)
{
	struct nm_query *q = ctx;
	char name[512], type;
	uint64_t addr, size;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %511s", &addr, &size,
		   &type, name) != 4 || strcmp(name, q->name) != 0)
		return 0;
	q->addr = addr;
	q->size = size;
	return 1;
}

int nm_symbol(const char *path, const char *name, uint64_t *addr,
	      uint64_t *size)
{
	char cmd[TEST_PATH_MAX + 64];
	struct nm_query q = { name, 0, 0 };

	snprintf(cmd, sizeof(cmd), "nm -S '%s' 2>/dev/null", path);
	if (scan_command(cmd, match_nm_line, &q) != 0)
		return -1;
	*addr = q.addr;
	*size = q.size;
	return 0;
}

struct load_query {
	uint64_t vaddr, offset;
	int count;
};

static int parse_load_line(const char *line, uint64_t *off, uint64_t *vaddr,
			   uint64_t *filesz)
{
	uint64_t paddr;

	return sscanf(line, " LOAD 0x%" SCNx64 " 0x%" SCNx64 " 0x%" SCNx64
		      " 0x%" SCNx64, off, vaddr, &paddr, filesz) == 4;
}

static int match_load_line(const char *line, void *ctx)
{
	struct load_query *q = ctx;
	uint64_t off, vaddr, filesz;

	if (!parse_load_line(line, &off, &vaddr, &filesz))
		return 0;
	q->count++;
	if (q->vaddr >= vaddr && q->vaddr - vaddr < filesz) {
		q->offset = q->vaddr - vaddr + off;
		return 1;
	}
	return 0;
}

int readelf_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *offset)
{
	char cmd[TEST_PATH_MAX + 64];
	struct load_query q = { vaddr, 0, 0 };

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	if (scan_command(cmd, match_load_line, &q) != 0)
		return -1;
	*offset = q.offset;
	return 0;
}

static int count_load_line(const char *line, void *ctx)
{
	uint64_t off, vaddr, filesz;

	if (parse_load_line(line, &off, &vaddr, &filesz))
		(*(int *)ctx)++;
	return 0;
}

int readelf_load_count(const char *path)
{
	char cmd[TEST_PATH_MAX + 64];
	int count = 0;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	scan_command(cmd, count_load_line, &count);
	return count;
}

static int match_build_id_line(const char *line, void *ctx)
{
	return sscanf(line, " Build ID: %40s", (char *)ctx) == 1;
}

int readelf_build_id(const char *path, char hex[41])
{
	char cmd[TEST_PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	return scan_command(cmd, match_build_id_line, hex);
}

int file_build_id(const char *path, uint8_t id[20])
{
	int fd = open(path, O_RDONLY), len;

	cr_assert_geq(fd, 0, "open %s", path);
	len = pc_elf_read_build_id_fd(fd, id);
	close(fd);
	return len;
}

uint64_t function_offset(const char *path, const char *name)
{
	uint64_t addr, size, offset;

	cr_assert_eq(nm_symbol(path, name, &addr, &size), 0, "nm %s", name);
	cr_assert_eq(readelf_vaddr_to_offset(path, addr, &offset), 0,
		     "no LOAD segment for %s", name);
	return offset;
}

void make_temp_dir(char out[TEST_TMP_MAX])
{
	snprintf(out, TEST_TMP_MAX, "/tmp/perfcap-sym-XXXXXX");
	cr_assert_not_null(mkdtemp(out));
}

void remove_temp_dir(const char *dir)
{
	char cmd[TEST_PATH_MAX + 32];

	if (strncmp(dir, "/tmp/perfcap-sym-", 17) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int copy_file(const char *from, const char *to)
{
	char cmd[3 * TEST_PATH_MAX];

	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'",
		 to, from, to);
	return system(cmd) == 0 ? 0 : -1;
}

int ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return s != NULL && n >= m && strcmp(s + n - m, suffix) == 0;
}
