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
};

/* Finds every file mapped executable by pid that defines a function named
 * one of names (NULL-terminated, in order of preference), at most max of
 * them, each file once. Returns how many were found (0: none), or -errno
 * when pid's maps cannot be read; why gets a one-line reason when 0 or
 * negative. */
int uprobe_target_find(uint32_t pid, const char *const *names, struct uprobe_target *out,
		       int max, char *why, size_t len);

#endif /* RECORD_UPROBE_TARGET_H */
