/* processes.h - what the recorder knows about each process it has seen:
 * it reads /proc the first time a process shows up (or after an exec) and
 * emits PC_REC_PROC / PC_REC_THREAD / PC_REC_MAP records; it tracks thread
 * names; and it keeps each address space's executable mappings so user ips
 * can be turned into (module, file offset) at the end.
 *
 * Records carry the timestamp of the event that caused the read (the
 * sample or exec), so a mapping's record is never later than the first
 * sample that needed it.
 *
 * An address space is one process image: a pid gets a new one at exec and
 * when the pid is reused. Stacks are deduplicated per address space, so one
 * stack never mixes addresses of two images.
 *
 * Exited processes, replaced images and their threads are forgotten a
 * little later (evict.h), so the tables hold what is alive, not
 * everything ever seen.
 */
#ifndef RECORD_PROCESSES_H
#define RECORD_PROCESSES_H

#include <stdbool.h>
#include <stdint.h>

#include "output/chunk_buffer.h"
#include "modules.h"
#include "util/u64_table.h"

struct proc_map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t module;            /* MODULE_NONE: anonymous executable memory */
};

struct address_space {
	uint32_t pid;
	bool     gone;              /* /proc/PID vanished: stop re-reading */
	uint64_t last_read_ns;
	uint64_t reread_interval_ns;
	uint64_t born_ns;           /* made (exec, first sight): young for YOUNG_NS */
	struct proc_map *maps;      /* sorted by start; every mapping ever seen */
	uint32_t nmaps;
	uint32_t cap;
	uint64_t retired_ns;        /* replaced (exec, pid reuse) at this
				     * monotonic time; 0: still its process's */
	bool     free;              /* evicted: the slot waits for reuse */
};

/* The JIT ips of an evicted address space, for its perf map at the end. */
struct evicted_jit {
	uint32_t pid;
	uint64_t start_ns;          /* of the process, for its perf map's age */
	struct addr_list hits;
};

struct process {
	uint32_t pid;
	uint32_t aspace;            /* index of the current address space */
	uint64_t start_ns;          /* from /proc/PID/stat; 0 if unknown */
	bool     info_pending;      /* /proc not read yet for this image */
	bool     exited;
	uint64_t exited_ns;         /* monotonic time the exit was seen */
};

struct thread {
	uint32_t tid;
	uint32_t pid;
	char     comm[16];
};

struct process_table {
	struct process *procs;
	uint32_t nprocs, procs_cap;
	struct u64_table proc_by_pid;
	struct address_space *aspaces;
	uint32_t naspaces, aspaces_cap;
	struct thread *threads;
	uint32_t nthreads, threads_cap;
	struct u64_table thread_by_tid;
	struct module_registry modules;
	struct chunk_buffer *out;   /* PROCS chunk being filled */
	/* evict.c */
	uint32_t *free_aspaces;     /* evicted address space slots, for reuse */
	uint32_t nfree_aspaces, free_aspaces_cap;
	struct evicted_jit *jit;    /* JIT ips of evicted address spaces */
	uint32_t njit, jit_cap;
	uint64_t stack_ips_dead;    /* ips of forgotten stacks still in the arena */
	/* statistics */
	uint64_t procs_seen;
	uint64_t procs_unreadable;
	uint64_t records_failed;    /* out of memory while adding records */
	uint64_t procs_evicted;     /* exited processes forgotten */
	uint64_t procs_evicted_live; /* live ones forgotten over the cap */
	uint64_t aspaces_evicted;   /* address spaces forgotten (stacks resolved) */
	uint64_t threads_evicted;   /* threads forgotten (their process's, or over the cap) */
	uint64_t jit_ips_dropped;   /* JIT ips of evicted images past the cap */
	uint64_t last_born_ns;      /* when the youngest image was made */
	uint64_t evicted_unmapped;  /* user ips outside every mapping, of evicted images */
	uint64_t evicted_jit_unnamed; /* JIT ips of evicted images with no perf map */
	uint32_t procs_peak, threads_peak, aspaces_peak; /* table sizes */
};

void processes_init(struct process_table *pt, struct chunk_buffer *out);

/* Accounts a sample of (pid, tid) taken at ts with thread name comm:
 * reads /proc for a new process, notes new or renamed threads. Returns the
 * index of the address space the sample's user stack belongs to. */
uint32_t processes_on_sample(struct process_table *pt, uint32_t pid, uint32_t tid,
			     const char *comm, uint64_t ts);

/* A thread of a process that is not traced (the other side of a context
 * switch, a waker): notes its name (a THREAD record when new or renamed),
 * reads nothing from /proc. */
void processes_on_thread(struct process_table *pt, uint32_t pid, uint32_t tid,
			 const char *comm, uint64_t ts);

/* pid called exec: a new address space starts. With read_now /proc is read
 * at once (short-lived processes), else at the pid's next sample. */
void processes_on_exec(struct process_table *pt, uint32_t pid, uint32_t tid,
		       const char *comm, uint64_t ts, bool read_now);

void processes_on_exit(struct process_table *pt, uint32_t pid);

/* Whether an image is young at now (its first half second after exec or
 * first sight, when it maps its libraries): the recorder then polls its
 * rings more often, so that its maps are re-read in time. */
bool processes_any_young(const struct process_table *pt, uint64_t now);

/* When the process pid of the table started (/proc/PID/stat, ns since
 * boot), 0 if unknown or not in the table. */
uint64_t processes_start_ns(struct process_table *pt, uint32_t pid);

/* A process that is not traced but is named by a record (the other end of
 * a traced process's loopback connection, socket_snapshot.c): a PROC
 * record from /proc/PID/stat, exe and cmdline, unless pid is in the table
 * (already described). Reads no maps or threads; does not add pid to the
 * table. Returns false if /proc/PID could not be read (nothing written). */
bool processes_describe_untraced(struct process_table *pt, uint32_t pid, uint64_t ts);

/* Called for each new user stack (sampled at ts): if some ip lies outside
 * every known mapping (a library loaded later), re-reads the maps, at most
 * every reread_interval_ns per address space (doubling while a re-read
 * finds nothing new, back to 100 ms when it does). */
void processes_check_user_ips(struct process_table *pt, uint32_t aspace,
			      const uint64_t *ips, uint32_t nr, uint64_t ts);

/* pid made [start, start + len) executable at ts (mmap or mprotect with
 * PROT_EXEC, seen by the mem source): re-reads its maps at once unless a
 * known mapping covers the range, so code loaded late (dlopen, JIT) gets
 * MAP records before it can be unmapped again. Returns true if it re-read. */
bool processes_on_exec_mapping(struct process_table *pt, uint32_t pid, uint64_t start,
			       uint64_t len, uint64_t ts);

/* The mapping of aspace that covers ip, or NULL. */
const struct proc_map *processes_find_map(const struct process_table *pt,
					  uint32_t aspace, uint64_t ip);

void processes_free(struct process_table *pt);

#endif /* RECORD_PROCESSES_H */
