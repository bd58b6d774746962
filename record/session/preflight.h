/* preflight.h - checks made before anything is attached, each failing with
 * one line that says what is missing and what to do, and the kernel facts
 * the sources adapt to. Whether each source can attach is probed by
 * attaching it (session.c names the source and the reason when not). */
#ifndef RECORD_PREFLIGHT_H
#define RECORD_PREFLIGHT_H

#include <stdbool.h>

/* Privileges (root, or CAP_BPF + CAP_PERFMON) and kernel BTF. Prints the
 * error and returns -1 when recording is impossible. */
int preflight_check(void);

/* Mounts tracefs at /sys/kernel/tracing unless it is mounted (for
 * sources that attach to tracepoints through tracefs; tp_btf and raw_tp
 * need none). 0, or -errno with a warning printed. */
int preflight_mount_tracefs(void);

/* The number of arguments of tracepoint tp (as the kernel's BTF types
 * btf_trace_<tp>: the hidden first pointer not counted), or -errno. */
int preflight_tracepoint_args(const char *tp);

/* Whether the kernel's BTF has the function (a kfunc) name. */
bool preflight_kernel_has_func(const char *name);

/* The offset of the per-CPU variable var in the kernel's per-CPU section
 * (the BTF DATASEC .data..percpu), or -1. Two such offsets give the
 * distance between two per-CPU variables of the same CPU. */
long long preflight_percpu_offset(const char *var);

/* The same in an already loaded BTF, and the variable's size (size may
 * be NULL). */
struct btf;
long long preflight_percpu_var(const struct btf *btf, const char *var, long long *size);

/* Raises the soft open-file limit to the hard one: one fd is kept per
 * mapped file that samples hit. */
void raise_fd_limit(void);

#endif /* RECORD_PREFLIGHT_H */
