/* event_sources.c - the table of event source names (see event_sources.h).
 * Adding a source: a row here, then record/sources/source.h's steps. */
#include <string.h>

#include "event_sources.h"

const struct event_source event_sources[] = {
	{ PERFCAP_SRC_CPU, "cpu", false },
	{ PERFCAP_SRC_PROC, "proc", false },
	{ PERFCAP_SRC_SCHED, "sched", false },
	{ PERFCAP_SRC_SYSCALL, "syscall", true },
	{ PERFCAP_SRC_MUX, "mux", true },
	{ PERFCAP_SRC_BLOCK, "block", false },
	{ PERFCAP_SRC_NET, "net", true },
	{ PERFCAP_SRC_LOCK, "lock", true },
	{ PERFCAP_SRC_MEM, "mem", true },
	{ PERFCAP_SRC_AGG, "agg", true },       /* its slow calls, flagged summed */
	{ PERFCAP_SRC_WAITS, "waits", false },
	{ PERFCAP_SRC_PROBE, "probe", false },  /* -e uprobe:...,usdt:... */
	{ PERFCAP_SRC_REQ, "req", false },
};

const size_t event_sources_len = sizeof(event_sources) / sizeof(event_sources[0]);

static const struct event_source *by_name(const char *name)
{
	for (size_t i = 0; i < event_sources_len; i++) {
		if (strcmp(event_sources[i].name, name) == 0)
			return &event_sources[i];
	}
	return NULL;
}

const char *event_source_name(int id)
{
	for (size_t i = 0; i < event_sources_len; i++) {
		if ((int)event_sources[i].id == id)
			return event_sources[i].name;
	}
	return NULL;
}

int event_source_id(const char *name)
{
	const struct event_source *s = by_name(name);

	return s ? (int)s->id : -1;
}

bool event_source_writes_syscalls(const char *name)
{
	const struct event_source *s = by_name(name);

	return s && s->writes_syscalls;
}
