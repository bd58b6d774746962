/* jvm_perfmap.h - asks running HotSpot JVMs to write their perf map
 * (/tmp/perf-PID.map) at the end of a recording, `--jvm-perfmap`.
 *
 * A JVM started without -XX:+DumpPerfMapAtExit and still running when the
 * recording ends leaves its JIT frames unnamed. JDK 17's diagnostic
 * command Compiler.perfmap writes the map on demand; this is what
 * `jcmd PID Compiler.perfmap` does, spoken directly over HotSpot's attach
 * protocol so no JDK tools need be installed on the recorded host:
 *   1. the attach socket /tmp/.java_pid<NSPID> (seen through
 *      /proc/PID/root) exists, or is made to: an empty .attach_pid<NSPID>
 *      trigger file in the JVM's /tmp, owned by its user, then SIGQUIT,
 *      then up to 5 s for the socket;
 *   2. a child process with the JVM's uid and gid (HotSpot accepts peers of
 *      its own effective uid only) connects and sends protocol 1, command
 *      "jcmd", argument "Compiler.perfmap"; the reply starts with "0" on
 *      success.
 * Only processes that map libjvm.so are asked, and only with the option:
 * a JVM started with -XX:+DisableAttachMechanism (or -Xrs) answers
 * SIGQUIT with a thread dump on its stdout instead. The recorder then
 * reads the map like any other (perfmap.c). Each JVM asked, and each that
 * answered, is counted (STATS jit.jvm_perfmap.*); a failure is named.
 */
#ifndef RECORD_JVM_PERFMAP_H
#define RECORD_JVM_PERFMAP_H

#include <stdint.h>

#include "output/chunk_buffer.h"
#include "processes.h"

struct jvm_perfmap_stats {
	uint64_t asked;           /* JVMs asked to write their map */
	uint64_t written;         /* of which answered "0" */
	uint64_t failed;          /* no socket, refused, timed out, error reply */
};

/* Asks every live traced process that maps libjvm.so. */
void jvm_perfmaps_request(const struct process_table *pt, struct jvm_perfmap_stats *st);

/* Asks one process (pid as seen from the recorder). 0, or -1 with why. */
int jvm_perfmap_request(uint32_t pid, char *why, size_t len);

/* STATS jit.jvm_perfmap.asked, .written, .failed when any was asked. */
int jvm_perfmap_stats_kv(struct chunk_buffer *kv, const struct jvm_perfmap_stats *st);

#endif /* RECORD_JVM_PERFMAP_H */
