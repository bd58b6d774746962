/* writer_thread.c - compresses and writes chunks on a thread of its own.
 *
 * The consumer fills chunk buffers and submits them; this thread takes them
 * from a bounded FIFO queue in order (so the file keeps the order in which
 * chunks were submitted), calls pc_writer_add_chunk, and puts the emptied
 * buffers on a spare list that submit hands back to the consumer, so steady
 * state recording does not allocate.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "writer_thread.h"

#define QUEUE_SLOTS 8
#define SPARE_SLOTS (QUEUE_SLOTS + 4)

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
	struct pc_buf spares[SPARE_SLOTS];
	unsigned nspares;
	bool stopping;
	int error;        /* first write error */
	uint64_t backpressure_waits;
};

static void recycle_buffer(struct writer_thread *wt, struct pc_buf *buf)
{
	pc_buf_reset(buf);
	pthread_mutex_lock(&wt->lock);
	if (wt->nspares < SPARE_SLOTS) {
		wt->spares[wt->nspares++] = *buf;
		buf->data = NULL;
	}
	pthread_mutex_unlock(&wt->lock);
	pc_buf_free(buf);
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

static void *writer_main(void *arg)
{
	struct writer_thread *wt = arg;
	struct chunk_job job;

	while (take_job(wt, &job)) {
		if (!writer_thread_error(wt)) {
			int err = pc_writer_add_chunk(wt->writer, job.type, job.version,
						      job.buf.data, job.buf.len, job.count,
						      job.t_start, job.t_end);
			if (err)
				note_error(wt, err);
		}
		recycle_buffer(wt, &job.buf);
	}
	return NULL;
}

int writer_thread_start(struct writer_thread **out, struct pc_writer *w)
{
	struct writer_thread *wt = calloc(1, sizeof(*wt));
	int err;

	*out = NULL;
	if (!wt)
		return -ENOMEM;
	wt->writer = w;
	pthread_mutex_init(&wt->lock, NULL);
	pthread_cond_init(&wt->not_empty, NULL);
	pthread_cond_init(&wt->not_full, NULL);
	err = pthread_create(&wt->thread, NULL, writer_main, wt);
	if (err) {
		free(wt);
		return -err;
	}
	*out = wt;
	return 0;
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
	if (wt->nspares)
		cb->buf = wt->spares[--wt->nspares];
	err = wt->error;
	pthread_cond_signal(&wt->not_empty);
	pthread_mutex_unlock(&wt->lock);
	cb->count = 0;
	cb->t_start = cb->t_end = 0;
	return err;
}

int writer_thread_error(struct writer_thread *wt)
{
	int err;

	pthread_mutex_lock(&wt->lock);
	err = wt->error;
	pthread_mutex_unlock(&wt->lock);
	return err;
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
	int err;

	pthread_mutex_lock(&wt->lock);
	wt->stopping = true;
	pthread_cond_signal(&wt->not_empty);
	pthread_mutex_unlock(&wt->lock);
	pthread_join(wt->thread, NULL);

	err = wt->error;
	for (unsigned i = 0; i < wt->nspares; i++)
		pc_buf_free(&wt->spares[i]);
	pthread_mutex_destroy(&wt->lock);
	pthread_cond_destroy(&wt->not_empty);
	pthread_cond_destroy(&wt->not_full);
	free(wt);
	return err;
}
