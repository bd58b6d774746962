/* load_state.h - the state shared by the steps of loading one capture
 * (loader.c walks chunks, load_records.c decodes records, resolve.c builds
 * frames, quality.c summarizes). Not used outside the loader. */
#ifndef ANALYZE_LOAD_STATE_H
#define ANALYZE_LOAD_STATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "correlate/kernel_requests.h"
#include "correlate/request_feed.h"
#include "db/batch_insert.h"
#include "perfcap_format.h"
#include "util/hashmap.h"
#include "map_index.h"
#include "sample_groups.h"
#include "record_types.h"
#include "stack_store.h"
#include "syscall_windows.h"

struct symbolizer;
struct correlator;
struct ustack_state;
struct sql_writer;

#define KNOWN_CHUNK_TYPES  8  /* indices 1..7 used */

#define SYSCALL_NR_COUNTED 1024   /* numbers above are not split by source */

struct load_counters {
	uint64_t chunks[KNOWN_CHUNK_TYPES];
	uint64_t records[RECORD_TYPE_MAX + 1];
	uint64_t chunks_unknown;
	uint64_t records_unknown;
	uint64_t records_malformed;   /* bad record runs and inconsistent records */
	uint64_t kv_malformed;        /* unterminated key/value payloads */
	uint64_t stacks_duplicate;    /* a stack id defined twice: first kept */
	uint64_t modules_bad;         /* module records the symbolizer rejected */
	uint64_t maps_bad;            /* start >= end */
	uint64_t syscalls_by_nr[SYSCALL_NR_COUNTED]; /* SYSCALL records per number */
	uint64_t syscalls_summed;     /* ... of them written by agg (flag SUMMED) */
	uint64_t metrics_waits;       /* THREAD_METRIC records of the waits source (flag WAIT) */
	uint64_t requests_batched;    /* requests in REQUEST_BATCH records */
	uint64_t sockets_snapshot;    /* SOCKET records of the /proc snapshots (flag
				       * SNAPSHOT, filed under proc), in connections */
	struct hmap unknown_chunk_types;   /* (type, 0) -> count */
	struct hmap unknown_record_types;  /* (chunk type, record type) -> count */
};

struct load_statements {
	sqlite3_stmt *chunk;
	sqlite3_stmt *meta;
	sqlite3_stmt *stat;
	sqlite3_stmt *process;
	sqlite3_stmt *thread;
	sqlite3_stmt *map;
	sqlite3_stmt *module;
	/* the batched table of each record type (record_types.c): batch[t]
	 * points into batches[] at the first type of its table, NULL if none */
	struct batch_insert batches[RECORD_TYPE_MAX + 1];
	struct batch_insert *batch[RECORD_TYPE_MAX + 1];
	struct batch_insert connections; /* SOCKET records with flag SNAPSHOT */
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
	struct request_feed requests; /* socket calls and poll returns for requests.c */
	struct kernel_requests kreqs; /* REQUEST records (the req source) */
	struct syscall_windows scw;   /* SYSCALL_WINDOW records (syscall_windows.h) */
	int requests_from;            /* enum load_requests_from */
	unsigned format_minor;        /* of the capture (PC_FORMAT_MINOR of its writer) */
	struct sql_writer *writer;    /* runs the big tables' INSERTs; may be NULL */
	struct ustack_state *ust;     /* user stack copies (ustack_unwind.h); NULL if none */
	pthread_t prefetch_thread;    /* resolve.c: opens the modules' files ahead */
	int prefetching;
	uint64_t nsamples;
	uint64_t nevents;             /* events of EVENTS chunks: records, a
				       * REQUEST_BATCH counting its requests */
	uint64_t nsyscalls;           /* syscall_id of the last syscall */
	uint64_t noffcpu;             /* offcpu_id of the last OFFCPU record */
	uint64_t fault_weight;        /* page faults the FAULT records stand for */
	struct {                      /* load_gc.c: gc_pauses, for the quality rows */
		int present;          /* the recording has a known GC begin/end probe */
		uint64_t pauses, begin_unmatched, end_unmatched, unrecorded;
		uint64_t other_stops;  /* Go: world stops no collection made */
	} gc;
	uint64_t syscalls_unknown_nr; /* SYSCALL records whose number has no name */
	int has_record_end;           /* record.end_ns seen in STATS or END */
	struct chunk_row *chunk_rows; /* headers of the chunks read, in order */
	size_t nchunk_rows, chunk_rows_cap;
	uint64_t first_ts;
	uint64_t last_ts;
	int failed;                   /* database or memory error: stop */
	int row_jobs_failed;          /* a row job failed (row_job.h): set on the
					 INSERT thread, read once it is stopped */
	int profile_phases;           /* PERFCAP_IMPORT_PROFILE: time each phase */
	double phase_cpu[2];          /* CPU time of this thread, of the process at
				       * the current phase's start (profiling) */
};

/* load_records.c: decodes and stores one record of a record chunk. */
void load_record(struct loader *L, uint16_t chunk_type, const struct pc_rec *rec);

#define RECORD_BODY_MAX 256   /* bytes of the largest record struct */

/* One record as its decoder gets it. */
struct record_in {
	const struct pc_rec *rec;     /* as read: header and flags */
	const void *body;             /* copied into the type's struct, zero-filled */
	const uint8_t *tail;          /* the bytes after the struct */
	size_t tail_len;
	struct batch_insert *batch;   /* the type's table, or NULL */
	int64_t *row;                 /* its next row, when batch */
	uint8_t *kind;
};

/* Stores or hands on one record; 1 when it filled in->row, which the
 * caller then commits, 0 when not (no table, or a rejected record). */
typedef int (*record_decoder)(struct loader *L, const struct record_in *in);

/* What the loader knows about one record type (record_types.c). */
struct record_type {
	uint16_t id;                  /* PC_REC_* */
	const char *name;             /* record_type_name */
	const char *source;           /* record_type_source */
	size_t size;                  /* its struct, copied to record_in.body */
	record_decoder decode;
	const char *table;            /* batched into this table, or NULL */
	const char *columns;          /* the INSERT column list */
	int ncols;
};

/* The row of a known type, NULL for an unknown one. */
const struct record_type *record_type_get(uint16_t type);

/* The batches of the record types' tables: prepared, flushed, handed to
 * the INSERT thread, freed without writing. */
int record_batches_prepare(struct loader *L);
int record_batches_flush(struct loader *L);
void record_batches_use_writer(struct loader *L, struct sql_writer *w);
void record_batches_free(struct loader *L);

/* The decoders (load_records.c: capture content; load_events.c: event
 * source records). */
int decode_sample(struct loader *L, const struct record_in *in);
int decode_stack(struct loader *L, const struct record_in *in);
int decode_process(struct loader *L, const struct record_in *in);
int decode_thread(struct loader *L, const struct record_in *in);
int decode_map(struct loader *L, const struct record_in *in);
int decode_module(struct loader *L, const struct record_in *in);
int decode_exec(struct loader *L, const struct record_in *in);
int decode_exit(struct loader *L, const struct record_in *in);
int decode_switch(struct loader *L, const struct record_in *in);
int decode_wakeup(struct loader *L, const struct record_in *in);
int decode_offcpu(struct loader *L, const struct record_in *in);
struct tl_event;
int offcpu_correlate(void *ctx, const struct tl_event *ev);
int decode_fork(struct loader *L, const struct record_in *in);
int decode_sched_gap(struct loader *L, const struct record_in *in);
int waits_scale_pass(struct loader *L);   /* load_aggregates.c */
int decode_sched_task(struct loader *L, const struct record_in *in);
int decode_syscall(struct loader *L, const struct record_in *in);
int decode_syscall_window(struct loader *L, const struct record_in *in);
int decode_block(struct loader *L, const struct record_in *in);
int decode_socket(struct loader *L, const struct record_in *in);

/* connections.c: sets connections.role once every row is in. 0 or -1. */
int connections_set_roles(sqlite3 *db);
int decode_tcp_state(struct loader *L, const struct record_in *in);
int decode_tcp_retrans(struct loader *L, const struct record_in *in);
int decode_lock(struct loader *L, const struct record_in *in);
int decode_mutex(struct loader *L, const struct record_in *in);
int decode_fault(struct loader *L, const struct record_in *in);
int decode_probe(struct loader *L, const struct record_in *in);
int decode_request(struct loader *L, const struct record_in *in); /* load_requests.c */
int decode_request_batch(struct loader *L, const struct record_in *in); /* load_requests.c */
int decode_request_window(struct loader *L, const struct record_in *in); /* load_requests.c */
int decode_request_mark(struct loader *L, const struct record_in *in);   /* load_requests.c */
int requests_pass(struct loader *L);        /* load_requests.c: the requests table */
int probes_build(sqlite3 *db);              /* load_probes.c: the probes table */
int runtimes_build(sqlite3 *db);            /* load_runtimes.c: process_runtimes */
int gc_proxy_build(sqlite3 *db);            /* gc_proxy.c: JVM pauses without probes */
int gc_pauses_build(struct loader *L);      /* load_gc.c: gc_pauses, after probes */
int decode_ustack(struct loader *L, const struct record_in *in);
int decode_unwind(struct loader *L, const struct record_in *in);
int decode_thread_metric(struct loader *L, const struct record_in *in); /* load_aggregates.c */

/* load_records.c: prepares the insert statements, writes what is still
 * buffered, finalizes them. */
int load_prepare_statements(struct loader *L);
int load_flush_statements(struct loader *L);
void load_finalize_statements(struct loader *L);

/* resolve.c: resolves every defined stack into frames and stores stacks,
 * frames and stack_frames. 0 or -1. resolve_prefetch_start opens the
 * modules' files on a thread meanwhile (once the chunks are read and the
 * used stacks marked; nothing may use the stacks, maps or symbolizer until
 * resolve_stacks or resolve_prefetch_join, which loader_free calls). */
int resolve_prefetch_start(struct loader *L);
void resolve_prefetch_join(struct loader *L);
int resolve_stacks(struct loader *L);

/* quality_sources.c: the quality rows of the event sources. 0 or -1. */
struct quality_writer;
void quality_put_sources(struct quality_writer *w, struct loader *L);

/* quality.c: stores sample_counts and the quality table. 0 or -1. */
struct pc_reader_status;
int quality_store(struct loader *L, const struct pc_reader_status *status,
		  const char *damage);

#endif /* ANALYZE_LOAD_STATE_H */
