/* procinfo.h - reading one process's facts from /proc: ids and start time,
 * name, executable, command line, thread names, executable mappings. Plain
 * readers without state; processes.c decides when to call them. */
#ifndef RECORD_PROCINFO_H
#define RECORD_PROCINFO_H

#include <stdbool.h>
#include <stdint.h>

struct proc_stat {
	uint32_t ppid;
	uint64_t start_ns;   /* field 22 of /proc/PID/stat, as ns since boot */
	char     comm[16];
	char     state;      /* R, S, Z ... */
};

/* 0, or -errno (-ENOENT: the process is gone). */
int procinfo_read_stat(uint32_t pid, struct proc_stat *out);

/* Target of /proc/PID/exe into buf. Returns its length, or -errno
 * (kernel threads have none). */
int procinfo_read_exe(uint32_t pid, char *buf, size_t len);

/* /proc/PID/cmdline (NUL-separated argv) into a malloc'd buffer. Returns
 * its length or -errno. */
long procinfo_read_cmdline(uint32_t pid, char **out);

/* Calls fn for each thread id in /proc/PID/task. Stops at the first
 * non-zero return of fn and returns it; -errno if the directory can not
 * be read. */
typedef int (*procinfo_tid_fn)(void *ctx, uint32_t tid);
int procinfo_for_each_tid(uint32_t pid, procinfo_tid_fn fn, void *ctx);

/* The same, with each thread's name (threads that exited meanwhile are
 * left out). */
typedef int (*procinfo_thread_fn)(void *ctx, uint32_t tid, const char *comm);
int procinfo_for_each_thread(uint32_t pid, procinfo_thread_fn fn, void *ctx);

/* How many times thread tid of pid was switched in so far (the third
 * field of /proc/PID/task/TID/schedstat). 0 or -errno. */
int procinfo_thread_switches(uint32_t pid, uint32_t tid, uint64_t *out);

/* One line of /proc/PID/maps. */
struct map_entry {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t prot;        /* PROT_READ | PROT_WRITE | PROT_EXEC */
	const char *path;     /* "" for anonymous memory */
};

/* Calls fn for each executable mapping (file-backed, [vdso] and anonymous
 * ones alike), in address order. Same return convention as above. */
typedef int (*procinfo_map_fn)(void *ctx, const struct map_entry *m);
int procinfo_for_each_exec_map(uint32_t pid, procinfo_map_fn fn, void *ctx);

/* True for mappings of a file (path starts with '/'). */
bool map_entry_is_file(const struct map_entry *m);
bool map_entry_is_vdso(const struct map_entry *m);

/* Opens the file behind a mapping through /proc/PID/map_files (works for
 * deleted files and other mount namespaces), falling back to its path.
 * Returns an O_RDONLY|O_CLOEXEC fd or -errno. */
int procinfo_open_mapped_file(uint32_t pid, const struct map_entry *m);

#endif /* RECORD_PROCINFO_H */
