/* modules.h - the registry of mapped files (modules) that user stacks may
 * point into, one entry per distinct (device, inode), plus [vdso]. Each
 * keeps an open fd so its symbols can be read at the end of the recording
 * even if the file was deleted or replaced meanwhile, its build-id, and the
 * file offsets hit by sampled user ips. */
#ifndef RECORD_MODULES_H
#define RECORD_MODULES_H

#include <stdbool.h>
#include <stdint.h>

#include "util/addr_list.h"
#include "perfcap_format.h"
#include "util/procinfo.h"

#define MODULE_NONE 0xffffffffu

struct module {
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	char    *path;            /* as first seen in /proc/PID/maps */
	int      fd;              /* -1 if it could not be opened */
	int      open_error;      /* -errno when fd is -1 */
	uint8_t  build_id_len;    /* 0: none or unreadable */
	uint8_t  build_id[PC_BUILD_ID_MAX];
	struct addr_list hits;    /* file offsets of sampled ips */
	bool     all_symbols;     /* unwind_tables.c: store every symbol, not the hits' */
	bool     unwind_wanted;   /* mapped by an evicted process with stack copies */
};

struct module_registry {
	struct module *mods;
	uint32_t n;
	uint32_t cap;
	uint32_t *slots;          /* hash index into mods; MODULE_NONE = free */
	uint32_t nslots;
};

/* The module behind an executable mapping of pid (a file or [vdso]),
 * opening it the first time. Returns its index or MODULE_NONE (out of
 * memory, or a mapping that is neither a file nor [vdso]). */
uint32_t modules_lookup_or_add(struct module_registry *r, uint32_t pid,
			       const struct map_entry *m);

void modules_free(struct module_registry *r);

#endif /* RECORD_MODULES_H */
