/* metadata.c - the META chunk, the first chunk of every capture.
 *
 * Keys written here (all values are strings):
 *   perfcap.version perfcap.git
 *   host.hostname host.kernel.release host.kernel.version host.arch
 *   host.boot_id host.ncpus
 *   clock.monotonic_ns clock.realtime_ns   (read back to back at start)
 *   record.cmdline (shell-quoted argv) record.start_ns (monotonic)
 *   record.output record.duration_limit_ns (0: none)
 *   record.mode (normal|flight-recorder) record.max_size (0: none)
 *   flight.size (flight recorder only)
 *   record.privileges.kept (capabilities kept after attach)
 *   target.mode (command|pids|all) target.command target.pids
 *   target.command.uid target.command.gid (when run as the sudo user)
 *   filter.pids ("none" or a comma list) filter.follow_children (yes|no)
 *   filter.comm filter.cgroup ("none" or the value) filter.cgroup.id
 *   sampling.events.one_in sampling.events.seed sampling.events.rate_cap
 *   stack.max_depth bpf.sha256.<object>
 * session_meta() adds: sources sources.selected sources.failed.<name>
 *   bpf.rings bpf.ringbuf_bytes bpf.stackmap_entries bpf.targets_max and
 *   each attached source's keys (sampling.cpu.*, sched.*).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf_hashes.h"
#include "metadata.h"
#include "perfcap_bpf.h"
#include "perfcap_version.h"
#include "util/util.h"

static int add_u64(struct chunk_buffer *cb, const char *key, uint64_t value)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, value);
	return chunk_buffer_add_kv(cb, key, text);
}

static int add_host(struct chunk_buffer *cb)
{
	struct utsname uts;
	char hostname[256] = "", boot_id[64] = "";
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	int err = 0;

	if (uname(&uts))
		memset(&uts, 0, sizeof(uts));
	gethostname(hostname, sizeof(hostname) - 1);
	read_first_line("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
	err |= chunk_buffer_add_kv(cb, "host.hostname", hostname);
	err |= chunk_buffer_add_kv(cb, "host.kernel.release", uts.release);
	err |= chunk_buffer_add_kv(cb, "host.kernel.version", uts.version);
	err |= chunk_buffer_add_kv(cb, "host.arch", uts.machine);
	err |= chunk_buffer_add_kv(cb, "host.boot_id", boot_id);
	err |= add_u64(cb, "host.ncpus", ncpus > 0 ? (uint64_t)ncpus : 0);
	return err ? -ENOMEM : 0;
}

static int join_words(struct text *t, char **words, int n)
{
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		if (i)
			err = text_append(t, " ", 1);
		if (!err)
			err = text_append_shell_word(t, words[i]);
	}
	return err;
}

static int join_pids(struct text *t, const pid_t *pids, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		char num[16];

		snprintf(num, sizeof(num), "%s%d", i ? "," : "", pids[i]);
		err = text_append_str(t, num);
	}
	return err;
}

static int add_target(struct chunk_buffer *cb, const struct record_options *o,
		      const struct run_info *run)
{
	struct text command = { 0 }, pids = { 0 };
	int err = 0, ncommand = 0;

	if (o->mode == TARGET_COMMAND) {
		while (o->command[ncommand])
			ncommand++;
		err |= join_words(&command, o->command, ncommand);
		err |= join_pids(&pids, &run->command_pid, 1);
	} else if (o->mode == TARGET_PIDS) {
		err |= join_pids(&pids, o->pids, o->npids);
	}
	err |= chunk_buffer_add_kv(cb, "target.mode", target_mode_name(o->mode));
	err |= chunk_buffer_add_kv(cb, "target.command", command.s ? command.s : "");
	err |= chunk_buffer_add_kv(cb, "target.pids", pids.s ? pids.s : "");
	err |= chunk_buffer_add_kv(cb, "filter.pids", pids.s ? pids.s : "none");
	err |= chunk_buffer_add_kv(cb, "filter.follow_children",
				   o->mode == TARGET_ALL ? "no" : "yes");
	if (run->command_identity && run->command_identity->change) {
		err |= add_u64(cb, "target.command.uid", run->command_identity->uid);
		err |= add_u64(cb, "target.command.gid", run->command_identity->gid);
	}
	text_free(&command);
	text_free(&pids);
	return err ? -ENOMEM : 0;
}

static int add_recording(struct chunk_buffer *cb, const struct record_options *o,
			 const struct run_info *run)
{
	struct text cmdline = { 0 };
	int err = join_words(&cmdline, o->argv, o->argc);

	err |= add_u64(cb, "clock.monotonic_ns", run->start_monotonic_ns);
	err |= add_u64(cb, "clock.realtime_ns", run->start_realtime_ns);
	err |= chunk_buffer_add_kv(cb, "record.cmdline", cmdline.s ? cmdline.s : "");
	err |= add_u64(cb, "record.start_ns", run->start_monotonic_ns);
	/* the recorder itself: it wakes traced threads too (its /proc reads
	 * take their memory-map lock), and the analyzer names it as such */
	err |= add_u64(cb, "record.pid", (uint64_t)getpid());
	err |= chunk_buffer_add_kv(cb, "record.output", o->output);
	err |= add_u64(cb, "record.duration_limit_ns", o->duration_ns);
	err |= chunk_buffer_add_kv(cb, "record.mode", o->flight_size ? "flight-recorder" : "normal");
	err |= add_u64(cb, "record.max_size", o->max_size);
	if (o->flight_size)
		err |= add_u64(cb, "flight.size", o->flight_size);
	err |= chunk_buffer_add_kv(cb, "record.privileges.kept",
				   run->privileges_kept ? run->privileges_kept : "all");
	text_free(&cmdline);
	return err ? -ENOMEM : 0;
}

static int add_filters(struct chunk_buffer *cb, const struct record_options *o)
{
	int err = 0;

	err |= chunk_buffer_add_kv(cb, "filter.comm", o->comm ? o->comm : "none");
	err |= chunk_buffer_add_kv(cb, "filter.cgroup", o->cgroup_path ? o->cgroup_path : "none");
	if (o->cgroup_path)
		err |= add_u64(cb, "filter.cgroup.id", o->cgroup_id);
	err |= add_u64(cb, "sampling.events.one_in", o->sample_one_in);
	err |= add_u64(cb, "sampling.events.seed", o->sample_seed);
	err |= add_u64(cb, "sampling.events.rate_cap", o->rate_cap);
	return err ? -ENOMEM : 0;
}

static int add_bpf(struct chunk_buffer *cb)
{
	size_t nhashes = sizeof(perfcap_bpf_hashes) / sizeof(perfcap_bpf_hashes[0]);
	int err = 0;

	err |= add_u64(cb, "stack.max_depth", PERFCAP_STACK_MAX_DEPTH);
	for (size_t i = 0; i < nhashes && !err; i++) {
		char key[128];

		snprintf(key, sizeof(key), "bpf.sha256.%s", perfcap_bpf_hashes[i].name);
		err |= chunk_buffer_add_kv(cb, key, perfcap_bpf_hashes[i].sha256);
	}
	return err ? -ENOMEM : 0;
}

int metadata_build(struct chunk_buffer *cb, const struct record_options *o,
		   const struct run_info *run)
{
	int err = 0;

	err |= chunk_buffer_add_kv(cb, "perfcap.version", PERFCAP_VERSION);
	err |= chunk_buffer_add_kv(cb, "perfcap.git", PERFCAP_GIT_HASH);
	err |= add_host(cb);
	err |= add_recording(cb, o, run);
	err |= add_target(cb, o, run);
	err |= add_filters(cb, o);
	err |= add_bpf(cb);
	return err ? -ENOMEM : 0;
}
