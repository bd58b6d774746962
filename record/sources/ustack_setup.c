/* ustack_setup.c - sizes the user stack copy of a BPF object (see
 * ustack_setup.h): the scratch array holds a 64 KiB record per possible
 * CPU only when copies are on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "ustack_setup.h"

int ustack_setup(struct bpf_map *scratch, uint32_t *window, uint32_t stack_copy,
		 char *why, size_t len)
{
	int ncpus = stack_copy ? libbpf_num_possible_cpus() : 1;
	int err;

	if (ncpus <= 0) {
		snprintf(why, len, "cannot count the possible CPUs: %s", strerror(-ncpus));
		return ncpus ? ncpus : -EINVAL;
	}
	*window = stack_copy;
	err = bpf_map__set_max_entries(scratch, (uint32_t)ncpus);
	if (err)
		snprintf(why, len, "cannot size the user stack scratch: %s", strerror(-err));
	return err;
}
