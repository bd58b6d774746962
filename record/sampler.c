/* sampler.c - loads and attaches the kernel side of CPU profiling
 * (bpf/cpu_sample.bpf.c) and reads its ring buffer and loss counters.
 *
 * The sample program runs on a cpu-clock software perf event in frequency
 * mode, one per online CPU (offline CPUs have no event). The ring buffer is
 * sized for about two seconds of samples and wakes the consumer only once
 * it is a quarter full; the consumer also polls on a short timeout, so a
 * sample waits at most that long while the kernel is spared a wakeup per
 * sample.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>

#include "bpf_log.h"
#include "cpu_sample.skel.h"
#include "sampler.h"
#include "util.h"

#define RING_MIN_BYTES (4u << 20)
#define RING_MAX_BYTES (256u << 20)
#define BYTES_PER_SAMPLE_GUESS 1024 /* header + ~120 frames */
#define RETIRE_DELAY_NS (1000ull * 1000 * 1000)

/* ---- CPUs ------------------------------------------------------------- */

int online_cpus(int **cpus)
{
	char text[1024];
	int *list = NULL, n = 0, cap = 0;
	int err = read_first_line("/sys/devices/system/cpu/online", text, sizeof(text));

	*cpus = NULL;
	if (err)
		return err;
	for (char *p = text; *p;) {
		char *end;
		long first = strtol(p, &end, 10), last = first;

		if (end == p)
			break;
		if (*end == '-')
			last = strtol(end + 1, &end, 10);
		for (long cpu = first; cpu <= last; cpu++) {
			if (n == cap) {
				int *grown = realloc(list, sizeof(*list) * (size_t)(cap = cap ? cap * 2 : 64));

				if (!grown) {
					free(list);
					return -ENOMEM;
				}
				list = grown;
			}
			list[n++] = (int)cpu;
		}
		p = *end == ',' ? end + 1 : end;
	}
	if (!n) {
		free(list);
		return -EINVAL;
	}
	*cpus = list;
	return n;
}

void sampler_cpu_list(const struct sampler *s, char *buf, size_t len)
{
	size_t out = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->ncpus && out < len; i++) {
		int first = s->cpus[i];

		while (i + 1 < s->ncpus && s->cpus[i + 1] == s->cpus[i] + 1)
			i++;
		if (first == s->cpus[i])
			out += (size_t)snprintf(buf + out, len - out, "%s%d", out ? "," : "", first);
		else
			out += (size_t)snprintf(buf + out, len - out, "%s%d-%d", out ? "," : "",
						first, s->cpus[i]);
	}
}

/* ---- loading ---------------------------------------------------------- */

static uint32_t ring_bytes_for(uint64_t freq_hz, int ncpus)
{
	uint64_t want = freq_hz * (uint64_t)ncpus * BYTES_PER_SAMPLE_GUESS * 2;
	uint32_t bytes = RING_MIN_BYTES;

	while (bytes < want && bytes < RING_MAX_BYTES)
		bytes *= 2;
	return bytes;
}

static void report_load_error(int err)
{
	char summary[512];

	bpf_log_summary(summary, sizeof(summary));
	if (summary[0])
		error_line("cannot load the BPF programs: %s (libbpf: %s)%s", strerror(-err),
			   summary, verbose_enabled ? "" : "; -v shows libbpf's full log");
	else
		error_line("cannot load the BPF programs: %s", strerror(-err));
}

int sampler_load(struct sampler *s, const struct sampler_config *cfg)
{
	int err;

	memset(s, 0, sizeof(*s));
	bpf_log_capture();
	s->nr_possible = libbpf_num_possible_cpus();
	if (s->nr_possible <= 0) {
		error_line("cannot count possible CPUs: %s", strerror(-s->nr_possible));
		return s->nr_possible ? s->nr_possible : -EINVAL;
	}
	s->skel = cpu_sample_bpf__open();
	if (!s->skel) {
		err = -errno;
		report_load_error(err);
		return err;
	}
	s->ringbuf_bytes = ring_bytes_for(cfg->freq_hz, cfg->nr_online);
	s->skel->rodata->filter_pids = cfg->filter_pids;
	s->skel->rodata->wakeup_bytes = s->ringbuf_bytes / 4;
	err = bpf_map__set_max_entries(s->skel->maps.events, s->ringbuf_bytes);
	if (!err)
		err = cpu_sample_bpf__load(s->skel);
	if (err) {
		report_load_error(err);
		return err;
	}
	verbose_line("BPF programs loaded (ring buffer %u KiB)", s->ringbuf_bytes >> 10);
	return 0;
}

int sampler_add_target(struct sampler *s, uint32_t pid)
{
	uint8_t one = 1;

	if (bpf_map__update_elem(s->skel->maps.targets, &pid, sizeof(pid), &one,
				 sizeof(one), BPF_ANY))
		return -errno;
	return 0;
}

/* ---- attaching -------------------------------------------------------- */

static const char *explain_perf_error(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied (needs root or CAP_PERFMON; see kernel.perf_event_paranoid)";
	case EINVAL:
		return "invalid event settings (is -F above kernel.perf_event_max_sample_rate?)";
	case ENOENT:
	case EOPNOTSUPP:
		return "the cpu-clock software event is not supported by this kernel";
	case EMFILE:
	case ENFILE:
		return "too many open files (raise the limit with ulimit -n)";
	case EBUSY:
		return "the PMU is busy (another tool holds it exclusively)";
	default:
		return strerror(err);
	}
}

static int open_cpu_clock(int cpu, uint64_t freq_hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = freq_hz,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int attach_cpu_events(struct sampler *s, const int *cpus, int ncpus, uint64_t freq_hz)
{
	s->cpus = calloc((size_t)ncpus, sizeof(*s->cpus));
	s->cpu_links = calloc((size_t)ncpus, sizeof(*s->cpu_links));
	if (!s->cpus || !s->cpu_links)
		return -ENOMEM;
	for (int i = 0; i < ncpus; i++) {
		struct bpf_link *link;
		int fd = open_cpu_clock(cpus[i], freq_hz);

		if (fd == -ENODEV) /* went offline since we listed it */
			continue;
		if (fd < 0) {
			error_line("cannot open a cpu-clock perf event on CPU %d: %s", cpus[i],
				   explain_perf_error(-fd));
			return fd;
		}
		link = bpf_program__attach_perf_event(s->skel->progs.on_cpu_sample, fd);
		if (!link) {
			int err = -errno;

			close(fd);
			error_line("cannot attach the sample program to CPU %d: %s", cpus[i],
				   strerror(-err));
			return err;
		}
		s->cpus[s->ncpus] = cpus[i];
		s->cpu_links[s->ncpus++] = link;
	}
	if (!s->ncpus) {
		error_line("no online CPU accepted a perf event");
		return -ENODEV;
	}
	return 0;
}

int sampler_attach(struct sampler *s, uint64_t freq_hz)
{
	int *cpus, ncpus, err;

	err = cpu_sample_bpf__attach(s->skel);
	if (err) {
		char summary[512];

		error_line("cannot attach the process tracepoints: %s (libbpf: %s)",
			   strerror(-err), bpf_log_summary(summary, sizeof(summary)));
		return err;
	}
	ncpus = online_cpus(&cpus);
	if (ncpus < 0) {
		error_line("cannot read the online CPUs: %s", strerror(-ncpus));
		return ncpus;
	}
	err = attach_cpu_events(s, cpus, ncpus, freq_hz);
	free(cpus);
	if (!err)
		verbose_line("sampling %d CPUs at %llu Hz", s->ncpus, (unsigned long long)freq_hz);
	return err;
}

void sampler_detach(struct sampler *s)
{
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->cpu_links[i]);
		s->cpu_links[i] = NULL;
	}
	if (s->skel)
		cpu_sample_bpf__detach(s->skel);
}

/* ---- ring buffer ------------------------------------------------------ */

int sampler_open_ring(struct sampler *s, ring_buffer_sample_fn fn, void *ctx)
{
	s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.events), fn, ctx, NULL);
	if (!s->ring) {
		int err = -errno;

		error_line("cannot set up the ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	int err = ring_buffer__poll(s->ring, timeout_ms);

	if (err < 0 && err != -EINTR)
		return err;
	/* records below the wakeup threshold do not wake epoll */
	err = ring_buffer__consume(s->ring);
	return err < 0 && err != -EINTR ? err : 0;
}

int sampler_drain(struct sampler *s)
{
	int err = ring_buffer__consume(s->ring);

	return err < 0 ? err : 0;
}

/* ---- targets leaving -------------------------------------------------- */

void sampler_retire_target(struct sampler *s, uint32_t pid, uint64_t now_ns)
{
	struct retired_target *r = array_reserve(s->retired, &s->retired_cap,
						 s->nretired + 1, sizeof(*r));
	if (!r) /* keep it in the map: harmless */
		return;
	s->retired = r;
	s->retired[s->nretired].pid = pid;
	s->retired[s->nretired].at_ns = now_ns;
	s->nretired++;
}

void sampler_remove_retired(struct sampler *s, uint64_t now_ns)
{
	uint32_t done = 0;

	while (done < s->nretired && now_ns - s->retired[done].at_ns >= RETIRE_DELAY_NS) {
		uint32_t pid = s->retired[done].pid;

		bpf_map__delete_elem(s->skel->maps.targets, &pid, sizeof(pid), 0);
		done++;
	}
	if (!done)
		return;
	memmove(s->retired, s->retired + done, (s->nretired - done) * sizeof(*s->retired));
	s->nretired -= done;
}

/* ---- loss counters ---------------------------------------------------- */

int sampler_read_losses(struct sampler *s, uint64_t totals[PERFCAP_LOSS_NR],
			uint64_t **per_cpu)
{
	uint64_t *values = calloc((size_t)s->nr_possible, sizeof(*values));
	int err = 0;

	memset(totals, 0, sizeof(*totals) * PERFCAP_LOSS_NR);
	if (per_cpu)
		*per_cpu = NULL;
	if (!values)
		return -ENOMEM;
	for (uint32_t reason = 0; reason < PERFCAP_LOSS_NR && !err; reason++) {
		if (bpf_map__lookup_elem(s->skel->maps.losses, &reason, sizeof(reason), values,
					 sizeof(*values) * (size_t)s->nr_possible, 0)) {
			err = -errno;
			break;
		}
		for (int cpu = 0; cpu < s->nr_possible; cpu++)
			totals[reason] += values[cpu];
		if (reason == PERFCAP_LOSS_SAMPLE_RINGBUF && per_cpu) {
			*per_cpu = values;
			values = calloc((size_t)s->nr_possible, sizeof(*values));
			if (!values)
				err = -ENOMEM;
		}
	}
	free(values);
	return err;
}

void sampler_destroy(struct sampler *s)
{
	ring_buffer__free(s->ring);
	for (int i = 0; i < s->ncpus; i++)
		bpf_link__destroy(s->cpu_links[i]);
	free(s->cpu_links);
	free(s->cpus);
	free(s->retired);
	cpu_sample_bpf__destroy(s->skel);
	memset(s, 0, sizeof(*s));
}
