/* stack_quality.h - how complete the user stacks of a capture are, and how
 * they were obtained: per process, per module (of the innermost frame),
 * per stop reason of the offline unwinder, for CPU samples and for the
 * blocked off-CPU intervals. Read from user_stack_unwinds, stacks and
 * sample_counts (docs/schema.md); whole capture, not the report scope.
 * The report's data quality renders it (report/report_unwind.c). */
#ifndef ANALYZE_STACK_QUALITY_H
#define ANALYZE_STACK_QUALITY_H

#include <stdint.h>
#include <sqlite3.h>

/* How one user stack was obtained. Complete: SQ_DWARF and SQ_FP. */
enum sq_method {
	SQ_DWARF,          /* unwound from a copy to the outermost frame */
	SQ_PARTIAL,        /* unwound from a copy, stopped early (a stop reason) */
	SQ_FP,             /* frame-pointer walk that reaches an entry point */
	SQ_FP_INCOMPLETE,  /* frame-pointer walk, truncated or probably truncated */
	SQ_METHOD_COUNT
};

struct sq_counts {
	uint64_t by_method[SQ_METHOD_COUNT];
	uint64_t none;     /* no user stack (kernel threads, errors) */
};

struct sq_row {            /* a process or a module */
	int64_t pid;       /* processes; -1 for modules */
	char *name;        /* comm, or the module path */
	struct sq_counts n;
};

#define SQ_ROWS_MAX 10     /* processes and modules listed, by samples */

struct stack_quality {
	int present;               /* the capture has unwound copies */
	struct sq_counts cpu;      /* CPU samples */
	struct sq_counts offcpu;   /* blocked off-CPU intervals */
	struct sq_row procs[SQ_ROWS_MAX], mods[SQ_ROWS_MAX];
	int nprocs, nmods;
	uint64_t procs_more, mods_more; /* rows left out (beyond SQ_ROWS_MAX) */
	struct sq_reuse {          /* copies standing for later intervals (format 1.9) */
		uint64_t same;     /* intervals given an earlier copy of their thread */
		uint64_t paired;   /* of them, whose copy was read */
		uint64_t agreed, differed, unverified; /* refresh copies against the reused one */
		uint64_t kernel;   /* intervals given a kept kernel stack (STATS sched.kstack.*) */
		uint64_t kernel_agreed, kernel_differed; /* walks again against the kept one */
	} reuse;
	char *stops[16];           /* stop reasons of CPU samples' unwinds... */
	uint64_t stop_samples[16]; /* ...and their samples, most first */
	int nstops;
};

/* Fills q (zeroed first). 0 (q->present 0 when there are no copies) or -1. */
int stack_quality_read(sqlite3 *db, struct stack_quality *q);

void stack_quality_free(struct stack_quality *q);

/* Stacks that reached an outermost frame. */
uint64_t sq_complete(const struct sq_counts *c);

/* Stacks there were (none excluded). */
uint64_t sq_total(const struct sq_counts *c);

const char *sq_method_name(enum sq_method m);

#endif /* ANALYZE_STACK_QUALITY_H */
