/* cgroup.h - resolving --cgroup PATH: a cgroup v2 directory becomes the
 * (id, level) pair the BPF filter compares a task's cgroup ancestry with. */
#ifndef RECORD_CGROUP_H
#define RECORD_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* id: the cgroup's kernfs id (what bpf_get_current_cgroup_id() returns);
 * level: its depth below the root of the cgroup v2 hierarchy. Returns 0, or
 * -errno with a one-line reason in why (no such directory, not cgroup v2). */
int cgroup_resolve(const char *path, uint64_t *id, uint32_t *level, char *why, size_t len);

#endif /* RECORD_CGROUP_H */
