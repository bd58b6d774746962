/* stats_chunk.c - the STATS chunk, the END totals and the exit summary.
 *
 * STATS keys (u64 values). For each attached source NAME:
 *   NAME.events                capture records written
 *   NAME.lost.kernel           records the kernel side dropped (ring full,
 *                              no ring, no scratch buffer)
 *   NAME.lost.kernel.cpu<N>    the same per CPU, only for CPUs with losses
 *   NAME.lost.user             records dropped in user space (malformed,
 *                              out of memory)
 *   NAME.sampled_out           left out by --sample (by choice)
 *   NAME.rate_capped           left out by --rate-cap (by choice)
 *   NAME.stack_errors          stacks not captured or not readable (stack
 *                              map bucket taken, unwinding failed); the
 *                              record is kept without that stack
 *   NAME.map_full              the source's state map was full
 * plus the source's own keys (cpu.samples, sched.switches, ...).
 * Overall:
 *   stacks.unique              distinct stacks (user and kernel)
 *   stacks.user.errors         samples whose user stack walk failed
 *   stacks.kernel.errors       samples whose kernel stack walk failed
 *   stacks.user.truncated      samples whose user stack hit stack.max_depth
 *   stacks.kernel.truncated    samples whose kernel stack hit stack.max_depth
 *   stacks.user.unmapped_ips   user ips in no known executable mapping
 *   stacks.records.failed      STACK records lost to out-of-memory
 *   procs.seen                 processes described (PROC records)
 *   procs.unreadable           of those, /proc could not be read (exited)
 *   procs.events.lost.kernel   = proc.lost.kernel (exec/exit not queued)
 *   procs.records.failed       PROC/THREAD/MAP records lost to out-of-memory
 *   modules.hit                mapped files that user ips hit
 *   modules.unreadable         of those, no symbols could be read
 *   kernel.ips                 distinct kernel addresses looked up
 *   kernel.symbols.unavailable 1 if kallsyms was unreadable or hidden
 *   targets.map_full           = proc.map_full: forks of targets not followed
 *   records.unrouted           kernel records of no attached source
 *   writer.backpressure_waits  times the consumer waited for the writer
 *   record.end_ns              monotonic end of the recording
 *   record.duration_ns         end - start
 *   record.stop_reason         why recording stopped (a word, main.c)
 *   sockets.snapshots          socket snapshots taken (socket_snapshot.h)
 *   sockets.snapshotted        SOCKET records (flag SNAPSHOT) of traced processes
 *   sockets.peer_records       SOCKET records (flags SNAPSHOT|PEER) of peer processes
 *   sockets.peers.resolved     local connection ends whose process was found
 *   sockets.peers.unresolved   ... not found (scan budget, other pid namespace)
 *   sockets.budget_hits        peer scans stopped by their time or fd budget
 *   sockets.fds_scanned        fds the peer scans read
 *   sockets.procs_unreadable   traced processes whose sockets could not be read
 *   sockets.records.failed     out of memory while snapshotting
 *   sockets.snapshot_ns.total, sockets.snapshot_ns.max   time the snapshots took
 *   jit.jvm_perfmap.asked, .written, .failed   --jvm-perfmap (jvm_perfmap.h)
 *   host.cpu.busy_ns, .idle_ns, .steal_ns   the host's CPU time over the
 *                              recording, all CPUs (host_cpu.h)
 * The writer thread appends flight.* and record.max_size.* (writer_thread.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "stats_chunk.h"
#include "output/host_cpu.h"
#include "consume/evict.h"
#include "consume/unwind_tables.h"
#include "consume/ustack_copy.h"
#include "util/util.h"
#include "common/units.h"

static const struct consumer_stats *sample_stats(const struct record_totals *t)
{
	return &t->consumer->stats;
}

/* Records of source lost on the way (kernel drops + user-space drops). */
static uint64_t totals_lost(const struct record_totals *t, int source)
{
	return loss_counts_dropped(&t->losses, source) + t->consumer->lost_user[source];
}

static uint64_t stack_errors(const struct record_totals *t, int source)
{
	const uint64_t *kernel = t->losses.total[source];
	uint64_t n = kernel[PERFCAP_LOSS_STACK_EXIST] + kernel[PERFCAP_LOSS_STACK_ERROR] +
		     t->consumer->stack_errors[source];

	if (source == PERFCAP_SRC_CPU)
		n += sample_stats(t)->ustack_errors + sample_stats(t)->kstack_errors;
	return n;
}

/* ---- per source ----------------------------------------------------------- */

static int add_key(struct chunk_buffer *cb, const char *name, const char *what, uint64_t v)
{
	char key[96];

	snprintf(key, sizeof(key), "%s.%s", name, what);
	return chunk_buffer_add_kv_u64(cb, key, v);
}

static int add_per_cpu_losses(struct chunk_buffer *cb, const struct record_totals *t,
			      const struct source *src)
{
	const struct loss_counts *l = &t->losses;
	int err = 0;

	for (int cpu = 0; l->dropped_per_cpu && cpu < l->nr_cpus && !err; cpu++) {
		uint64_t n = l->dropped_per_cpu[src->id * l->nr_cpus + cpu];
		char what[48];

		if (!n)
			continue;
		snprintf(what, sizeof(what), "lost.kernel.cpu%d", cpu);
		err = add_key(cb, event_source_name(src->id), what, n);
	}
	return err;
}

static int add_source(struct chunk_buffer *cb, const struct record_totals *t,
		      const struct source *src)
{
	const uint64_t *kernel = t->losses.total[src->id];
	const char *name = event_source_name(src->id);
	int err = 0;

	err |= add_key(cb, name, "events", t->consumer->written[src->id]);
	err |= add_key(cb, name, "lost.kernel", loss_counts_dropped(&t->losses, src->id));
	err |= add_per_cpu_losses(cb, t, src);
	err |= add_key(cb, name, "lost.user", t->consumer->lost_user[src->id]);
	err |= add_key(cb, name, "sampled_out", kernel[PERFCAP_LOSS_SAMPLED_OUT]);
	err |= add_key(cb, name, "rate_capped", kernel[PERFCAP_LOSS_RATE_CAPPED]);
	err |= add_key(cb, name, "stack_errors", stack_errors(t, src->id));
	err |= add_key(cb, name, "map_full", kernel[PERFCAP_LOSS_MAP_FULL]);
	if (src->stats)
		err |= src->stats(cb, t->consumer);
	return err;
}

static int add_sources(struct chunk_buffer *cb, const struct record_totals *t)
{
	size_t n;
	const struct source *const *all = sources_all(&n);
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (t->attached[all[i]->id])
			err = add_source(cb, t, all[i]);
	}
	return err;
}

/* ---- overall ---------------------------------------------------------------- */

static int add_stacks_and_procs(struct chunk_buffer *cb, const struct record_totals *t)
{
	const struct consumer_stats *c = sample_stats(t);
	const struct process_table *pt = &t->consumer->processes;
	const struct symbol_stats *s = &t->symbols;
	int err = 0;

	err |= chunk_buffer_add_kv_u64(cb, "stacks.unique", t->consumer->stack_table.n);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.errors", c->ustack_errors);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.kernel.errors", c->kstack_errors);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.truncated", c->ustack_truncated);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.kernel.truncated", c->kstack_truncated);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.user.unmapped_ips", s->user_ips_unmapped);
	err |= chunk_buffer_add_kv_u64(cb, "stacks.records.failed", c->stack_records_failed);
	err |= chunk_buffer_add_kv_u64(cb, "procs.seen", pt->procs_seen);
	err |= chunk_buffer_add_kv_u64(cb, "procs.unreadable", pt->procs_unreadable);
	err |= chunk_buffer_add_kv_u64(cb, "procs.events.lost.kernel",
				       loss_counts_dropped(&t->losses, PERFCAP_SRC_PROC));
	err |= chunk_buffer_add_kv_u64(cb, "procs.records.failed", pt->records_failed);
	err |= evict_stats_kv(cb, pt);
	return err;
}

static int add_socket_snapshots(struct chunk_buffer *cb, const struct socket_snapshot_stats *s)
{
	static const struct socket_snapshot_stats none;
	int err = 0;

	if (!s)
		s = &none;
	err |= chunk_buffer_add_kv_u64(cb, "sockets.snapshots", s->snapshots);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.snapshotted", s->sockets);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.peer_records", s->peer_sockets);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.peers.resolved", s->peers_resolved);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.peers.unresolved", s->peers_unresolved);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.budget_hits", s->budget_hits);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.fds_scanned", s->fds_scanned);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.procs_unreadable", s->procs_unreadable);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.records.failed", s->records_failed);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.snapshot_ns.total", s->ns_total);
	err |= chunk_buffer_add_kv_u64(cb, "sockets.snapshot_ns.max", s->ns_max);
	return err;
}

int stats_build(struct chunk_buffer *cb, const struct record_totals *t)
{
	const struct symbol_stats *s = &t->symbols;
	int err = 0;

	err |= add_sources(cb, t);
	err |= add_stacks_and_procs(cb, t);
	/* the copies of both sources that take them (cpu, sched) */
	err |= ustack_copy_stats_kv(cb) || unwind_tables_stats_kv(cb);
	err |= add_socket_snapshots(cb, t->sockets);
	err |= chunk_buffer_add_kv_u64(cb, "modules.hit", s->modules_hit);
	err |= chunk_buffer_add_kv_u64(cb, "modules.unreadable", s->modules_unreadable);
	err |= chunk_buffer_add_kv_u64(cb, "modules.gopclntab", s->modules_gopclntab);
	err |= chunk_buffer_add_kv_u64(cb, "modules.gopclntab_refused", s->gopclntab_refused);
	err |= chunk_buffer_add_kv_u64(cb, "kernel.ips", s->kernel_ips);
	err |= chunk_buffer_add_kv_u64(cb, "jit.ips", s->jit_ips);
	err |= chunk_buffer_add_kv_u64(cb, "jit.ips.named", s->jit_ips_named);
	err |= chunk_buffer_add_kv_u64(cb, "jit.perfmaps.read", s->perfmaps.files_read);
	err |= chunk_buffer_add_kv_u64(cb, "jit.perfmaps.refused", s->perfmaps.files_refused);
	err |= chunk_buffer_add_kv_u64(cb, "jit.perfmaps.stale", s->perfmaps.files_stale);
	err |= chunk_buffer_add_kv_u64(cb, "jit.perfmaps.malformed_lines",
				       s->perfmaps.lines_malformed);
	if (t->jvm)
		err |= jvm_perfmap_stats_kv(cb, t->jvm);
	err |= chunk_buffer_add_kv_u64(cb, "kernel.symbols.unavailable",
				       s->kernel_symbols_unavailable ? 1 : 0);
	err |= chunk_buffer_add_kv_u64(cb, "targets.map_full",
				       t->losses.total[PERFCAP_SRC_PROC][PERFCAP_LOSS_MAP_FULL]);
	err |= chunk_buffer_add_kv_u64(cb, "records.unrouted",
				       sample_stats(t)->unknown_records);
	err |= chunk_buffer_add_kv_u64(cb, "writer.backpressure_waits", t->backpressure_waits);
	err |= chunk_buffer_add_kv_u64(cb, "record.end_ns", t->end_ns);
	err |= chunk_buffer_add_kv_u64(cb, "record.duration_ns", t->end_ns - t->start_ns);
	if (t->stop_reason)
		err |= chunk_buffer_add_kv(cb, "record.stop_reason", t->stop_reason);
	if (t->cpu_start && t->cpu_end)
		err |= host_cpu_stats_kv(cb, t->cpu_start, t->cpu_end);
	return err ? -ENOMEM : 0;
}

static uint64_t total_events(const struct record_totals *t)
{
	uint64_t n = 0;

	for (int id = 0; id < PERFCAP_SRC_MAX; id++)
		n += t->consumer->written[id];
	return n;
}

int stats_build_end(struct chunk_buffer *cb, const struct record_totals *t, uint64_t chunks)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(cb, "chunks", chunks);
	err |= chunk_buffer_add_kv_u64(cb, "events", total_events(t));
	err |= chunk_buffer_add_kv_u64(cb, "record.end_ns", t->end_ns);
	return err ? -1 : 0;
}

/* ---- the summary -------------------------------------------------------------- */

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* "name lost/total" (with_losses) or "name written" for each attached
 * source except proc, whose exec/exit records are bookkeeping. */
static void per_source(const struct record_totals *t, bool with_losses, char *buf, size_t len)
{
	size_t n, used = 0;
	const struct source *const *all = sources_all(&n);

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const struct source *src = all[i];
		const char *name = event_source_name(src->id);
		uint64_t events = t->consumer->written[src->id], lost = totals_lost(t, src->id);
		char a[32], b[32];

		if (!t->attached[src->id] || src->always_on)
			continue;
		if (with_losses)
			used += (size_t)snprintf(buf + used, len - used, "%s%s %s/%s", used ? ", " : "",
						 name, fmt_count(a, sizeof(a), lost),
						 fmt_count(b, sizeof(b), events + lost));
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "",
						 name, fmt_count(a, sizeof(a), events));
	}
}

static void print_left_out(const struct record_totals *t)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	for (size_t i = 0; i < n; i++) {
		const uint64_t *k = t->losses.total[all[i]->id];
		char a[32], b[32];

		if (!t->attached[all[i]->id] || (!k[PERFCAP_LOSS_SAMPLED_OUT] &&
						  !k[PERFCAP_LOSS_RATE_CAPPED]))
			continue;
		fprintf(stderr, "%s: %s: %s records sampled out (--sample), %s rate capped "
			"(--rate-cap)\n", PROGRAM_NAME, event_source_name(all[i]->id),
			fmt_count(a, sizeof(a), k[PERFCAP_LOSS_SAMPLED_OUT]),
			fmt_count(b, sizeof(b), k[PERFCAP_LOSS_RATE_CAPPED]));
	}
}

/* What a source counted beyond its losses (waits it could not close...). */
static void print_notes(const struct record_totals *t)
{
	size_t n;
	const struct source *const *all = sources_all(&n);
	char note[1024];

	for (size_t i = 0; i < n; i++) {
		if (!t->attached[all[i]->id] || !all[i]->summary_note)
			continue;
		note[0] = '\0';
		all[i]->summary_note(note, sizeof(note));
		if (note[0])
			fprintf(stderr, "%s: %s: %s\n", PROGRAM_NAME,
				event_source_name(all[i]->id), note);
	}
}

/* Events left out on purpose by a size policy: said, never silent. */
static void print_dropped(const struct record_totals *t)
{
	char n[32];

	if (t->max_size_dropped)
		fprintf(stderr, "%s: of these, %s events were dropped at --max-size (they did not fit; "
			"STATS record.max_size.events_dropped)\n", PROGRAM_NAME,
			fmt_count(n, sizeof(n), t->max_size_dropped));
	if (t->flight_dropped)
		fprintf(stderr, "%s: of these, %s events were dropped as older than the flight "
			"recorder's window (STATS flight.events_dropped)\n", PROGRAM_NAME,
			fmt_count(n, sizeof(n), t->flight_dropped));
}

void stats_print_summary(const struct record_totals *t, const char *path, uint64_t bytes)
{
	char events[32], stacks[32], procs[32], size[32], lost[32], total[32];
	char wrote[512], losses[512];
	uint64_t nevents = 0, nlost = 0, nstacks = t->consumer->stack_table.n;
	uint64_t nprocs = t->consumer->processes.procs_seen;

	for (int id = 0; id < PERFCAP_SRC_MAX; id++) {
		if (id == PERFCAP_SRC_PROC) /* exec/exit bookkeeping, not events */
			continue;
		nevents += t->consumer->written[id];
		nlost += totals_lost(t, id);
	}
	per_source(t, false, wrote, sizeof(wrote));
	per_source(t, true, losses, sizeof(losses));
	fprintf(stderr, "%s: wrote %s %s (%s; %s %s, %s %s) to %s (%s %s)\n", PROGRAM_NAME,
		fmt_count(events, sizeof(events), nevents), plural(nevents, "event", "events"),
		wrote, fmt_count(stacks, sizeof(stacks), nstacks),
		plural(nstacks, "stack", "stacks"), fmt_count(procs, sizeof(procs), nprocs),
		plural(nprocs, "process", "processes"), path,
		fmt_count(size, sizeof(size), bytes), plural(bytes, "byte", "bytes"));
	fprintf(stderr, "%s: lost %s of %s %s (%s)\n", PROGRAM_NAME,
		fmt_count(lost, sizeof(lost), nlost),
		fmt_count(total, sizeof(total), nevents + nlost),
		plural(nevents + nlost, "event", "events"), losses);
	print_dropped(t);
	print_left_out(t);
	print_notes(t);
	evict_print_summary(&t->consumer->processes);
}
