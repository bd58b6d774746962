/* socket_snapshot.h - the sockets of the traced processes, read from /proc
 * at the start and at the end of a recording, and once for each process
 * followed later (on by default, whatever -e says): who is a client of
 * the traced service and who is an upstream it depends on, without the
 * net source's per-call cost.
 *
 * A snapshot reads, for each traced process, its socket fds
 * (/proc/PID/fd) and the TCP/UDP tables of its network namespace, and
 * writes one SOCKET record per inet socket with flag PC_SOCK_F_SNAPSHOT
 * (the TCP state in the record's last u32, the socket inode as cookie).
 * For each connection whose other end is in the same namespace (its
 * reverse tuple is in the table: loopback, or an address of this host) it
 * then scans /proc/(every pid)/fd once to find the process holding that
 * end, and writes that process's socket and its listening sockets with
 * PC_SOCK_F_SNAPSHOT | PC_SOCK_F_PEER, plus a PROC record describing it.
 * The scan is bounded (SNAPSHOT_BUDGET_NS, SNAPSHOT_BUDGET_FDS); ends not
 * found are counted, never guessed. */
#ifndef RECORD_SOCKET_SNAPSHOT_H
#define RECORD_SOCKET_SNAPSHOT_H

#include <stdint.h>

#include "consumer.h"
#include "util/u64_table.h"

#define SNAPSHOT_BUDGET_NS  (200ull * 1000 * 1000) /* of the /proc/PID/fd scan */
#define SNAPSHOT_BUDGET_FDS 200000u                 /* fds read by the scan */

/* STATS sockets.* (stats_chunk.c) */
struct socket_snapshot_stats {
	uint64_t snapshots;          /* snapshots taken */
	uint64_t sockets;            /* SOCKET records of traced processes */
	uint64_t peer_sockets;       /* ... of peer processes (flag PEER) */
	uint64_t peers_resolved;     /* local connection ends whose owner was found */
	uint64_t peers_unresolved;   /* ... not found (budget, other pid namespace, gone) */
	uint64_t budget_hits;        /* scans stopped by the budget */
	uint64_t fds_scanned;        /* fds read by the peer scans */
	uint64_t procs_unreadable;   /* traced processes whose fds could not be read */
	uint64_t records_failed;     /* out of memory */
	uint64_t ns_total, ns_max;   /* time the snapshots took */
};

struct socket_snapshot {
	struct socket_snapshot_stats stats;
	struct u64_table described;  /* peer pids given a PROC record */
	struct u64_table known;      /* followed pids: 0 snapshotted, else when
				      * they were first listed (100 ms units, +1) */
};

void socket_snapshot_init(struct socket_snapshot *s);

/* Takes one snapshot of pids (NULL: the live processes of c's process
 * table, for -a) into c's EVENTS (records counted under the proc source)
 * and PROCS buffers. */
void socket_snapshot_take(struct socket_snapshot *s, struct consumer *c,
			  const uint32_t *pids, uint32_t npids);

/* A process followed after the first snapshot (a fork of a target, the
 * command's children) gets a snapshot of its own once it has been followed
 * for SNAPSHOT_NEW_AFTER_NS (a new process has no connections yet): call
 * with every followed pid, about once a second. Processes already
 * snapshotted are left alone; the others are not written again, but
 * their ends of the new processes' connections count as found. */
#define SNAPSHOT_NEW_AFTER_NS (1000ull * 1000 * 1000)
void socket_snapshot_new(struct socket_snapshot *s, struct consumer *c,
			 const uint32_t *followed, uint32_t n, uint64_t now_ns);

void socket_snapshot_free(struct socket_snapshot *s);

#endif /* RECORD_SOCKET_SNAPSHOT_H */
