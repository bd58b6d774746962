/* ustack_unwind.h - the loader's side of user stack copies (format 1.2):
 * a first pass over the capture collects the modules' unwind tables and
 * the mappings; each USTACK record is then unwound as it is read (unwind/)
 * into a stack of its own (deduplicated), which replaces the frame-pointer
 * stack of the SAMPLE it belongs to. How each such stack was obtained and
 * why it stopped goes to the user_stack_unwinds table (docs/schema.md).
 * Captures without copies are read exactly as before. */
#ifndef ANALYZE_USTACK_UNWIND_H
#define ANALYZE_USTACK_UNWIND_H

#include <stdint.h>

#include "perfcap_format.h"

struct loader;
struct tl_event;
struct pc_reader;

/* Unwound stacks get ids from here up (the recorder's ids stay below). */
#define USTACK_ID_BASE 0x80000000u

/* The first pass: when the capture's META announces stack copies, reads
 * its UNWIND and MAP records, then rewinds. 0 or -1. */
int ustack_prepass(struct loader *L, struct pc_reader *reader);

/* A PC_REC_USTACK record of the main pass. */
void ustack_load(struct loader *L, const struct pc_rec *rec);

/* The user stack id a SAMPLE of tid at ts uses: the unwound one if a copy
 * of that sample was unwound, else ustack. */
uint32_t ustack_for_sample(struct loader *L, uint32_t tid, uint64_t ts, uint32_t ustack);

/* The user stack id an OFFCPU record of tid switched out at out_ts uses:
 * the unwound one if its switch-out copy was unwound, else ustack. */
uint32_t ustack_for_offcpu(struct loader *L, uint32_t tid, uint64_t out_ts, uint32_t ustack);

/* An OFFCPU event whose copy was not read yet (flag COPY_FOLLOWS: its own,
 * switched out at ev->start; COPY_SAME: the earlier interval's, switched
 * out at copy_ts) is held until that copy is unwound (offcpu_copies.h),
 * then handed to offcpu_correlate. wait: whether it waits. Returns 1 when
 * held, 0 when the caller hands it on now, -1 on error. Every OFFCPU event
 * passes here: its switch-in dates the held ones. */
int ustack_offcpu_hold(struct loader *L, const struct tl_event *ev, int wait, uint64_t copy_ts);

/* Format 1.9: the OFFCPU copy of tid's interval switched out at out_ts
 * refreshes the one at ref_ts, taken for the same fingerprint (registers
 * and stack top): when both are unwound, whether they agree is counted
 * (copies.refresh_*), the measure of how far COPY_SAME can be trusted.
 * 0 or -1. */
int ustack_offcpu_refresh(struct loader *L, uint32_t tid, uint64_t out_ts, uint64_t ref_ts);

/* An OFFCPU event given an earlier copy (COPY_SAME): counted. */
void ustack_offcpu_same(struct loader *L, int found);

/* After each EVENTS chunk (newest: its latest timestamp): hands on the
 * held events whose copy is overdue, OFFCPU_COPY_WAIT_NS older than the
 * latest OFFCPU or chunk time read; all of them with UINT64_MAX, at the
 * end. 0 or -1. */
int ustack_offcpu_expire(struct loader *L, uint64_t newest);

/* After the main pass: the user_stack_unwinds table and the STATS-like
 * counters (quality rows). 0 or -1. */
int ustack_store(struct loader *L);

void ustack_free(struct loader *L);

#endif /* ANALYZE_USTACK_UNWIND_H */
