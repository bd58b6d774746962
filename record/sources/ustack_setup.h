/* ustack_setup.h - prepares a BPF object that includes
 * bpf/ustack_copy.bpf.h before it is loaded: the window size in its
 * read-only data and one scratch slot per possible CPU. */
#ifndef RECORD_USTACK_SETUP_H
#define RECORD_USTACK_SETUP_H

#include <stddef.h>
#include <stdint.h>

struct bpf_map;

/* Sets *window (the object's ustack_window) to stack_copy bytes and sizes
 * scratch; with stack_copy 0 the scratch keeps one slot. 0 or -errno with
 * a reason in why. */
int ustack_setup(struct bpf_map *scratch, uint32_t *window, uint32_t stack_copy,
		 char *why, size_t len);

#endif /* RECORD_USTACK_SETUP_H */
