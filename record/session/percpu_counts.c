/* percpu_counts.c - sums a BPF per-CPU array of u64 counters (see
 * percpu_counts.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "percpu_counts.h"

static uint64_t sum(const uint64_t *v, int ncpu)
{
	uint64_t s = 0;

	for (int i = 0; i < ncpu; i++)
		s += v[i];
	return s;
}

int percpu_counts_read(const struct bpf_map *map, uint64_t *out, size_t n)
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(map), err = 0;
	uint64_t *values;

	memset(out, 0, n * sizeof(*out));
	if (ncpu <= 0 || fd < 0)
		return ncpu <= 0 ? -EINVAL : -EBADF;
	values = calloc((size_t)ncpu, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (uint32_t key = 0; key < n; key++) {
		if (bpf_map_lookup_elem(fd, &key, values)) {
			err = err ? err : -errno;
			continue;
		}
		out[key] = sum(values, ncpu);
	}
	free(values);
	return err;
}
