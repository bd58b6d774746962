/* sampler.h - the kernel side as seen from user space: loads the BPF object
 * (capturing libbpf's messages for a one-line error), fills the targets
 * map, opens a cpu-clock perf event per online CPU and attaches the sample
 * program to each, attaches the fork/exec/exit tracepoints, polls the ring
 * buffer, and reads the kernel's loss counters. */
#ifndef RECORD_SAMPLER_H
#define RECORD_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#include "perfcap_bpf.h"

struct cpu_sample_bpf;

struct retired_target {
	uint32_t pid;
	uint64_t at_ns;
};

struct sampler {
	struct cpu_sample_bpf *skel;
	struct bpf_link **cpu_links;   /* one per entry of cpus */
	int     *cpus;                 /* online CPUs with a perf event */
	int      ncpus;
	int      nr_possible;          /* slots in per-CPU map values */
	uint32_t ringbuf_bytes;
	struct ring_buffer *ring;
	/* exited targets, removed from the map a little later (FIFO) */
	struct retired_target *retired;
	uint32_t nretired;
	uint32_t retired_cap;
};

struct sampler_config {
	bool     filter_pids;          /* only sample pids in the targets map */
	uint64_t freq_hz;
	int      nr_online;            /* sizes the ring buffer */
};

/* Opens and loads the BPF object. Prints one error line and returns
 * -errno on failure. */
int sampler_load(struct sampler *s, const struct sampler_config *cfg);

/* Adds pid to the targets map. 0 or -errno. */
int sampler_add_target(struct sampler *s, uint32_t pid);

/* Attaches the tracepoints, then a sampling event on every online CPU.
 * Prints one error line and returns -errno on failure. */
int sampler_attach(struct sampler *s, uint64_t freq_hz);

/* Stops sampling: detaches the perf events and tracepoints, so a final
 * drain of the ring buffer ends. */
void sampler_detach(struct sampler *s);

/* Sets up the ring buffer consumer: fn is called for each record. */
int sampler_open_ring(struct sampler *s, ring_buffer_sample_fn fn, void *ctx);

/* Waits up to timeout_ms for data, then consumes all that is there. */
int sampler_poll(struct sampler *s, int timeout_ms);

/* Consumes everything left in the ring buffer. */
int sampler_drain(struct sampler *s);

/* An exited target leaves the map after a delay, so samples taken while
 * the kernel tears the process down are still recorded. */
void sampler_retire_target(struct sampler *s, uint32_t pid, uint64_t now_ns);
void sampler_remove_retired(struct sampler *s, uint64_t now_ns);

/* Sums the per-CPU loss counters into totals[PERFCAP_LOSS_NR]; if per_cpu
 * is not NULL it gets nr_possible ring-buffer sample losses (malloc'd). */
int sampler_read_losses(struct sampler *s, uint64_t totals[PERFCAP_LOSS_NR],
			uint64_t **per_cpu);

/* "0-1"-style list of the CPUs sampled, into buf. */
void sampler_cpu_list(const struct sampler *s, char *buf, size_t len);

void sampler_destroy(struct sampler *s);

/* Online CPUs from /sys/devices/system/cpu/online into a malloc'd array.
 * Returns the count or -errno. */
int online_cpus(int **cpus);

#endif /* RECORD_SAMPLER_H */
