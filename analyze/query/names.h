/* names.h - process and thread names (comm) of a database, for labelling
 * stacks: the latest observed name of each thread and process. */
#ifndef ANALYZE_NAMES_H
#define ANALYZE_NAMES_H

#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"

struct names {
	struct hmap threads;      /* (pid, tid) -> index into strings */
	struct hmap processes;    /* (pid, 0) -> index into strings */
	char **strings;
	uint32_t len;
	uint32_t cap;
};

int names_load(struct names *n, sqlite3 *db);
void names_free(struct names *n);

/* The thread's name, else its process's, else NULL. */
const char *names_thread(const struct names *n, uint32_t pid, uint32_t tid);

/* The process's name, else its main thread's, else NULL. */
const char *names_process(const struct names *n, uint32_t pid);

#endif /* ANALYZE_NAMES_H */
