/* progress.c - the import progress line (see progress.h). */
#include <stdio.h>
#include <time.h>

#include "util/fmt.h"
#include "progress.h"

#define REDRAW_SECONDS 0.25

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void progress_init(struct progress *p, int enabled, uint64_t file_size)
{
	p->enabled = enabled;
	p->start = now_seconds();
	p->last = p->start - REDRAW_SECONDS;   /* draw at the first update */
	p->file_size = file_size;
	p->drawn = 0;
}

void progress_update(struct progress *p, uint64_t chunks, uint64_t bytes, uint64_t events)
{
	char c[FMT_BUF], b[FMT_BUF], t[FMT_BUF], e[FMT_BUF], r[FMT_BUF], v[FMT_BUF];
	double now, elapsed;

	if (!p->enabled)
		return;
	now = now_seconds();
	if (now - p->last < REDRAW_SECONDS)
		return;
	p->last = now;
	elapsed = now - p->start;
	fprintf(stderr, "\r\033[Kimporting: %s chunks, %s MiB of %s MiB (%s), %s events,"
		" %s events/s", fmt_count(c, sizeof(c), chunks),
		fmt_count(b, sizeof(b), bytes >> 20), fmt_count(t, sizeof(t), p->file_size >> 20),
		fmt_percent(r, sizeof(r), bytes, p->file_size), fmt_count(e, sizeof(e), events),
		fmt_count(v, sizeof(v), elapsed > 0 ? (uint64_t)((double)events / elapsed) : 0));
	fflush(stderr);
	p->drawn = 1;
}

void progress_done(struct progress *p)
{
	if (p->enabled && p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->drawn = 0;
}
