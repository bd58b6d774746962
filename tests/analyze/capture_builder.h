/* capture_builder.h - writes small synthetic captures with the format
 * writer so analyzer tests know the exact expected answer.
 *
 * Process 100 "app" (threads 100 "app", 101 "worker") maps /usr/bin/app at
 * APP_BASE; process 200 "other" maps the same binary at OTHER_BASE. The
 * capture embeds the app's symbols (_start, main, caller, A, B) and kernel
 * symbols (do_syscall_64, ksys_read; pipe_read in event captures). Stacks,
 * innermost first:
 *   STACK_A        pid 100: A <- caller <- main <- _start
 *   STACK_B        pid 100: B <- caller <- main <- _start
 *   STACK_KERNEL   kernel:  ksys_read <- do_syscall_64
 *   STACK_UNMAPPED pid 100: 0x7000000000 (no map) <- caller <- main <- _start
 *   STACK_NOSYMS   pid 100: libnosyms.so+0x1100 <- caller <- main <- _start
 *   STACK_OTHER    pid 200: A <- caller <- main <- _start
 *   STACK_TRUNC    pid 100: A <- caller, flagged truncated
 *   STACK_SHORT    pid 100: A <- caller, not flagged (probably truncated)
 *   STACK_JUNK     pid 100: A <- 0x7000000000 (no map: a frame-pointer walk
 *                  gone astray) <- caller <- main <- _start (only when used)
 *   STACK_KPIPE    kernel:  pipe_read <- do_syscall_64 (event captures only:
 *                  a kernel stack that tells a wait, wait_stacks.c)
 * Chunk order: META PROCS STACKS EVENTS(A samples) EVENTS(the rest)
 * [unknown chunk] SYMBOLS STATS END. */
#ifndef TESTS_CAPTURE_BUILDER_H
#define TESTS_CAPTURE_BUILDER_H

#include <stdint.h>

#define APP_BASE   0x555555554000ull
#define OTHER_BASE 0x560000000000ull
#define NOSYMS_BASE 0x7f0000000000ull

enum {
	STACK_A = 0, STACK_B, STACK_KERNEL, STACK_UNMAPPED, STACK_NOSYMS,
	STACK_OTHER, STACK_TRUNC, STACK_SHORT, STACK_JUNK, STACK_KPIPE,
};

struct capture_spec {
	int a;                /* samples on STACK_A, tid 100 */
	int b;                /* samples on STACK_B, tid 100 */
	int b_worker;         /* samples on STACK_B, tid 101 */
	int a_kernel;         /* samples on STACK_A with STACK_KERNEL */
	int kernel_only;      /* samples with only STACK_KERNEL (pid 100) */
	int unmapped;         /* samples on STACK_UNMAPPED */
	int nosyms;           /* samples on STACK_NOSYMS */
	int other;            /* samples on STACK_OTHER (pid 200) */
	int truncated;        /* samples on STACK_TRUNC */
	int short_stack;      /* samples on STACK_SHORT */
	int junk;             /* samples on STACK_JUNK (the stack is written only then) */
	int no_stack;         /* samples with neither stack */
	int unknown_content;  /* add a chunk of type 99 and records of type 200 */
	int no_end;           /* finish without an END chunk */
	uint64_t lost_kernel;
	uint64_t lost_user;
};

/* File offsets where each chunk ends (after the file header). */
struct capture_layout {
	uint64_t chunk_end[16];
	uint16_t chunk_type[16];
	int nchunks;
};

/* Writes the capture; returns 0 or -errno. layout may be NULL. */
int build_capture(const char *path, const struct capture_spec *spec,
		  struct capture_layout *layout);

/* The basic answer: 300 samples in A, 100 in B, through caller. */
struct capture_spec capture_spec_basic(void);

/* An event capture: META (record.start_ns and sources from ev, when set),
 * the same PROCS, STACKS and SYMBOLS as above, ev's records in EVENTS
 * chunks of ev->per_chunk records, STATS (record.end_ns when set, and
 * ev->stats), END. Returns 0 or -errno. */
struct event_capture;
int build_event_capture(const char *path, const struct event_capture *ev);

#endif /* TESTS_CAPTURE_BUILDER_H */
