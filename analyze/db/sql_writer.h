/* sql_writer.h - a thread that runs the loader's full multi-row INSERT
 * batches while the loading thread decodes and correlates the next
 * records: SQLite work and the rest of the import overlap on two cores.
 * The connection is not serialized (no mutex per SQLite call): the loading
 * thread must call sql_writer_drain before it uses the database itself
 * (the loader does before key/value chunks; records go through batches,
 * or as row jobs when they have statements of their own). A batch
 * keeps a ring of up to BATCH_SLOTS buffers: it fills one while the writer
 * empties others (batch_insert.c); rows of one table keep their order. */
#ifndef ANALYZE_SQL_WRITER_H
#define ANALYZE_SQL_WRITER_H

struct batch_insert;
struct sql_writer;

/* Starts the thread. NULL on failure (the caller then inserts inline). */
struct sql_writer *sql_writer_start(void);

/* Queues slot of b (BATCH_ROWS rows) and returns; blocks while the queue
 * is full. */
void sql_writer_submit(struct sql_writer *w, struct batch_insert *b, int slot);

/* Queues fn(arg), to run on the thread after the jobs queued before it
 * (a row stored with a statement of its own: row_job.h). */
void sql_writer_call(struct sql_writer *w, void (*fn)(void *arg), void *arg);

/* Blocks until slot of b is no longer queued or being written. */
void sql_writer_wait_slot(struct sql_writer *w, struct batch_insert *b, int slot);

/* Returns at once if slot of b is free; else blocks until the ahead slots
 * from slot on all are: a loading thread that outruns the writer then
 * sleeps once per ahead batches instead of once per batch (each sleep and
 * wakeup is a pair of context switches). */
void sql_writer_wait_slots(struct sql_writer *w, struct batch_insert *b, int slot, int ahead);

/* Blocks until every queued batch is written. */
void sql_writer_drain(struct sql_writer *w);

/* Drains, stops and frees the thread. NULL is accepted. */
void sql_writer_stop(struct sql_writer *w);

#endif /* ANALYZE_SQL_WRITER_H */
