/* main.c - perfcap-record: records CPU stack samples and kernel events of
 * a command, of running processes, or of the whole system into one capture
 * file.
 *
 * The order of a recording:
 *   1. validate the command line, check privileges and BTF;
 *   2. fork the command, held at a gate before exec;
 *   3. create the output file (an unwritable path fails here, before any
 *      BPF is loaded);
 *   4. create the shared maps, load the selected sources, put the target
 *      pids in the filter, attach (a source that cannot is named);
 *   5. drop the capabilities no longer needed, start the writer thread
 *      (it inherits the reduced set), write the META chunk, snapshot the
 *      targets' sockets (socket_snapshot.h), open the gate;
 *   6. consume the rings until the target ends, -d elapses, a signal
 *      arrives, the disk fills or --max-size is reached (SIGUSR1 too with
 *      --flight-recorder); snapshot the sockets of each process followed
 *      since, once it has settled;
 *   7. snapshot the sockets again, stop the sources, drain, write
 *      SYMBOLS, STATS and END, print a summary with the losses of each
 *      source.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "consume/consumer.h"
#include "consume/jvm_perfmap.h"
#include "consume/kallsyms.h"
#include "consume/socket_snapshot.h"
#include "output/metadata.h"
#include "perfcap_format.h"
#include "session/preflight.h"
#include "session/privileges.h"
#include "recording.h"
#include "output/size_limit.h"
#include "output/host_cpu.h"
#include "stats_chunk.h"
#include "consume/symbols.h"
#include "consume/unwind_tables.h"
#include "session/command.h"
#include "util/util.h"
#include "output/writer_thread.h"
#include "common/units.h"

/* How long the recorder sleeps between drains of the rings when no ring
 * is a quarter full (which wakes it at once): 50 ms, or 10 ms while an
 * image is young (processes_any_young: its maps are re-read every 10 ms
 * then). Each wakeup costs a context switch on a CPU the traced server
 * wants: the recorder's own CPU under pgbench went from 29.8 to 25.3 ms a
 * second at 50 ms instead of 10 (bench/default_cost.sh, 3 ABBA rounds).
 * Exec and exit wake it at once (bpf/proc.bpf.c). */
#define POLL_TIMEOUT_MS       50
#define POLL_TIMEOUT_YOUNG_MS 10
#define COMMAND_STOP_TIMEOUT_MS 2000
#define PID_CHECK_INTERVAL_NS (100ull * 1000 * 1000)
#define SNAPSHOT_CHECK_INTERVAL_NS (1000ull * 1000 * 1000)
/* Snapshots of processes followed later take at most 1 / SNAPSHOT_DUTY of
 * a CPU: after one that took T, the next waits at least SNAPSHOT_DUTY * T.
 * A service whose connections each get a process (postgres without a
 * pooler) has new processes every second; the tables' walk and the peer
 * walk grow with the host's sockets and processes (10-30 ms on a quiet
 * host, up to the 200 ms budget on a big one). */
#define SNAPSHOT_DUTY 100

enum stop_reason {
	STOP_NONE = 0,
	STOP_SIGNAL,
	STOP_DURATION,
	STOP_COMMAND_EXITED,
	STOP_PIDS_GONE,
	STOP_WRITE_ERROR,
	STOP_RING_ERROR,
	STOP_MAX_SIZE,
	STOP_FLIGHT_DUMP,
};

struct recorder {
	const struct record_options *opts;
	uint64_t recording_since_ns;     /* everything attached: -d counts from here */
	struct command_child child;
	bool have_child;
	struct run_identity identity;    /* who the command runs as */
	struct pc_writer *writer;
	struct writer_thread *writer_thread;
	struct session session;
	bool session_created;
	struct consumer consumer;
	bool consumer_ready;
	struct socket_snapshot sockets;
	struct jvm_perfmap_stats jvm;    /* --jvm-perfmap */
	struct run_info run;
	char privileges_kept[256];
	enum stop_reason reason;
	uint64_t next_pid_check_ns;
	uint64_t next_snapshot_check_ns;
	uint64_t end_ns;
	struct host_cpu cpu_start, cpu_end; /* STATS host.cpu.* */
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t flight_dump; /* SIGUSR1 with --flight-recorder */

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static void on_dump_signal(int sig)
{
	(void)sig;
	flight_dump = 1;
}

static void install_signal_handlers(const struct record_options *o)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->flight_size) {
		sa.sa_handler = on_dump_signal;
		sigaction(SIGUSR1, &sa, NULL);
	}
}

/* STATS record.stop_reason */
static const char *stop_reason_name(enum stop_reason reason, int write_error)
{
	switch (reason) {
	case STOP_SIGNAL:
		return "signal";
	case STOP_DURATION:
		return "duration";
	case STOP_COMMAND_EXITED:
		return "command-exit";
	case STOP_PIDS_GONE:
		return "pids-exited";
	case STOP_WRITE_ERROR:
		return write_error == -ENOSPC ? "disk-full" : "write-error";
	case STOP_RING_ERROR:
		return "ring-error";
	case STOP_MAX_SIZE:
		return "max-size";
	case STOP_FLIGHT_DUMP:
		return "flight-dump";
	default:
		return "none";
	}
}

/* ---- setup ------------------------------------------------------------ */

static int open_output(struct recorder *r)
{
	const char *path = r->opts->output;
	int err = pc_writer_open(&r->writer, path, r->opts->force ? PC_WRITE_FORCE : 0);

	if (err == -EEXIST)
		error_line("%s already exists (use -f to overwrite it)", path);
	else if (err == -EINVAL)
		error_line("cannot create %s: not a regular file (-f replaces only a file "
			   "or a symlink)", path);
	else if (err)
		error_line("cannot create %s: %s", path, strerror(-err));
	return err;
}

/* Smaller EVENTS chunks under a size budget: the budget is then filled
 * (or the flight window kept) at a finer grain than 4 MiB. */
static size_t event_chunk_bytes(const struct record_options *o)
{
	uint64_t n = FLUSH_EVENT_BYTES;

	if (o->max_size && o->max_size / 16 < n)
		n = o->max_size / 16;
	if (o->flight_size && o->flight_size / 4 < n)
		n = o->flight_size / 4;
	return (size_t)n;
}

static int start_writer(struct recorder *r)
{
	struct writer_policy policy = {
		.max_size = r->opts->max_size,
		.flight_size = r->opts->flight_size,
	};
	int err = writer_thread_start(&r->writer_thread, r->writer, &policy);

	if (err) {
		error_line("cannot start the writer thread: %s", strerror(-err));
		return err;
	}
	consumer_set_writer(&r->consumer, r->writer_thread);
	r->consumer.flush_event_bytes = event_chunk_bytes(r->opts);
	return 0;
}

static int add_initial_targets(struct recorder *r)
{
	const struct record_options *o = r->opts;
	struct targets *t = &r->session.targets;
	int err = 0;

	if (o->mode == TARGET_COMMAND)
		err = targets_add(t, (uint32_t)r->child.pid);
	for (size_t i = 0; o->mode == TARGET_PIDS && i < o->npids && !err; i++)
		err = targets_add(t, (uint32_t)o->pids[i]);
	if (err)
		error_line("cannot fill the pid filter map: %s", strerror(-err));
	return err;
}

/* A followed process exited: it leaves the filter map a little later. */
static void on_target_exit(void *ctx, uint32_t pid, uint64_t ts)
{
	struct recorder *r = ctx;

	(void)ts;
	if (r->opts->mode != TARGET_ALL)
		targets_retire(&r->session.targets, pid, monotonic_ns());
}

static bool filtering(const struct record_options *o)
{
	return o->mode != TARGET_ALL || o->comm || o->cgroup_path;
}

static int load_and_attach(struct recorder *r)
{
	int err = session_create(&r->session, r->opts);

	r->session_created = true;
	if (!err)
		err = session_load(&r->session);
	if (!err)
		err = add_initial_targets(r);
	if (err)
		return err;
	consumer_init(&r->consumer, r->session.maps.stacks_fd, filtering(r->opts));
	r->consumer.on_exit = on_target_exit;
	r->consumer.on_exit_ctx = r;
	r->consumer_ready = true;
	err = session_open_reader(&r->session, &r->consumer);
	if (err)
		return err;
	/* the start precedes every record */
	r->run.start_monotonic_ns = monotonic_ns();
	r->run.start_realtime_ns = realtime_ns();
	r->session.env.start_ns = r->run.start_monotonic_ns;
	if (r->opts->mode == TARGET_PIDS) {
		r->session.env.target_pids = r->opts->pids;
		r->session.env.ntarget_pids = r->opts->npids;
	} else if (r->opts->mode == TARGET_COMMAND) {
		r->session.env.target_pids = &r->child.pid;
		r->session.env.ntarget_pids = 1;
	}
	host_cpu_read(&r->cpu_start, NULL);
	return session_attach(&r->session, &r->consumer);
}

/* Everything is attached and the output is open: keep only what the rest
 * of the recording needs (privileges.c says what and why). */
static int drop_privileges(struct recorder *r)
{
	int err;

	kallsyms_preopen(); /* read at the end; its addresses need CAP_SYSLOG now */
	err = privileges_drop(r->privileges_kept, sizeof(r->privileges_kept),
			      (r->opts->jvm_perfmap ? PRIV_KEEP_JVM_ATTACH : 0) |
			      (r->opts->gc_probes ? PRIV_KEEP_PROBE_ATTACH : 0));
	if (err) {
		error_line("cannot drop capabilities after attaching: %s", strerror(-err));
		return err;
	}
	r->run.privileges_kept = r->privileges_kept;
	verbose_line("capabilities kept: %s", r->privileges_kept[0] ? r->privileges_kept : "none");
	return 0;
}

static int write_metadata(struct recorder *r)
{
	struct chunk_buffer meta = { 0 };
	int err;

	r->run.command_pid = r->have_child ? r->child.pid : 0;
	r->run.command_identity = &r->identity;
	err = metadata_build(&meta, r->opts, &r->run);
	if (!err)
		err = session_meta(&r->session, &meta);
	if (!err)
		err = writer_thread_submit(r->writer_thread, PC_CHUNK_META, PC_META_VERSION, &meta);
	chunk_buffer_free(&meta);
	if (err)
		error_line("cannot write the metadata: %s", strerror(-err));
	return err;
}

static int start_command(struct recorder *r)
{
	int err = command_release(&r->child);

	if (err)
		error_line("cannot run '%s': %s", r->opts->command[0], strerror(-err));
	return err;
}

static int spawn_command(struct recorder *r)
{
	int err = privileges_invoking_user(&r->identity);

	if (err) {
		error_line("SUDO_UID/SUDO_GID are not valid ids; cannot run the command as the "
			   "invoking user");
		return err;
	}
	err = command_spawn(&r->child, r->opts->command, &r->identity);
	if (err) {
		error_line("cannot start '%s': %s", r->opts->command[0], strerror(-err));
		return err;
	}
	r->have_child = true;
	return 0;
}

/* The sockets of the followed processes (-p, the command and their
 * forks: the targets map), or of every live process seen (-a). */
static void snapshot_sockets(struct recorder *r)
{
	uint32_t *pids = NULL, n = 0;

	if (r->opts->mode == TARGET_ALL) {
		socket_snapshot_take(&r->sockets, &r->consumer, NULL, 0);
		return;
	}
	if (targets_list(&r->session.targets, &pids, &n)) {
		warning_line("cannot list the followed processes: no socket snapshot");
		return;
	}
	socket_snapshot_take(&r->sockets, &r->consumer, pids, n);
	free(pids);
}

/* Followed processes that appeared since (forks of targets, the
 * command's children) get their own snapshot once they have settled, at
 * most SNAPSHOT_DUTY times less often than snapshots take. */
static void snapshot_new_targets(struct recorder *r, uint64_t now)
{
	uint64_t spent = r->sockets.stats.ns_total, wait = SNAPSHOT_CHECK_INTERVAL_NS;
	uint32_t *pids = NULL, n = 0;

	if (r->opts->mode == TARGET_ALL || now < r->next_snapshot_check_ns)
		return;
	if (targets_list(&r->session.targets, &pids, &n) == 0)
		socket_snapshot_new(&r->sockets, &r->consumer, pids, n, now);
	free(pids);
	spent = r->sockets.stats.ns_total - spent;
	if (spent * SNAPSHOT_DUTY > wait)
		wait = spent * SNAPSHOT_DUTY;
	r->next_snapshot_check_ns = now + wait;
}

static int setup(struct recorder *r)
{
	int err = 0;

	if (r->opts->mode == TARGET_COMMAND)
		err = spawn_command(r);
	if (err)
		return err;
	raise_fd_limit(); /* after the fork: the command keeps its own limit */
	err = open_output(r);
	if (!err)
		err = load_and_attach(r);
	if (!err)
		err = drop_privileges(r);
	if (!err)
		err = start_writer(r);
	if (!err)
		err = write_metadata(r);
	if (!err) /* before the command runs: it cannot outpace the rings meanwhile */
		snapshot_sockets(r);
	if (!err && r->have_child)
		err = start_command(r);
	return err;
}

static void abort_setup(struct recorder *r)
{
	if (r->have_child)
		command_cancel(&r->child);
	if (r->session_created)
		session_destroy(&r->session);
	if (r->writer_thread)
		writer_thread_stop(r->writer_thread);
	if (r->consumer_ready)
		consumer_free(&r->consumer);
	if (r->writer) {
		pc_writer_abort(r->writer);
		unlink(r->opts->output); /* nothing useful was recorded */
	}
}

/* ---- recording -------------------------------------------------------- */

static bool any_pid_alive(const struct record_options *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		if (process_is_alive(o->pids[i]))
			return true;
	}
	return false;
}

static int poll_timeout_ms(const struct recorder *r, uint64_t now)
{
	int most = processes_any_young(&r->consumer.processes, now) ? POLL_TIMEOUT_YOUNG_MS
								    : POLL_TIMEOUT_MS;
	uint64_t deadline = r->consumer.tick_by_ns, left_ms;

	if (r->opts->duration_ns) {
		uint64_t end = r->recording_since_ns + r->opts->duration_ns;

		if (!deadline || end < deadline)
			deadline = end;
	}
	if (!deadline)
		return most;
	if (now >= deadline)
		return 0;
	left_ms = (deadline - now + 999999) / 1000000;
	return left_ms < (uint64_t)most ? (int)left_ms : most;
}

static enum stop_reason check_stop(struct recorder *r, uint64_t now)
{
	const struct record_options *o = r->opts;

	if (r->consumer.write_error)
		return STOP_WRITE_ERROR;
	if (o->max_size && writer_thread_limit_hit(r->writer_thread))
		return STOP_MAX_SIZE;
	if (stop_signal)
		return STOP_SIGNAL;
	if (flight_dump)
		return STOP_FLIGHT_DUMP;
	if (o->duration_ns && now - r->recording_since_ns >= o->duration_ns)
		return STOP_DURATION;
	if (o->mode == TARGET_COMMAND && command_has_exited(&r->child))
		return STOP_COMMAND_EXITED;
	if (o->mode == TARGET_PIDS && now >= r->next_pid_check_ns) {
		r->next_pid_check_ns = now + PID_CHECK_INTERVAL_NS;
		if (!any_pid_alive(o))
			return STOP_PIDS_GONE;
	}
	return STOP_NONE;
}

static void announce(const struct recorder *r)
{
	const struct record_options *o = r->opts;
	char what[64];

	if (o->mode == TARGET_COMMAND)
		return; /* the command's own output follows */
	if (o->mode == TARGET_ALL)
		snprintf(what, sizeof(what), "all CPUs");
	else if (o->npids == 1)
		snprintf(what, sizeof(what), "pid %d", (int)o->pids[0]);
	else
		snprintf(what, sizeof(what), "%zu processes", o->npids);
	if (o->duration_ns)
		fprintf(stderr, "%s: recording %s for %.3g s\n", PROGRAM_NAME, what,
			(double)o->duration_ns / 1e9);
	else
		fprintf(stderr, "%s: recording %s; Ctrl-C to stop\n", PROGRAM_NAME, what);
}

static void record_until_stopped(struct recorder *r)
{
	uint64_t now = monotonic_ns();

	/* -d is seconds of recording: attaching (seconds, on a loaded host)
	 * is not counted */
	r->recording_since_ns = now;
	announce(r);
	while ((r->reason = check_stop(r, now)) == STOP_NONE) {
		if (ring_reader_poll(&r->session.reader, poll_timeout_ms(r, now))) {
			r->reason = STOP_RING_ERROR;
			break;
		}
		now = monotonic_ns();
		r->consumer.tick_by_ns = 0;  /* the ticks say again what they want */
		session_tick(&r->session, &r->consumer, now, false);
		consumer_tick(&r->consumer, now);
		targets_remove_retired(&r->session.targets, now);
		snapshot_new_targets(r, now);
	}
}

/* The stops the user did not ask for directly are said on stderr. */
static void report_stop(const struct recorder *r)
{
	double seconds = (double)(monotonic_ns() - r->run.start_monotonic_ns) / 1e9;
	char size[32];

	if (r->reason == STOP_MAX_SIZE)
		fprintf(stderr, "%s: stopped at --max-size %s after %.1f s\n", PROGRAM_NAME,
			fmt_size(size, sizeof(size), r->opts->max_size), seconds);
	else if (r->reason == STOP_FLIGHT_DUMP)
		fprintf(stderr, "%s: SIGUSR1: writing the flight recorder's window after %.1f s "
			"and stopping\n", PROGRAM_NAME, seconds);
}

/* A command still running when recording stops is asked to stop too. */
static void stop_command(struct recorder *r)
{
	int sig = stop_signal ? stop_signal : SIGTERM;

	if (!r->have_child || command_has_exited(&r->child))
		return;
	if (r->reason == STOP_SIGNAL || r->reason == STOP_DURATION ||
	    r->reason == STOP_MAX_SIZE || r->reason == STOP_FLIGHT_DUMP ||
	    r->reason == STOP_WRITE_ERROR || r->reason == STOP_RING_ERROR)
		command_stop(&r->child, sig, COMMAND_STOP_TIMEOUT_MS);
}

/* ---- finishing -------------------------------------------------------- */

static void collect_totals(struct recorder *r, struct record_totals *t)
{
	t->consumer = &r->consumer;
	t->attached = r->session.attached;
	t->start_ns = r->run.start_monotonic_ns;
	t->end_ns = r->end_ns;
	t->cpu_start = &r->cpu_start;
	t->cpu_end = &r->cpu_end;
	t->stop_reason = stop_reason_name(r->reason, r->consumer.write_error);
	if (shared_maps_read_losses(&r->session.maps, &t->losses))
		warning_line("cannot read the kernel's loss counters");
}

static int write_stats(struct recorder *r, struct record_totals *t)
{
	struct chunk_buffer cb = { 0 };
	int err;

	t->backpressure_waits = writer_thread_backpressure_waits(r->writer_thread);
	err = stats_build(&cb, t) ? -ENOMEM : 0;
	if (!err)
		err = writer_thread_submit(r->writer_thread, PC_CHUNK_STATS, PC_STATS_VERSION, &cb);
	chunk_buffer_free(&cb);
	return err;
}

/* --max-size: the END chunk must fit too (the reserve makes sure it does). */
static bool end_fits(const struct recorder *r, const struct chunk_buffer *end)
{
	uint64_t max = r->opts->max_size;

	return !max || pc_writer_bytes(r->writer) + PC_CHUNK_HEADER_SIZE + end->buf.len <= max;
}

static int write_end(struct recorder *r, const struct record_totals *t)
{
	struct chunk_buffer end = { 0 };
	int err = stats_build_end(&end, t, pc_writer_chunks(r->writer)) ? -ENOMEM : 0;

	if (!err && !end_fits(r, &end)) {
		warning_line("no room left for the END chunk within --max-size: the capture "
			     "reads as not finished cleanly");
		pc_writer_abort(r->writer);
		r->writer = NULL;
		chunk_buffer_free(&end);
		return 0;
	}
	err = err ? err : pc_writer_finish(r->writer, &end.buf);
	r->writer = NULL; /* pc_writer_finish freed it */
	chunk_buffer_free(&end);
	return err;
}

static void report_write_error(const struct recorder *r, int err)
{
	if (err == -ENOSPC)
		error_line("disk full while writing %s: recording stopped; the file keeps the "
			   "chunks written before but is incomplete (no END chunk)", r->opts->output);
	else
		error_line("cannot write %s: %s; the file is incomplete", r->opts->output,
			   strerror(-err));
}

static void report_command(const struct recorder *r)
{
	char how[128];

	if (r->have_child)
		fprintf(stderr, "%s: command %s\n", PROGRAM_NAME,
			command_describe_exit(&r->child, how, sizeof(how)));
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Everything after the sampling: returns the exit status. */
static int finish(struct recorder *r)
{
	struct record_totals totals = { 0 };
	struct writer_drops drops = { 0 };
	struct symbol_stats symbols = { 0 };
	int err, stop_err;

	snapshot_sockets(r); /* before the command is stopped */
	stop_command(r);
	session_detach(&r->session);
	r->end_ns = monotonic_ns();
	host_cpu_read(&r->cpu_end, NULL);
	ring_reader_drain(&r->session.reader);
	session_tick(&r->session, &r->consumer, r->end_ns, true);
	err = consumer_flush(&r->consumer);
	if (r->opts->jvm_perfmap) /* before symbols_write reads the maps */
		jvm_perfmaps_request(&r->consumer.processes, &r->jvm);
	if (!err)
		err = unwind_tables_write(r->writer_thread, &r->consumer.processes);
	if (!err)
		err = symbols_write(r->writer_thread, &r->consumer.stack_table,
				    &r->consumer.processes, &symbols);
	collect_totals(r, &totals);
	totals.symbols = symbols;
	totals.sockets = &r->sockets.stats;
	totals.jvm = &r->jvm;
	if (!err)
		err = write_stats(r, &totals);
	stop_err = writer_thread_stop_counted(r->writer_thread, &drops);
	totals.max_size_dropped = drops.max_size_events;
	totals.flight_dropped = drops.flight_events;
	r->writer_thread = NULL;
	if (stop_err)
		err = stop_err;
	if (!err)
		err = write_end(r, &totals);
	if (err) {
		if (r->writer)
			pc_writer_abort(r->writer);
		report_write_error(r, err);
	} else {
		stats_print_summary(&totals, r->opts->output, file_size(r->opts->output));
	}
	report_command(r);
	loss_counts_free(&totals.losses);
	consumer_free(&r->consumer);
	socket_snapshot_free(&r->sockets);
	session_destroy(&r->session);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct record_options opts;
	struct recorder r = { .opts = &opts };
	int status = cli_parse(argc, argv, &opts);

	if (status)
		return status;
	if (opts.list_events) {
		sources_print();
		cli_free(&opts);
		return 0;
	}
	if (preflight_check()) {
		cli_free(&opts);
		return 1;
	}
	install_signal_handlers(&opts);
	if (setup(&r)) {
		abort_setup(&r);
		cli_free(&opts);
		return 1;
	}
	record_until_stopped(&r);
	if (r.reason == STOP_RING_ERROR)
		error_line("reading the ring buffer failed; finishing the capture");
	report_stop(&r);
	status = finish(&r);
	cli_free(&opts);
	return status;
}
