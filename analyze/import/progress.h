/* progress.h - one progress line on stderr while a capture is imported:
 * chunks and bytes read, events and events per second. Only when stderr is
 * a terminal; redrawn at most four times a second and erased at the end. */
#ifndef ANALYZE_PROGRESS_H
#define ANALYZE_PROGRESS_H

#include <stdint.h>

struct progress {
	int enabled;
	double start;
	double last;
	uint64_t file_size;
	int drawn;
};

/* enabled: the caller's choice (normally isatty(2)). */
void progress_init(struct progress *p, int enabled, uint64_t file_size);
void progress_update(struct progress *p, uint64_t chunks, uint64_t bytes, uint64_t events);
void progress_done(struct progress *p);

#endif /* ANALYZE_PROGRESS_H */
