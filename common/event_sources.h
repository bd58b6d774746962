/* event_sources.h - the names of the event sources, one table for both
 * programs: the word after perfcap-record -e, in META "sources" and
 * before the dot of STATS keys ("sched.lost.kernel"), and the source
 * column of perfcap-analyze's quality rows. The recorder's behaviour of
 * each source lives in record/sources/; this is only what the capture
 * says about it. */
#ifndef COMMON_EVENT_SOURCES_H
#define COMMON_EVENT_SOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "perfcap_bpf.h"

struct event_source {
	enum perfcap_source_id id;
	const char *name;
	bool writes_syscalls;   /* files SYSCALL records (format/SPEC.md 2.3) */
};

/* Every source, in the order reports list them (cpu first). */
extern const struct event_source event_sources[];
extern const size_t event_sources_len;

/* "sched" for PERFCAP_SRC_SCHED; NULL for an id no source has. */
const char *event_source_name(int id);

/* The PERFCAP_SRC_* id of name, or -1. */
int event_source_id(const char *name);

/* Whether source name files SYSCALL records: syscall and the sources that
 * share its program (mux, net, lock, mem). */
bool event_source_writes_syscalls(const char *name);

#endif /* COMMON_EVENT_SOURCES_H */
