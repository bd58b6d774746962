/* exe_alias.h - the name a process's executable is known by. Debian's
 * /usr/bin/redis-server is a symlink to redis-check-rdb: /proc/PID/exe and
 * the maps say /usr/bin/redis-check-rdb, the user started redis-server.
 * The recorder keeps both (PROC exe and argv, comm); frames of the main
 * executable are named by the path the process was started with, the
 * resolved file stays in maps.path and processes.exe. */
#ifndef ANALYZE_EXE_ALIAS_H
#define ANALYZE_EXE_ALIAS_H

#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"

struct exe_alias_entry {
	char *exe;                /* the executable as resolved */
	char *alias;              /* as started */
};

struct exe_aliases {
	struct hmap by_pid;       /* pid -> index in entries, UINT64_MAX: none */
	struct exe_alias_entry *entries;
	uint32_t len, cap;
};

/* Reads every process's alias from db's processes table. */
int exe_aliases_init(struct exe_aliases *a, sqlite3 *db);
void exe_aliases_free(struct exe_aliases *a);

/* The name to show for path mapped by pid: the started path when path is
 * the process's executable and argv[0] names it differently (comm, which
 * the kernel took from the path given to execve, must agree), else NULL. */
const char *exe_alias(struct exe_aliases *a, uint32_t pid, const char *path);

/* The same decision from the facts themselves (for tests): exe as
 * resolved, argv0 as started (a process title after a space is ignored),
 * comm. Writes the alias into out and returns 1, or returns 0. */
int exe_alias_of(const char *exe, const char *argv0, const char *comm, char *out, size_t len);

#endif /* ANALYZE_EXE_ALIAS_H */
