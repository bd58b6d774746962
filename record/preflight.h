/* preflight.h - checks made before anything is attached, each failing with
 * one line that says what is missing and what to do. */
#ifndef RECORD_PREFLIGHT_H
#define RECORD_PREFLIGHT_H

/* Privileges (root, or CAP_BPF + CAP_PERFMON) and kernel BTF. Prints the
 * error and returns -1 when recording is impossible. */
int preflight_check(void);

/* Raises the soft open-file limit to the hard one: one fd is kept per
 * mapped file that samples hit. */
void raise_fd_limit(void);

#endif /* RECORD_PREFLIGHT_H */
