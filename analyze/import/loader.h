/* loader.h - imports a capture into a SQLite database: reads every chunk
 * through the format library, stores metadata, processes, maps, stacks
 * samples and event records, correlates events (correlate.h), then resolves
 * every stack's frames once all symbol data has been read, and records
 * data-quality counters. */
#ifndef ANALYZE_LOADER_H
#define ANALYZE_LOADER_H

#include <stddef.h>
#include <sqlite3.h>

/* Where the requests table comes from (--requests-from). */
enum load_requests_from {
	LOAD_REQUESTS_AUTO = 0,   /* socket calls where a process has them, else REQUEST records */
	LOAD_REQUESTS_CALLS,      /* socket calls only (-e syscall,net) */
	LOAD_REQUESTS_KERNEL,     /* REQUEST records only (-e req) */
};

struct load_options {
	const char *symfs;        /* --symfs DIR, or NULL */
	int local_files;          /* 0 = only symbols embedded in the capture */
	unsigned long long window_ns;  /* thread_time_shares window; 0 = 1 s */
	int progress;             /* draw a progress line on stderr */
	int requests_from;        /* enum load_requests_from */
};

struct load_summary {
	char damage[256];         /* one line if the file is damaged, else "" */
	unsigned long long samples;
	unsigned long long events;     /* records of EVENTS chunks, samples included */
};

enum load_error {
	LOAD_OK = 0,
	LOAD_NOT_CAPTURE = -1,    /* errbuf: why */
	LOAD_FAILED = -2,         /* I/O or database error, already reported */
};

/* Creates the schema in an empty database db, loads the capture at path
 * inside one transaction and creates the indexes. */
int load_capture(sqlite3 *db, const char *path, const struct load_options *opts,
		 struct load_summary *summary, char *errbuf, size_t errlen);

#endif /* ANALYZE_LOADER_H */
