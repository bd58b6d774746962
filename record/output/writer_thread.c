/* writer_thread.c - compresses and writes chunks on a thread of its own.
 *
 * The consumer fills chunk buffers and submits them; this thread takes them
 * from a bounded FIFO queue in order (so the file keeps the order in which
 * chunks were submitted), calls pc_writer_add_chunk, and puts each emptied
 * buffer in the spare pool of its chunk type, from which submit hands the
 * consumer's stream of that type its next buffer: each stream gets back
 * buffers of its own size, already faulted in, so steady state recording
 * neither allocates nor touches fresh pages.
 *
 * Two policies apply here, where the chunks meet the file: --max-size
 * (size_limit.c admits or drops each chunk) and the flight recorder
 * (EVENTS chunks go to flight_ring.c instead of the file; the ring is
 * written before the first SYMBOLS or STATS chunk, or at the stop). Both
 * add their counters to the STATS chunk as it passes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight_ring.h"
#include "size_limit.h"
#include "util/util.h"
#include "writer_thread.h"

#define QUEUE_SLOTS 8

struct chunk_job {
	uint16_t type;
	uint16_t version;
	struct pc_buf buf;
	uint64_t count;
	uint64_t t_start;
	uint64_t t_end;
};

struct writer_thread {
	struct pc_writer *writer;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	struct chunk_job queue[QUEUE_SLOTS];
	unsigned head;    /* next job to write */
	unsigned queued;  /* jobs waiting */
	struct spare_pool spares[SPARE_TYPES]; /* by chunk type */
	bool stopping;
	int error;        /* first write error */
	uint64_t backpressure_waits;
	bool limited;     /* --max-size: limit is used */
	bool limit_hit;   /* a data chunk did not fit (under lock) */
	struct size_limit limit;
	bool flight;      /* flight recorder: EVENTS go to the ring */
	bool flight_written;
	uint64_t window_start_ns, chunks_kept;
	struct flight_ring ring;
};

void spare_pool_put(struct spare_pool *p, struct pc_buf *buf)
{
	unsigned smallest = 0;

	pc_buf_reset(buf);
	if (p->n < SPARES_PER_TYPE) {
		p->buf[p->n++] = *buf;
		buf->data = NULL;
		buf->cap = 0;
		return;
	}
	for (unsigned i = 1; i < p->n; i++)
		if (p->buf[i].cap < p->buf[smallest].cap)
			smallest = i;
	if (p->buf[smallest].cap < buf->cap) { /* keep the bigger */
		struct pc_buf out = p->buf[smallest];

		p->buf[smallest] = *buf;
		*buf = out;
	}
}

bool spare_pool_take(struct spare_pool *p, struct pc_buf *out)
{
	unsigned biggest = 0;

	if (!p->n)
		return false;
	for (unsigned i = 1; i < p->n; i++)
		if (p->buf[i].cap > p->buf[biggest].cap)
			biggest = i;
	*out = p->buf[biggest];
	p->buf[biggest] = p->buf[--p->n];
	return true;
}

static struct spare_pool *pool_of(struct writer_thread *wt, uint16_t type)
{
	return &wt->spares[type < SPARE_TYPES ? type : 0];
}

static void recycle_buffer(struct writer_thread *wt, uint16_t type, struct pc_buf *buf)
{
	pthread_mutex_lock(&wt->lock);
	spare_pool_put(pool_of(wt, type), buf);
	pthread_mutex_unlock(&wt->lock);
	pc_buf_free(buf); /* what the pool did not keep */
}

/* Takes the next job, waiting for one. Returns false when stopping and the
 * queue is empty. */
static bool take_job(struct writer_thread *wt, struct chunk_job *job)
{
	bool have = false;

	pthread_mutex_lock(&wt->lock);
	while (!wt->queued && !wt->stopping)
		pthread_cond_wait(&wt->not_empty, &wt->lock);
	if (wt->queued) {
		*job = wt->queue[wt->head];
		wt->head = (wt->head + 1) % QUEUE_SLOTS;
		wt->queued--;
		have = true;
		pthread_cond_signal(&wt->not_full);
	}
	pthread_mutex_unlock(&wt->lock);
	return have;
}

static void note_error(struct writer_thread *wt, int err)
{
	pthread_mutex_lock(&wt->lock);
	if (!wt->error)
		wt->error = err;
	pthread_mutex_unlock(&wt->lock);
}

/* The ring, once, before the chunks that follow all events. */
/* The first error pc_writer_add_chunk returned (-ENOSPC ...), or 0. */
static int writer_thread_error(struct writer_thread *wt)
{
	int err;

	pthread_mutex_lock(&wt->lock);
	err = wt->error;
	pthread_mutex_unlock(&wt->lock);
	return err;
}

static int write_flight_ring(struct writer_thread *wt)
{
	struct flight_ring *r = &wt->ring;
	uint64_t end;

	if (!wt->flight || wt->flight_written)
		return 0;
	wt->flight_written = true;
	wt->window_start_ns = flight_ring_window_start(r);
	wt->chunks_kept = r->chunks_kept;
	end = flight_ring_window_end(r);
	fprintf(stderr, "%s: flight recorder: kept the last %.1f s of events (%llu chunks); "
		"dropped %llu older chunks (%llu events)\n", PROGRAM_NAME,
		end > wt->window_start_ns ? (double)(end - wt->window_start_ns) / 1e9 : 0.0,
		(unsigned long long)wt->chunks_kept, (unsigned long long)r->chunks_dropped,
		(unsigned long long)r->events_dropped);
	return flight_ring_write(r, wt->writer);
}

static int add_stats(struct writer_thread *wt, struct chunk_job *job)
{
	struct pc_buf *b = &job->buf;
	int err = 0, n = 0;

	if (wt->flight) {
		err |= pc_buf_add_kv_u64(b, "flight.chunks_kept", wt->chunks_kept);
		err |= pc_buf_add_kv_u64(b, "flight.chunks_dropped", wt->ring.chunks_dropped);
		err |= pc_buf_add_kv_u64(b, "flight.events_dropped", wt->ring.events_dropped);
		err |= pc_buf_add_kv_u64(b, "flight.window_start_ns", wt->window_start_ns);
		n += 4;
	}
	if (wt->limited) {
		err |= pc_buf_add_kv_u64(b, "record.max_size.chunks_dropped", wt->limit.chunks_dropped);
		err |= pc_buf_add_kv_u64(b, "record.max_size.events_dropped", wt->limit.events_dropped);
		err |= pc_buf_add_kv_u64(b, "record.max_size.symbols_dropped",
					 wt->limit.symbols_dropped);
		n += 3;
	}
	job->count += (uint64_t)n;
	return err ? -ENOMEM : 0;
}

/* --max-size: may this chunk be written? */
static bool admit(struct writer_thread *wt, const struct chunk_job *job)
{
	bool ok;

	if (!wt->limited)
		return true;
	ok = size_limit_admit(&wt->limit, pc_writer_bytes(wt->writer), job->type, job->buf.data,
			      job->buf.len, job->count);
	if (wt->limit.hit) {
		pthread_mutex_lock(&wt->lock);
		wt->limit_hit = true;
		pthread_mutex_unlock(&wt->lock);
	}
	return ok;
}

static int write_job(struct writer_thread *wt, struct chunk_job *job)
{
	int err = 0;

	if (wt->flight && !wt->flight_written && job->type == PC_CHUNK_EVENTS)
		return flight_ring_push(&wt->ring, job->buf.data, job->buf.len, job->count,
					job->t_start, job->t_end);
	if (job->type == PC_CHUNK_SYMBOLS || job->type == PC_CHUNK_STATS)
		err = write_flight_ring(wt);
	if (!err && job->type == PC_CHUNK_STATS)
		err = add_stats(wt, job);
	if (!err && admit(wt, job))
		err = pc_writer_add_chunk(wt->writer, job->type, job->version, job->buf.data,
					  job->buf.len, job->count, job->t_start, job->t_end);
	return err;
}

static void *writer_main(void *arg)
{
	struct writer_thread *wt = arg;
	struct chunk_job job;
	int err;

	while (take_job(wt, &job)) {
		if (!writer_thread_error(wt)) {
			err = write_job(wt, &job);
			if (err)
				note_error(wt, err);
		}
		recycle_buffer(wt, job.type, &job.buf);
	}
	if (!writer_thread_error(wt)) {
		err = write_flight_ring(wt);
		if (err)
			note_error(wt, err);
	}
	return NULL;
}

static int init_policy(struct writer_thread *wt, const struct writer_policy *p)
{
	int err = 0;

	wt->limited = p && p->max_size;
	wt->flight = p && p->flight_size;
	if (wt->limited)
		err = size_limit_init(&wt->limit, p->max_size);
	if (!err && wt->flight)
		err = flight_ring_init(&wt->ring, p->flight_size);
	return err;
}

static void free_policy(struct writer_thread *wt)
{
	if (wt->limited)
		size_limit_free(&wt->limit);
	if (wt->flight)
		flight_ring_free(&wt->ring);
}

int writer_thread_start(struct writer_thread **out, struct pc_writer *w,
			const struct writer_policy *policy)
{
	struct writer_thread *wt = calloc(1, sizeof(*wt));
	int err;

	*out = NULL;
	if (!wt)
		return -ENOMEM;
	wt->writer = w;
	err = init_policy(wt, policy);
	if (err) {
		free_policy(wt);
		free(wt);
		return err;
	}
	pthread_mutex_init(&wt->lock, NULL);
	pthread_cond_init(&wt->not_empty, NULL);
	pthread_cond_init(&wt->not_full, NULL);
	err = pthread_create(&wt->thread, NULL, writer_main, wt);
	if (err) {
		free_policy(wt);
		free(wt);
		return -err;
	}
	*out = wt;
	return 0;
}

/* Under the lock: the next buffer of a stream of this type, from the
 * type's pool. Handing back whichever buffer came last (one list for all
 * types) gave the events stream the stacks' small buffer, which then grew
 * again by realloc; choosing by size still let the streams trade buffers,
 * and an events stream that found none regrew into fresh pages at every
 * flush (under nginx, page faults were a fifth of the recorder's CPU). A
 * big stream that finds none gets a buffer of its last one's size at
 * once, rather than growing one by doubling and copying. */
static void take_spare(struct writer_thread *wt, uint16_t type, size_t used, size_t cap,
		       struct pc_buf *out)
{
	if (spare_pool_take(pool_of(wt, type), out) && out->cap >= used)
		return;
	if (used <= SPARE_FRESH_MIN)
		return;
	pc_buf_free(out);
	out->data = malloc(cap);
	out->cap = out->data ? cap : 0;
}

int writer_thread_submit(struct writer_thread *wt, uint16_t type, uint16_t version,
			 struct chunk_buffer *cb)
{
	struct chunk_job *job;
	int err;

	if (!cb->buf.len)
		return writer_thread_error(wt);
	pthread_mutex_lock(&wt->lock);
	if (wt->queued == QUEUE_SLOTS)
		wt->backpressure_waits++;
	while (wt->queued == QUEUE_SLOTS)
		pthread_cond_wait(&wt->not_full, &wt->lock);
	job = &wt->queue[(wt->head + wt->queued) % QUEUE_SLOTS];
	job->type = type;
	job->version = version;
	job->buf = cb->buf;
	job->count = cb->count;
	job->t_start = cb->t_start;
	job->t_end = cb->t_end;
	wt->queued++;
	memset(&cb->buf, 0, sizeof(cb->buf));
	take_spare(wt, type, job->buf.len, job->buf.cap, &cb->buf);
	err = wt->error;
	pthread_cond_signal(&wt->not_empty);
	pthread_mutex_unlock(&wt->lock);
	cb->count = 0;
	cb->t_start = cb->t_end = 0;
	return err;
}

bool writer_thread_limit_hit(struct writer_thread *wt)
{
	bool hit;

	pthread_mutex_lock(&wt->lock);
	hit = wt->limit_hit;
	pthread_mutex_unlock(&wt->lock);
	return hit;
}

uint64_t writer_thread_backpressure_waits(struct writer_thread *wt)
{
	uint64_t n;

	pthread_mutex_lock(&wt->lock);
	n = wt->backpressure_waits;
	pthread_mutex_unlock(&wt->lock);
	return n;
}

int writer_thread_stop(struct writer_thread *wt)
{
	return writer_thread_stop_counted(wt, NULL);
}

int writer_thread_stop_counted(struct writer_thread *wt, struct writer_drops *drops)
{
	int err;

	pthread_mutex_lock(&wt->lock);
	wt->stopping = true;
	pthread_cond_signal(&wt->not_empty);
	pthread_mutex_unlock(&wt->lock);
	pthread_join(wt->thread, NULL);

	if (drops) {
		drops->max_size_events = wt->limited ? wt->limit.events_dropped : 0;
		drops->flight_events = wt->flight ? wt->ring.events_dropped : 0;
	}
	err = wt->error;
	free_policy(wt);
	for (unsigned t = 0; t < SPARE_TYPES; t++)
		for (unsigned i = 0; i < wt->spares[t].n; i++)
			pc_buf_free(&wt->spares[t].buf[i]);
	pthread_mutex_destroy(&wt->lock);
	pthread_cond_destroy(&wt->not_empty);
	pthread_cond_destroy(&wt->not_full);
	free(wt);
	return err;
}
