/* uprobe_target.h - finding a function to uprobe in the objects a process
 * itself maps: reads /proc/PID/maps, opens each mapped file (through
 * /proc/PID/map_files, so other mount namespaces and deleted files work),
 * looks the function up by name in its symbols (format/elf_module.h) and
 * turns its ELF address into the file offset a uprobe is attached at.
 * No library path is ever assumed: the process's maps name the files.
 */
#ifndef RECORD_UPROBE_TARGET_H
#define RECORD_UPROBE_TARGET_H

#include <stddef.h>
#include <stdint.h>

#define UPROBE_TARGET_PATH_MAX 512
#define UPROBE_TARGETS_MAX     8   /* objects defining the function, per process */

/* One object that defines the function. */
struct uprobe_target {
	char     attach_path[UPROBE_TARGET_PATH_MAX]; /* for the kernel: resolves to the inode */
	char     path[UPROBE_TARGET_PATH_MAX];        /* as the maps name it */
	uint64_t offset;          /* file offset of the function's first instruction */
	uint64_t vaddr;           /* its ELF virtual address */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char     symbol[64];      /* the name found */
	uint8_t  build_id_len;    /* 0: none */
	uint8_t  build_id[20];
};

/* Finds every file mapped executable by pid that defines a function named
 * one of names (NULL-terminated, in order of preference), at most max of
 * them, each file once. Returns how many were found (0: none), or -errno
 * when pid's maps cannot be read; why gets a one-line reason when 0 or
 * negative. */
int uprobe_target_find(uint32_t pid, const char *const *names, struct uprobe_target *out,
		       int max, char *why, size_t len);

/* Finds the function named name (any alias; in a stripped Go binary, its
 * pclntab's functions) in the ELF file at path
 * (opened as is: callers pass /proc/PID/root/... for a process's own
 * root; shown is how reasons name it). t gets the offset, vaddr, build-id
 * and path (attach_path = path); name "" reads the build-id only. 0, or
 * -errno with a one-line reason in why (no such file, not ELF, no such
 * function). */
int uprobe_target_in_file(const char *path, const char *shown, const char *name,
			  struct uprobe_target *t, char *why, size_t len);

/* 1 if the file at path is a Go binary (common/elf_module.h), 0 if not,
 * -errno if it cannot be read. */
int uprobe_file_is_go(const char *path);

/* Where an entry probe on the Go function at file offset goes cheaply:
 * the conditional jump of its stack-check prologue (CMP then JBE to
 * morestack), which the kernel emulates, where the first instruction (the
 * comparison) would be single-stepped out of line (measured on the test
 * VM: 17 us a hit, against about 1 us). The jump runs once per call,
 * before anything else the function does, except that a call that must
 * grow its goroutine's stack runs it twice (morestack restarts the
 * function; never on the system stack, where the runtime's stop-the-world
 * functions run). 0 and *branch, or -ENOENT when the function does not
 * start with that prologue (leaf and nosplit functions: probe the entry). */
int uprobe_go_branch_offset(const char *path, uint64_t offset, uint64_t *branch);

/* The sites of USDT probe provider:name in the ELF file at path (as
 * uprobe_target_in_file): t gets the build-id and the file offset of the
 * first site. Returns the number of sites, or -errno with a reason in why
 * (-ENOENT: no such probe). */
int uprobe_usdt_in_file(const char *path, const char *shown, const char *provider,
			const char *name, struct uprobe_target *t, char *why, size_t len);

/* The initial target processes: the keys of the shared pid filter (map
 * fd targets_fd), at most max of them; *more gets how many were left out. */
size_t uprobe_initial_targets(int targets_fd, int *pids, size_t max, size_t *more);

#endif /* RECORD_UPROBE_TARGET_H */
