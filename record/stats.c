/* stats.c - the STATS chunk, the END totals and the exit summary line.
 *
 * STATS keys (u64 values):
 *   cpu.samples               samples written
 *   cpu.lost.kernel           samples the kernel could not queue (ring full)
 *   cpu.lost.kernel.cpu<N>    the same per CPU, only for CPUs with losses
 *   cpu.lost.user             ring records dropped in user space (malformed,
 *                             out of memory)
 *   stacks.unique             distinct stacks (user and kernel)
 *   stacks.user.errors        samples whose user stack walk failed
 *   stacks.kernel.errors      samples whose kernel stack walk failed
 *   stacks.user.truncated     samples whose user stack hit stack.max_depth
 *   stacks.kernel.truncated   samples whose kernel stack hit stack.max_depth
 *   stacks.user.unmapped_ips  user ips in no known executable mapping
 *   procs.seen                processes described (PROC records)
 *   procs.unreadable          of those, /proc could not be read (exited)
 *   procs.execs procs.exits   EXEC / EXIT events written
 *   procs.events.lost.kernel  exec/exit events the kernel could not queue
 *   procs.records.failed      PROC/THREAD/MAP records lost to out-of-memory
 *   modules.hit               mapped files that user ips hit
 *   modules.unreadable        of those, no symbols could be read
 *   kernel.ips                distinct kernel addresses looked up
 *   kernel.symbols.unavailable 1 if kallsyms was unreadable or hidden
 *   targets.map_full          forks of targets not followed (map full)
 *   writer.backpressure_waits times the consumer waited for the writer
 *   record.end_ns             monotonic end of the recording
 *   record.duration_ns        end - start
 */
#include <inttypes.h>
#include <stdio.h>

#include "stats.h"
#include "util.h"

uint64_t totals_lost_kernel(const struct record_totals *t)
{
	return t->kernel_losses[PERFCAP_LOSS_SAMPLE_RINGBUF] +
	       t->kernel_losses[PERFCAP_LOSS_SCRATCH];
}

uint64_t totals_lost_user(const struct record_totals *t)
{
	return t->consumer.lost_user;
}

static int add_per_cpu_losses(struct chunk_buffer *cb, const struct record_totals *t)
{
	int err = 0;

	for (int cpu = 0; t->sample_losses_per_cpu && cpu < t->nr_possible && !err; cpu++) {
		char key[48];

		if (!t->sample_losses_per_cpu[cpu])
			continue;
		snprintf(key, sizeof(key), "cpu.lost.kernel.cpu%d", cpu);
		err = chunk_buffer_add_kv_u64(cb, key, t->sample_losses_per_cpu[cpu]);
	}
	return err;
}

int stats_build(struct chunk_buffer *cb, const struct record_totals *t)
{
	const struct consumer_stats *c = &t->consumer;
	const struct symbol_stats *s = &t->symbols;
	int err = 0;

	err |= chunk_buffer_add_kv_u64(cb, "cpu.samples", c->samples);
	err |= chunk_buffer_add_kv_u64(cb, "cpu.lost.kernel", totals_lost_kernel(t));
	err |= add_per_cpu_losses(cb, t);
	err |= chunk_buffer_add_kv_u64(cb, "cpu.lost.user", totals_lost_user(t));
	err |= chunk_buffer_add_kv_u64(cb, "stacks.unique", t->stacks_unique);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.errors", c->ustack_errors);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.kernel.errors", c->kstack_errors);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.truncated", c->ustack_truncated);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.kernel.truncated", c->kstack_truncated);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.unmapped_ips", s->user_ips_unmapped);
	err |= chunk_buffer_add_kv_u64(cb, "procs.seen", t->procs_seen);
	err |= chunk_buffer_add_kv_u64(cb, "procs.unreadable", t->procs_unreadable);
	err |= chunk_buffer_add_kv_u64(cb, "procs.execs", c->execs);
	err |= chunk_buffer_add_kv_u64(cb, "procs.exits", c->exits);
	err |= chunk_buffer_add_kv_u64(cb, "procs.events.lost.kernel",
				       t->kernel_losses[PERFCAP_LOSS_PROC_RINGBUF]);
	err |= chunk_buffer_add_kv_u64(cb, "procs.records.failed", t->records_failed);
	err |= chunk_buffer_add_kv_u64(cb, "modules.hit", s->modules_hit);
	err |= chunk_buffer_add_kv_u64(cb, "modules.unreadable", s->modules_unreadable);
	err |= chunk_buffer_add_kv_u64(cb, "kernel.ips", s->kernel_ips);
	err |= chunk_buffer_add_kv_u64(cb, "kernel.symbols.unavailable",
				       s->kernel_symbols_unavailable ? 1 : 0);
	err |= chunk_buffer_add_kv_u64(cb, "targets.map_full",
				       t->kernel_losses[PERFCAP_LOSS_TARGETS_FULL]);
	err |= chunk_buffer_add_kv_u64(cb, "writer.backpressure_waits", t->backpressure_waits);
	err |= chunk_buffer_add_kv_u64(cb, "record.end_ns", t->end_ns);
	err |= chunk_buffer_add_kv_u64(cb, "record.duration_ns", t->end_ns - t->start_ns);
	return err ? -1 : 0;
}

int stats_build_end(struct chunk_buffer *cb, const struct record_totals *t, uint64_t chunks)
{
	const struct consumer_stats *c = &t->consumer;
	int err = 0;

	err |= chunk_buffer_add_kv_u64(cb, "chunks", chunks);
	err |= chunk_buffer_add_kv_u64(cb, "events", c->samples + c->execs + c->exits);
	err |= chunk_buffer_add_kv_u64(cb, "record.end_ns", t->end_ns);
	return err ? -1 : 0;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void stats_print_summary(const struct record_totals *t, const char *path, uint64_t bytes)
{
	char samples[32], stacks[32], procs[32], size[32], lost[32], total[32];
	uint64_t nlost = totals_lost_kernel(t) + totals_lost_user(t);
	uint64_t nevents = t->consumer.samples + nlost;

	fprintf(stderr, "%s: wrote %s %s (%s %s, %s %s) to %s (%s %s); lost %s of %s %s\n",
		PROGRAM_NAME,
		format_count(t->consumer.samples, samples, sizeof(samples)),
		plural(t->consumer.samples, "sample", "samples"),
		format_count(t->stacks_unique, stacks, sizeof(stacks)),
		plural(t->stacks_unique, "stack", "stacks"),
		format_count(t->procs_seen, procs, sizeof(procs)),
		plural(t->procs_seen, "process", "processes"),
		path, format_count(bytes, size, sizeof(size)), plural(bytes, "byte", "bytes"),
		format_count(nlost, lost, sizeof(lost)),
		format_count(nevents, total, sizeof(total)), plural(nevents, "event", "events"));
}
