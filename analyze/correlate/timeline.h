/* timeline.h - the capture's events in time order, for the correlations.
 *
 * Records arrive in capture order, which is consumption order: per-CPU
 * buffers interleave, so small reversals occur (format/SPEC.md 2.2). The
 * timeline keeps a reorder buffer: events are added as they are read and
 * released, sorted by their key (the time the record was emitted: the end
 * of an interval), once no earlier event can still arrive, i.e. once they
 * are older than the newest key seen minus TIMELINE_WINDOW_NS. Memory is
 * bounded by that window. An event that arrives after later events were
 * released is "late": it is still handed over, flagged, at once. */
#ifndef ANALYZE_TIMELINE_H
#define ANALYZE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_WINDOW_NS 2000000000ull   /* 2 s */

enum tl_type {
	TL_SWITCH = 1,  /* tid/pid: prev; tid2/pid2: next; u1: cpu; u2: prev_state */
	TL_WAKEUP,      /* tid/pid: woken; tid2/pid2: waker; u1: target cpu; flags: new */
	TL_OFFCPU,      /* [start, key]; u1: state; u2: waker; arg: ustack << 32 | kstack; id */
	TL_SYSCALL,     /* [start, key]; u1: nr; u2: args[1]; arg: args[0]; ret; id */
	TL_BLOCK,       /* key: completion; tid/pid: submitter; u1: bytes;
			 * arg: queue_ns; ret: service_ns */
	TL_SOCKET,      /* tid/pid; u1: fd */
	TL_GAP,         /* the sched source saw nothing in [key, arg) (SCHED_GAP) */
	TL_TASK,        /* tid/pid as a sched window opened; u1: cpu; u2: enum state_kind;
			 * arg: its run time counter */
	TL_TASK_CLOSE,  /* ... as a sched window closed (1.13) */
	TL_TASK_EXIT,   /* ... as it exited between two sched windows (1.13) */
};

#define TL_F_LATE 0x8000u  /* released after later events: out of order */
#define TL_F_NEW  0x1u     /* TL_WAKEUP: a new task */

struct tl_event {
	uint64_t key;       /* sort key: the end time */
	uint64_t start;     /* start of an interval; == key for instants */
	uint64_t arg;
	int64_t  ret;
	uint64_t id;        /* row id in its table (syscalls, offcpu) */
	uint32_t tid, pid;
	uint32_t tid2, pid2;
	uint32_t u1, u2;
	uint16_t type;      /* enum tl_type */
	uint16_t flags;
	float weight;       /* what a syscall stands for (windows); 0: 1 */
};

typedef int (*tl_sink)(void *ctx, const struct tl_event *ev);

struct timeline {
	struct tl_event *pending;   /* sorted by key; [head, len) not yet released */
	size_t head, len, cap;
	struct tl_event *incoming;  /* added since the last advance, capture order */
	size_t in_len, in_cap;
	struct tl_event *scratch;   /* merge buffer */
	size_t scratch_cap;
	uint64_t max_key;           /* newest key added */
	uint64_t released_key;      /* key of the last event released */
	int released_any;
	uint64_t late;              /* events that arrived too late */
	size_t peak;                /* most events held at once */
};

void timeline_init(struct timeline *t);
void timeline_free(struct timeline *t);

/* Adds an event (copied). Late events go to sink at once, flagged.
 * 0, -ENOMEM, or the sink's negative return. */
int timeline_add(struct timeline *t, const struct tl_event *ev, tl_sink sink, void *ctx);

/* Sorts what was added and releases, in key order, every event older than
 * the newest key minus TIMELINE_WINDOW_NS. Call after each chunk. */
int timeline_advance(struct timeline *t, tl_sink sink, void *ctx);

/* Releases everything (the capture has ended). */
int timeline_finish(struct timeline *t, tl_sink sink, void *ctx);

#endif /* ANALYZE_TIMELINE_H */
