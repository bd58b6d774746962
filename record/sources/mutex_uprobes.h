/* mutex_uprobes.h - the lock source's probes on pthread_mutex_lock: a
 * uprobe and a uretprobe (bpf/lock.bpf.c's mutex_enter / mutex_exit) on
 * every object a target process maps itself that defines the function
 * (uprobe_target.c), bound to that pid so no other process takes the
 * breakpoints; and the probes' own cost, measured on the recorder. */
#ifndef RECORD_MUTEX_UPROBES_H
#define RECORD_MUTEX_UPROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_link;
struct lock_bpf;

#define MUTEX_DESC_MAX 1024

struct mutex_uprobes {
	struct lock_bpf *skel;       /* mutex_enter / mutex_exit loaded */
	struct bpf_link **links;
	size_t nlinks;
	char desc[MUTEX_DESC_MAX];   /* "PID:PATH@0xOFFSET(SYMBOL),..." */
};

/* The function's names, in order of preference. */
extern const char *const mutex_uprobe_functions[];

/* Probes the function in every object pid maps that defines it. Returns
 * the number of objects probed, or -errno with why filled. */
int mutex_uprobes_attach_pid(struct mutex_uprobes *m, pid_t pid, char *why, size_t len);

/* The median time a probed, uncontended call takes in this process (the
 * recorder calls the function itself, timed by the same probes, which
 * are then removed): what the probes add to every call. 0 if it cannot
 * be measured. */
uint64_t mutex_uprobes_probe_cost(struct mutex_uprobes *m);

/* Removes every probe. */
void mutex_uprobes_detach(struct mutex_uprobes *m);

#endif /* RECORD_MUTEX_UPROBES_H */
