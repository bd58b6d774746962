/* quality_sources.c - quality rows of the event sources: records imported
 * per source and type, and what the correlations could not match
 * (unmatched switches and wakeups, waits whose system call never came,
 * events past the reorder window). A source gets rows when it has records
 * or META "sources" names it. The recorder's own counters (STATS
 * "<source>.lost.kernel" ...) stay in stats; the data_quality view puts
 * both side by side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/event_sources.h"
#include "common/syscall_table.h"
#include "correlate/correlate.h"
#include "db/db.h"
#include "load_state.h"
#include "quality.h"
#include "record_types.h"
#include "util/syscalls.h"
#include "correlate/timeline.h"

/* The sources whose system calls the recorder's shared syscall program
 * emits, in the order it gives them ownership of a number (the syscall
 * source gets the numbers none of them has): format/SPEC.md 2.1. */
static const char *const syscall_owners[] = { "mux", "lock", "net", "mem" };
#define NOWNERS (sizeof(syscall_owners) / sizeof(syscall_owners[0]))

/* SYSCALL records per source that filed them: n[i] for syscall_owners[i],
 * n[NOWNERS] for syscall itself. Worked out once per import. */
struct syscall_split {
	uint64_t n[NOWNERS + 1];
};

/* Whether META "sources" names source (a comma-separated list). */
static int source_listed(const char *list, const char *source)
{
	size_t n = strlen(source);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && *p == ' ') {
			p++;
			len--;
		}
		if (len == n && strncmp(p, source, n) == 0)
			return 1;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static unsigned syscall_nr_by_name(const char *name, size_t len)
{
	int nr = syscall_table_nr(name, len);

	return nr < 0 ? SYSCALL_NR_COUNTED : (unsigned)nr;
}

/* SYSCALL records of the numbers in META syscall.set.<owner> that no
 * earlier owner claimed; claimed[] marks the numbers taken. */
static uint64_t owned_syscalls(const struct loader *L, const char *owner, uint8_t *claimed)
{
	char key[64], *set;
	uint64_t n = 0;

	snprintf(key, sizeof(key), "syscall.set.%s", owner);
	set = db_lookup_text(L->db, "SELECT value FROM meta WHERE key = ?1", key, NULL);
	for (const char *p = set; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		unsigned nr = syscall_nr_by_name(p, len);

		if (nr < SYSCALL_NR_COUNTED && !claimed[nr]) {
			claimed[nr] = 1;
			n += L->counts.syscalls_by_nr[nr];
		}
		p = end ? end + 1 : NULL;
	}
	free(set);
	return n;
}

/* The recorder files a SYSCALL under the first of mux, lock, net, mem
 * whose syscall set has its number, else under syscall. */
static void split_syscalls(const struct loader *L, struct syscall_split *sp)
{
	uint8_t claimed[SYSCALL_NR_COUNTED] = { 0 };
	uint64_t owned = 0;

	for (size_t i = 0; i < NOWNERS; i++) {
		sp->n[i] = owned_syscalls(L, syscall_owners[i], claimed);
		owned += sp->n[i];
	}
	sp->n[NOWNERS] = L->counts.records[PC_REC_SYSCALL] - L->counts.syscalls_summed - owned;
}

static uint64_t records_of(const struct loader *L, const struct syscall_split *sp,
			   const char *source, uint16_t type)
{
	const char *s = record_type_source(type);

	if (type == PC_REC_THREAD_METRIC) /* agg's and waits' by their flag */
		return strcmp(source, "waits") == 0 ? L->counts.metrics_waits :
		       strcmp(source, "agg") == 0 ? L->counts.records[type] - L->counts.metrics_waits :
		       0;
	/* the /proc snapshots' SOCKET records (flag SNAPSHOT) are written
	 * whatever -e says and counted under proc by the recorder */
	if (type == PC_REC_SOCKET && strcmp(source, "proc") == 0)
		return L->counts.sockets_snapshot;
	if (type == PC_REC_SOCKET)
		return strcmp(source, "net") == 0 ?
			L->counts.records[type] - L->counts.sockets_snapshot : 0;
	/* a batch counts as the requests it holds, as the recorder counts
	 * them (STATS req.events), so that data_quality compares like with like */
	if (type == PC_REC_REQUEST_BATCH)
		return strcmp(source, "req") == 0 ? L->counts.requests_batched : 0;
	if (type != PC_REC_SYSCALL)
		return s && strcmp(s, source) == 0 ? L->counts.records[type] : 0;
	for (size_t i = 0; i < NOWNERS; i++)
		if (strcmp(source, syscall_owners[i]) == 0)
			return sp->n[i];
	if (strcmp(source, "agg") == 0)
		return L->counts.syscalls_summed;  /* its slow calls (flag SUMMED) */
	return strcmp(source, "syscall") == 0 ? sp->n[NOWNERS] : 0;
}

static uint64_t source_records(const struct loader *L, const struct syscall_split *sp,
			       const char *source)
{
	uint64_t n = 0;

	for (uint16_t type = 1; type <= RECORD_TYPE_MAX; type++)
		n += records_of(L, sp, source, type);
	return n;
}

static void put_records(struct quality_writer *w, const struct loader *L,
			const struct syscall_split *sp, const char *source)
{
	char key[64];

	quality_put_u64(w, source, "records", source_records(L, sp, source));
	if (strcmp(source, "cpu") == 0)
		return;
	for (uint16_t type = PC_REC_EXEC; type <= RECORD_TYPE_MAX; type++) {
		const char *s = record_type_source(type);
		uint64_t n = records_of(L, sp, source, type);

		if (!(s && strcmp(s, source) == 0) &&
		    !((type == PC_REC_SYSCALL || type == PC_REC_SOCKET) && n > 0) &&
		    !(type == PC_REC_THREAD_METRIC && strcmp(source, "waits") == 0))
			continue;
		snprintf(key, sizeof(key), "records.%s", record_type_name(type));
		quality_put_u64(w, source, key, n);
	}
}

static void put_correlations(struct quality_writer *w, const struct loader *L,
			     const char *source)
{
	const struct correlate_counts *k = correlator_counts(L->corr);

	if (strcmp(source, "sched") == 0) {
		quality_put_u64(w, source, "switch_in.unmatched", k->switch_in_unmatched);
		quality_put_u64(w, source, "switch_out.unmatched", k->switch_out_unmatched);
		quality_put_u64(w, source, "cpu_switch.unmatched", k->switch_out_missing);
		quality_put_u64(w, source, "wakeup.unmatched", k->wakeup_unmatched);
		quality_put_u64(w, source, "waits.expired", k->waits_expired);
		quality_put_u64(w, source, "intervals", k->intervals);
		quality_put_u64(w, source, "intervals.partial", k->intervals_partial);
		quality_put_u64(w, source, "offcpu.by_syscall", k->offcpu_by_syscall);
		quality_put_u64(w, source, "offcpu.by_state", k->offcpu_by_state);
		quality_put_u64(w, source, "late", k->late_sched);
	} else if (strcmp(source, "syscall") == 0) {
		quality_put_u64(w, source, "late", k->late_syscall);
		quality_put_u64(w, source, "unknown_nr", L->syscalls_unknown_nr);
	} else if (strcmp(source, "block") == 0) {
		quality_put_u64(w, source, "late", k->late_block);
	} else if (strcmp(source, "net") == 0) {
		quality_put_u64(w, source, "late", k->late_net);
	} else if (strcmp(source, "mem") == 0) {
		quality_put_u64(w, source, "faults.weighted", L->fault_weight);
	} else if (strcmp(source, "probe") == 0 && L->gc.present) {
		/* GC begin/end hits that made no pause (load_gc.c) */
		quality_put_u64(w, source, "gc.pauses", L->gc.pauses);
		quality_put_u64(w, source, "gc.begin_unmatched", L->gc.begin_unmatched);
		quality_put_u64(w, source, "gc.end_unmatched", L->gc.end_unmatched);
		quality_put_u64(w, source, "gc.unrecorded", L->gc.unrecorded);
		quality_put_u64(w, source, "gc.other_stops", L->gc.other_stops);
	}
}

void quality_put_sources(struct quality_writer *w, struct loader *L)
{
	char *listed = db_lookup_text(L->db, "SELECT value FROM meta WHERE key = ?1",
				      "sources", NULL);
	const struct correlate_counts *k = correlator_counts(L->corr);
	struct syscall_split split;

	split_syscalls(L, &split);
	for (size_t i = 0; i < event_sources_len; i++) {
		const char *source = event_sources[i].name;

		if (source_records(L, &split, source) == 0 && !source_listed(listed, source))
			continue;
		put_records(w, L, &split, source);
		put_correlations(w, L, source);
	}
	quality_put_u64(w, "timeline", "reorder_window_ns", TIMELINE_WINDOW_NS);
	quality_put_u64(w, "timeline", "peak_events", k->timeline_peak);
	quality_put_u64(w, "timeline", "shares.dropped", k->shares_dropped);
	quality_put_u64(w, "timeline", "out_of_range", k->out_of_range);
	free(listed);
}
