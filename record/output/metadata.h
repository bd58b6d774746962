/* metadata.h - the META chunk: everything needed to know later what was
 * recorded, where, how and with which kernel-side code. */
#ifndef RECORD_METADATA_H
#define RECORD_METADATA_H

#include <stdint.h>
#include <sys/types.h>

#include "chunk_buffer.h"
#include "cli.h"
#include "session/privileges.h"

struct run_info {
	uint64_t start_monotonic_ns;   /* read back to back with ... */
	uint64_t start_realtime_ns;    /* ... this one */
	pid_t    command_pid;          /* TARGET_COMMAND */
	const struct run_identity *command_identity; /* who the command runs as */
	const char *privileges_kept;   /* capabilities kept after attach */
};

/* Fills cb with the META key/value pairs of the run (the sources' keys
 * come from session_meta). 0 or -ENOMEM. */
int metadata_build(struct chunk_buffer *cb, const struct record_options *o,
		   const struct run_info *run);

#endif /* RECORD_METADATA_H */
