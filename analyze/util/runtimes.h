/* runtimes.h - which language runtime a process runs (JVM, Node.js,
 * Python, Go, .NET, Ruby, BEAM), from what a capture says about it: the
 * executable, argv[0], the files it maps and whether its symbols are Go's
 * runtime; with a confidence and the evidence, and the runtime's own
 * switches that name its frames for a profiler. No I/O: callers pass the
 * facts (import/load_runtimes.c from the database, cmd/cmd_info.c from
 * the capture's records). */
#ifndef ANALYZE_UTIL_RUNTIMES_H
#define ANALYZE_UTIL_RUNTIMES_H

#include <stddef.h>

struct runtime_facts {
	const char *exe;              /* /proc/PID/exe as recorded, or NULL */
	const char *argv0;            /* the command line's first word, or NULL */
	const char *const *maps;      /* paths of its mapped files */
	size_t nmaps;
	int go_symbols;               /* its stacks hit Go runtime functions */
};

struct runtime_guess {
	const char *runtime;          /* "jvm", "node", "python", "go", "dotnet", "ruby", "beam" */
	char version[32];             /* "3.11", "17", or "" */
	int confidence;               /* 0-100 */
	char evidence[160];           /* what said so: "maps libjvm.so", "exe node" ... */
	const char *advice;           /* how to get its frames named */
};

/* 1 and *out filled when a runtime is recognized, else 0. */
int runtime_identify(const struct runtime_facts *f, struct runtime_guess *out);

#endif /* ANALYZE_UTIL_RUNTIMES_H */
