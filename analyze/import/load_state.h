/* load_state.h - the state shared by the steps of loading one capture
 * (loader.c walks chunks, load_records.c decodes records, resolve.c builds
 * frames, quality.c summarizes). Not used outside the loader. */
#ifndef ANALYZE_LOAD_STATE_H
#define ANALYZE_LOAD_STATE_H

#include <stdint.h>
#include <sqlite3.h>

#include "db/batch_insert.h"
#include "perfcap_format.h"
#include "util/hashmap.h"
#include "map_index.h"
#include "sample_groups.h"
#include "stack_store.h"

struct symbolizer;
struct correlator;
struct ustack_state;
struct sql_writer;

#define KNOWN_CHUNK_TYPES  8  /* indices 1..7 used */
#define KNOWN_RECORD_TYPES 23 /* indices 1..22 used */

#define SYSCALL_NR_COUNTED 1024   /* numbers above are not split by source */

struct load_counters {
	uint64_t chunks[KNOWN_CHUNK_TYPES];
	uint64_t records[KNOWN_RECORD_TYPES];
	uint64_t chunks_unknown;
	uint64_t records_unknown;
	uint64_t records_malformed;   /* bad record runs and inconsistent records */
	uint64_t kv_malformed;        /* unterminated key/value payloads */
	uint64_t stacks_duplicate;    /* a stack id defined twice: first kept */
	uint64_t modules_bad;         /* module records the symbolizer rejected */
	uint64_t maps_bad;            /* start >= end */
	uint64_t syscalls_by_nr[SYSCALL_NR_COUNTED]; /* SYSCALL records per number */
	struct hmap unknown_chunk_types;   /* (type, 0) -> count */
	struct hmap unknown_record_types;  /* (chunk type, record type) -> count */
};

/* Event tables written through batches. */
enum event_table {
	ET_SWITCHES = 0, ET_WAKEUPS, ET_FORKS, ET_SYSCALLS, ET_BLOCK_IO,
	ET_KERNEL_LOCKS, ET_USER_MUTEXES, ET_PAGE_FAULTS, ET_SOCKETS, ET_TCP_STATES,
	ET_TCP_RETRANSMITS, ET_PROCESS_EVENTS,
	ET_COUNT,
};

struct load_statements {
	sqlite3_stmt *chunk;
	sqlite3_stmt *meta;
	sqlite3_stmt *stat;
	sqlite3_stmt *process;
	sqlite3_stmt *thread;
	sqlite3_stmt *map;
	sqlite3_stmt *module;
	struct batch_insert samples;
	struct batch_insert ev[ET_COUNT];  /* tables of EVENTS records (load_events.c) */
};

struct chunk_row {
	struct pc_chunk_header hdr;
	uint64_t offset;
};

struct loader {
	sqlite3 *db;
	struct symbolizer *sym;
	struct load_statements st;
	struct stack_store stacks;
	struct map_index maps;
	struct sample_groups groups;  /* samples per (thread, stack pair) */
	struct load_counters counts;
	struct correlator *corr;      /* thread states, waits, time shares */
	struct sql_writer *writer;    /* runs the big tables' INSERTs; may be NULL */
	struct ustack_state *ust;     /* user stack copies (ustack_unwind.h); NULL if none */
	uint64_t nsamples;
	uint64_t nevents;             /* records of EVENTS chunks */
	uint64_t nsyscalls;           /* syscall_id of the last syscall */
	uint64_t noffcpu;             /* offcpu_id of the last OFFCPU record */
	uint64_t fault_weight;        /* page faults the FAULT records stand for */
	uint64_t syscalls_unknown_nr; /* SYSCALL records whose number has no name */
	int has_record_end;           /* record.end_ns seen in STATS or END */
	struct chunk_row *chunk_rows; /* headers of the chunks read, in order */
	size_t nchunk_rows, chunk_rows_cap;
	uint64_t first_ts;
	uint64_t last_ts;
	int failed;                   /* database or memory error: stop */
};

/* load_records.c: decodes and stores one record of a record chunk. */
void load_record(struct loader *L, uint16_t chunk_type, const struct pc_rec *rec);

/* load_events.c: decodes and stores one event source record (types 9-20);
 * prepares, flushes and finalizes the event tables' statements. */
void load_event(struct loader *L, const struct pc_rec *rec);
int load_events_prepare(struct loader *L);
int load_events_flush(struct loader *L);
void load_events_finalize(struct loader *L);

/* load_records.c: prepares the insert statements, writes what is still
 * buffered, finalizes them. */
int load_prepare_statements(struct loader *L);
int load_flush_statements(struct loader *L);
void load_finalize_statements(struct loader *L);

/* resolve.c: resolves every defined stack into frames and stores stacks,
 * frames and stack_frames. 0 or -1. */
int resolve_stacks(struct loader *L);

/* quality_sources.c: the quality rows of the event sources. 0 or -1. */
struct quality_writer;
void quality_put_sources(struct quality_writer *w, struct loader *L);

/* quality.c: stores sample_counts and the quality table. 0 or -1. */
struct pc_reader_status;
int quality_store(struct loader *L, const struct pc_reader_status *status,
		  const char *damage);

#endif /* ANALYZE_LOAD_STATE_H */
