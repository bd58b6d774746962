/* sql_writer.c - the INSERT thread (see sql_writer.h): a bounded FIFO of
 * jobs, a batch's slot or a call, under one mutex; the thread runs each
 * job without the lock, then marks the slot free. Each side is woken only when it sleeps,
 * so a busy pipeline costs no wakeups; a sleeping thread is woken once
 * WAKE_AT jobs wait (or when the loading thread itself must wait), not for
 * every job: each wakeup is a pair of context switches. */
#include <pthread.h>
#include <stdlib.h>

#include "batch_insert.h"
#include "sql_writer.h"

#define QUEUE_CAP 1024   /* a few tables' rings of BATCH_SLOTS may be queued at once */
#define WAKE_AT   4   /* jobs queued before a sleeping thread is woken */

struct sql_job {
	struct batch_insert *b;   /* a batch's slot, or NULL: fn(arg) */
	int slot;
	void (*fn)(void *arg);
	void *arg;
};

struct sql_writer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;          /* a job was queued, or stop */
	pthread_cond_t done;          /* a job finished */
	struct sql_job queue[QUEUE_CAP];
	int head, count;
	int running;                  /* a job is being written */
	int writer_sleeps;            /* the thread waits on work */
	int loader_sleeps;            /* the loading thread waits on done */
	int stop;
};

/* Wakes the thread if it sleeps while jobs wait. */
static void kick(struct sql_writer *w)
{
	if (w->writer_sleeps && w->count > 0)
		pthread_cond_signal(&w->work);
}

/* The loading thread sleeps until a job finishes; the thread must not be
 * left asleep with jobs queued (submit wakes it only for WAKE_AT). */
static void wait_done(struct sql_writer *w)
{
	kick(w);
	w->loader_sleeps = 1;
	pthread_cond_wait(&w->done, &w->lock);
	w->loader_sleeps = 0;
}

static void *writer_main(void *arg)
{
	struct sql_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct sql_job job;

		while (w->count == 0 && !w->stop) {
			w->writer_sleeps = 1;
			pthread_cond_wait(&w->work, &w->lock);
			w->writer_sleeps = 0;
		}
		if (w->count == 0)
			break;
		job = w->queue[w->head];
		w->head = (w->head + 1) % QUEUE_CAP;
		w->count--;
		w->running = 1;
		pthread_mutex_unlock(&w->lock);
		if (job.b)
			batch_run_slot(job.b, job.slot);
		else
			job.fn(job.arg);
		pthread_mutex_lock(&w->lock);
		if (job.b)
			job.b->in_flight[job.slot] = 0;
		w->running = 0;
		if (w->loader_sleeps)
			pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct sql_writer *sql_writer_start(void)
{
	struct sql_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		pthread_mutex_destroy(&w->lock);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->done);
		free(w);
		return NULL;
	}
	return w;
}

static void enqueue(struct sql_writer *w, struct sql_job job)
{
	pthread_mutex_lock(&w->lock);
	while (w->count == QUEUE_CAP)
		wait_done(w);
	if (job.b)
		job.b->in_flight[job.slot] = 1;
	w->queue[(w->head + w->count) % QUEUE_CAP] = job;
	w->count++;
	if (w->count >= WAKE_AT)
		kick(w);
	pthread_mutex_unlock(&w->lock);
}

void sql_writer_submit(struct sql_writer *w, struct batch_insert *b, int slot)
{
	enqueue(w, (struct sql_job){ .b = b, .slot = slot });
}

void sql_writer_call(struct sql_writer *w, void (*fn)(void *arg), void *arg)
{
	enqueue(w, (struct sql_job){ .fn = fn, .arg = arg });
}

void sql_writer_wait_slot(struct sql_writer *w, struct batch_insert *b, int slot)
{
	pthread_mutex_lock(&w->lock);
	while (b->in_flight[slot])
		wait_done(w);
	pthread_mutex_unlock(&w->lock);
}

/* Whether any of the ahead slots from slot on is queued or being written. */
static int any_in_flight(const struct batch_insert *b, int slot, int ahead)
{
	for (int i = 0; i < ahead; i++)
		if (b->in_flight[(slot + i) % b->ring])
			return 1;
	return 0;
}

void sql_writer_wait_slots(struct sql_writer *w, struct batch_insert *b, int slot, int ahead)
{
	pthread_mutex_lock(&w->lock);
	if (b->in_flight[slot])
		while (any_in_flight(b, slot, ahead))
			wait_done(w);
	pthread_mutex_unlock(&w->lock);
}

void sql_writer_drain(struct sql_writer *w)
{
	pthread_mutex_lock(&w->lock);
	while (w->count > 0 || w->running)
		wait_done(w);
	pthread_mutex_unlock(&w->lock);
}

void sql_writer_stop(struct sql_writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	free(w);
}
