/* shared_maps.c - the BPF maps every source shares: created here with
 * bpf_map_create(), reused by each BPF object (bpf_map__reuse_fd) before it
 * is loaded, read back for the loss counters at the end.
 *
 * Ring sharding: one ring per possible CPU, up to PERFCAP_RINGS_MAX; on a
 * larger machine CPU c shares ring c % nr_rings with the CPUs congruent to
 * it. Each ring wakes the consumer only once a quarter full (the BPF side's
 * pc_wakeup_flag); the consumer also polls every few milliseconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shared_maps.h"
#include "util/util.h"

#define RING_MIN_BYTES (4u << 20)
#define RING_MAX_BYTES (256u << 20)
#define BYTES_PER_SAMPLE_GUESS 1024 /* header + ~120 frames */

struct rate_state { /* mirrors struct pc_source_rate */
	uint64_t seq, window_start, window_count;
};

static void init_fds(struct shared_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->targets_fd = m->rings_fd = m->losses_fd = m->stacks_fd = m->source_rates_fd = -1;
	m->target_bits_fd = -1;
	for (int i = 0; i < PERFCAP_RINGS_MAX; i++)
		m->ring_fds[i] = -1;
}

uint32_t shared_maps_ring_bytes(uint64_t freq_hz, int nr_possible)
{
	uint64_t cpus_per_ring = ((uint64_t)nr_possible + PERFCAP_RINGS_MAX - 1) / PERFCAP_RINGS_MAX;
	uint64_t want = freq_hz * cpus_per_ring * BYTES_PER_SAMPLE_GUESS * 2;
	uint32_t bytes = RING_MIN_BYTES;

	while (bytes < want && bytes < RING_MAX_BYTES)
		bytes *= 2;
	return bytes;
}

static int create_map(enum bpf_map_type type, const char *name, uint32_t key_size,
		      uint32_t value_size, uint32_t max_entries, const struct bpf_map_create_opts *opts)
{
	int fd = bpf_map_create(type, name, key_size, value_size, max_entries, opts);

	if (fd < 0) {
		int err = -errno;

		error_line("cannot create the BPF map '%s': %s", name, strerror(-err));
		return err;
	}
	return fd;
}

static int create_rings(struct shared_maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, outer);

	for (uint32_t i = 0; i < m->nr_rings; i++) {
		m->ring_fds[i] = create_map(BPF_MAP_TYPE_RINGBUF, "perfcap_ring", 0, 0,
					    m->ring_bytes, NULL);
		if (m->ring_fds[i] < 0)
			return m->ring_fds[i];
	}
	outer.inner_map_fd = m->ring_fds[0];
	m->rings_fd = create_map(BPF_MAP_TYPE_ARRAY_OF_MAPS, "rings", sizeof(uint32_t),
				 sizeof(uint32_t), m->nr_rings, &outer);
	if (m->rings_fd < 0)
		return m->rings_fd;
	for (uint32_t i = 0; i < m->nr_rings; i++) {
		if (bpf_map_update_elem(m->rings_fd, &i, &m->ring_fds[i], BPF_ANY)) {
			int err = -errno;

			error_line("cannot fill the ring buffer array: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The tgids the bitmap covers: the kernel's pid_max (tgids are below it),
 * at most PERFCAP_TARGET_BITS_MAX; the largest when it cannot be read. A
 * pid_max raised during the recording leaves the new tgids to the hash. */
static uint32_t target_bits_tgids(void)
{
	char line[32], *end;
	unsigned long v = 0;

	if (read_first_line("/proc/sys/kernel/pid_max", line, sizeof(line)) == 0) {
		v = strtoul(line, &end, 10);
		if (end == line)
			v = 0;
	}
	return v && v < PERFCAP_TARGET_BITS_MAX ? (uint32_t)v : PERFCAP_TARGET_BITS_MAX;
}

static int create_target_bits(struct shared_maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	size_t bytes;
	void *p;

	m->target_words = (target_bits_tgids() + 63) / 64;
	m->target_bits_fd = create_map(BPF_MAP_TYPE_ARRAY, "target_bits", sizeof(uint32_t),
				       sizeof(uint64_t), m->target_words, &opts);
	if (m->target_bits_fd < 0)
		return m->target_bits_fd;
	bytes = (size_t)m->target_words * sizeof(uint64_t);
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->target_bits_fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		error_line("cannot map the BPF map 'target_bits': %s", strerror(-err));
		return err;
	}
	m->target_bits = p;
	return 0;
}

int shared_maps_create(struct shared_maps *m, uint32_t ring_bytes)
{
	int err;

	init_fds(m);
	m->nr_possible = libbpf_num_possible_cpus();
	if (m->nr_possible <= 0) {
		error_line("cannot count possible CPUs: %s", strerror(-m->nr_possible));
		return m->nr_possible ? m->nr_possible : -EINVAL;
	}
	m->nr_rings = m->nr_possible < PERFCAP_RINGS_MAX ? (uint32_t)m->nr_possible
							 : PERFCAP_RINGS_MAX;
	m->ring_bytes = ring_bytes;
	m->targets_fd = create_map(BPF_MAP_TYPE_HASH, "targets", sizeof(uint32_t),
				   sizeof(uint8_t), PERFCAP_TARGETS_MAX, NULL);
	if (m->targets_fd < 0)
		return m->targets_fd;
	err = create_target_bits(m);
	if (err)
		return err;
	err = create_rings(m);
	if (err)
		return err;
	m->losses_fd = create_map(BPF_MAP_TYPE_PERCPU_ARRAY, "losses", sizeof(uint32_t),
				  sizeof(uint64_t), PERFCAP_LOSS_SLOTS, NULL);
	if (m->losses_fd < 0)
		return m->losses_fd;
	m->stacks_fd = create_map(BPF_MAP_TYPE_STACK_TRACE, "stacks", sizeof(uint32_t),
				  PERFCAP_STACK_MAX_DEPTH * sizeof(uint64_t),
				  PERFCAP_STACKMAP_ENTRIES, NULL);
	if (m->stacks_fd < 0)
		return m->stacks_fd;
	m->source_rates_fd = create_map(BPF_MAP_TYPE_PERCPU_ARRAY, "source_rates",
					sizeof(uint32_t), sizeof(struct rate_state),
					PERFCAP_SRC_MAX, NULL);
	if (m->source_rates_fd < 0)
		return m->source_rates_fd;
	verbose_line("shared maps created: %u rings of %u KiB, stack map of %u stacks",
		     m->nr_rings, m->ring_bytes >> 10, PERFCAP_STACKMAP_ENTRIES);
	return 0;
}

static int reuse_one(struct bpf_object *obj, const char *name, int fd)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	if (!map) /* the object does not use it */
		return 0;
	return bpf_map__reuse_fd(map, fd);
}

int shared_maps_reuse(const struct shared_maps *m, struct bpf_object *obj)
{
	int err = 0;

	err = err ? err : reuse_one(obj, "targets", m->targets_fd);
	err = err ? err : reuse_one(obj, "target_bits", m->target_bits_fd);
	err = err ? err : reuse_one(obj, "rings", m->rings_fd);
	err = err ? err : reuse_one(obj, "losses", m->losses_fd);
	err = err ? err : reuse_one(obj, "stacks", m->stacks_fd);
	err = err ? err : reuse_one(obj, "source_rates", m->source_rates_fd);
	return err;
}

/* ---- loss counters ------------------------------------------------------ */

static bool drops_the_record(int reason)
{
	return reason == PERFCAP_LOSS_RINGBUF || reason == PERFCAP_LOSS_NO_RING ||
	       reason == PERFCAP_LOSS_SCRATCH;
}

static void add_slot(struct loss_counts *out, uint32_t slot, const uint64_t *values)
{
	int source = (int)(slot / PERFCAP_LOSS_NR), reason = (int)(slot % PERFCAP_LOSS_NR);

	for (int cpu = 0; cpu < out->nr_cpus; cpu++) {
		out->total[source][reason] += values[cpu];
		if (drops_the_record(reason))
			out->dropped_per_cpu[source * out->nr_cpus + cpu] += values[cpu];
	}
}

int shared_maps_read_losses(const struct shared_maps *m, struct loss_counts *out)
{
	uint64_t *values = calloc((size_t)m->nr_possible, sizeof(*values));
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->nr_cpus = m->nr_possible;
	out->dropped_per_cpu = calloc((size_t)PERFCAP_SRC_MAX * (size_t)m->nr_possible,
				      sizeof(uint64_t));
	if (!values || !out->dropped_per_cpu) {
		free(values);
		return -ENOMEM;
	}
	for (uint32_t slot = 0; slot < PERFCAP_LOSS_SLOTS; slot++) {
		if (bpf_map_lookup_elem(m->losses_fd, &slot, values)) {
			err = -errno;
			break;
		}
		add_slot(out, slot, values);
	}
	free(values);
	return err;
}

uint64_t loss_counts_dropped(const struct loss_counts *l, int source)
{
	return l->total[source][PERFCAP_LOSS_RINGBUF] + l->total[source][PERFCAP_LOSS_NO_RING] +
	       l->total[source][PERFCAP_LOSS_SCRATCH];
}

void loss_counts_free(struct loss_counts *l)
{
	free(l->dropped_per_cpu);
	l->dropped_per_cpu = NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void shared_maps_destroy(struct shared_maps *m)
{
	if (m->target_bits)
		munmap(m->target_bits, (size_t)m->target_words * sizeof(uint64_t));
	m->target_bits = NULL;
	close_fd(&m->targets_fd);
	close_fd(&m->target_bits_fd);
	close_fd(&m->rings_fd);
	for (int i = 0; i < PERFCAP_RINGS_MAX; i++)
		close_fd(&m->ring_fds[i]);
	close_fd(&m->losses_fd);
	close_fd(&m->stacks_fd);
	close_fd(&m->source_rates_fd);
}
