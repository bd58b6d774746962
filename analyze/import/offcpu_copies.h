/* offcpu_copies.h - OFFCPU records whose user stack copy comes after them
 * (format 1.7, OFFCPU flag COPY_FOLLOWS: the recorder copied the stack
 * when the thread returned to user space, after it had sent the record),
 * or whose copy, an earlier interval's (format 1.9, COPY_SAME), was not
 * read yet: several may wait for one copy.
 * The loader holds such a record's correlator event here until the copy
 * is unwound, or until OFFCPU_COPY_WAIT_NS of capture time has passed
 * without it (the thread exited, the copy was lost: counted), then hands
 * it on with the copy's stack, or with the record's own. Copies that come
 * first (format 1.2-1.6, or --offcpu-copy switch-out) never wait here. */
#ifndef ANALYZE_OFFCPU_COPIES_H
#define ANALYZE_OFFCPU_COPIES_H

#include <stdint.h>

#include "correlate/timeline.h"

/* Half the timeline's reorder window: a held event released this late is
 * still in time for the correlator. */
#define OFFCPU_COPY_WAIT_NS (TIMELINE_WINDOW_NS / 2)

struct offcpu_copies;

/* Receives a released event (arg's upper half: the user stack id). */
typedef int (*offcpu_release_fn)(void *ctx, const struct tl_event *ev);

struct offcpu_copies *offcpu_copies_new(void);
void offcpu_copies_free(struct offcpu_copies *w);

/* Holds a TL_OFFCPU event of thread ev->tid until the copy of its
 * interval switched out at copy_ts comes (its own: ev->start). 0 or -1. */
int offcpu_copies_hold(struct offcpu_copies *w, const struct tl_event *ev, uint64_t copy_ts);

/* The copy of tid's interval switched out at out_ts became stack ustack:
 * releases the events held for it, if any, with that stack. 0, or what
 * release returned when negative. */
int offcpu_copies_arrived(struct offcpu_copies *w, uint32_t tid, uint64_t out_ts,
			  uint32_t ustack, offcpu_release_fn release, void *ctx);

/* Releases, in the order they were held, the events older than newest
 * (the latest OFFCPU switch-in read) minus OFFCPU_COPY_WAIT_NS; all of
 * them when newest is UINT64_MAX. 0 or release's negative return. */
int offcpu_copies_expire(struct offcpu_copies *w, uint64_t newest, offcpu_release_fn release,
			 void *ctx);

/* Events released with their copy, and without one (it never came). */
void offcpu_copies_counts(const struct offcpu_copies *w, uint64_t *paired, uint64_t *missing);

/* The same, of events that waited for an earlier interval's copy. */
void offcpu_copies_same_counts(const struct offcpu_copies *w, uint64_t *paired,
			       uint64_t *missing);

#endif /* ANALYZE_OFFCPU_COPIES_H */
