/* ustack_copy.h - user stack copies (PERFCAP_EV_USTACK): turned into
 * PC_REC_USTACK capture records, counted, and remembered per process so
 * that the end of the recording embeds the unwind tables of the modules
 * those processes map (unwind_tables.h). */
#ifndef RECORD_USTACK_COPY_H
#define RECORD_USTACK_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/chunk_buffer.h"

struct consumer;

struct ustack_copy_stats {
	uint64_t copies;          /* USTACK records written */
	uint64_t bytes;           /* stack bytes written */
	uint64_t full;            /* copies that filled the window (maybe cut) */
	uint64_t faulted;         /* copies ended early by an unreadable page */
	uint64_t at_start;        /* copies stopped above the process's first sp */
	uint64_t empty;           /* copies with no byte (sp unreadable) */
	uint64_t malformed;       /* kernel records that failed the checks */
};

/* Handles one PERFCAP_EV_USTACK kernel record of source (cpu or sched). */
void ustack_copy_handle(struct consumer *c, int source, const void *rec, size_t size);

/* Whether some copy of process pid was written. */
bool ustack_copy_has_pid(uint32_t pid);

const struct ustack_copy_stats *ustack_copy_stats(void);

/* The counters as STATS keys (ustack.*). 0 or -ENOMEM. */
int ustack_copy_stats_kv(struct chunk_buffer *kv);

void ustack_copy_free(void);

#endif /* RECORD_USTACK_COPY_H */
