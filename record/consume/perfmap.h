/* perfmap.h - symbols of JIT-compiled code from perf map files.
 *
 * Runtimes that generate code (the JVM with -XX:+DumpPerfMapAtExit or a
 * perf-map agent, node --perf-basic-prof, LuaJIT, .NET with
 * DOTNET_PerfMapEnabled) describe it in /tmp/perf-PID.map, one line per
 * function: "START SIZE NAME", START and SIZE in hex. The recorder reads the
 * file of each traced process whose stacks hit anonymous executable memory
 * and stores the functions covering those addresses in a PERFMAP module
 * record, so the capture names JIT frames without the file. */
#ifndef RECORD_PERFMAP_H
#define RECORD_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/elf_module.h"

struct perfmap_stats {
	uint64_t files_read;      /* perf map files found and read */
	uint64_t files_refused;   /* not a regular file, or owned by someone else */
	uint64_t lines_malformed; /* lines that are not "START SIZE NAME" */
	uint64_t files_stale;     /* last written before the process started */
};

/* Reads the perf map of process pid into m (kind PC_MODULE_PERFMAP, symbols
 * sorted by address; for several entries at one address the last line
 * wins, as a runtime rewrites code in place). The file is looked up in the
 * process's own mount namespace first (/proc/PID/root/tmp/perf-NSPID.map),
 * then in /tmp/perf-PID.map. start_ns is when the process started
 * (/proc/PID/stat, ns since boot; 0: unknown): a file last modified before
 * then was left by an earlier process with the same pid (the files outlive
 * their processes, and pids are reused) and is refused with -ESTALE, as its
 * names would be another program's. Returns 0, -ENOENT when there is no
 * file, or another -errno (why gets a one-line reason). */
int perfmap_load(struct pc_elf_module *m, uint32_t pid, uint64_t start_ns,
		 struct perfmap_stats *st,
		 char *why, size_t why_len);

/* pid as its own pid namespace numbers it (the last NSpid field of
 * /proc/PID/status): the number a runtime in a container names its files
 * by. pid itself when unknown. */
uint32_t perfmap_namespace_pid(uint32_t pid);

/* Parses perf map text of len bytes into m (exposed for tests). Lines that
 * do not parse are counted in *malformed. Returns 0 or -ENOMEM. */
int perfmap_parse(struct pc_elf_module *m, const char *text, size_t len,
		  uint64_t *malformed);

#endif /* RECORD_PERFMAP_H */
