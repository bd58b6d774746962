/* source_proc.c - the proc source: process lifecycle (bpf/proc.bpf.c).
 * Always on: it follows the forks of target processes, and its EXEC and
 * EXIT records let the recorder re-read a process's maps after exec and
 * know when a followed process is gone. It also emits FORK records when
 * the sched source is selected (sched handles them). */
#include <errno.h>

#include "consume/consumer.h"
#include "proc.skel.h"
#include "source.h"

static struct proc_bpf *skel;
static uint64_t execs, exits;

static int proc_load(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = proc_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	skel->rodata->pc_config = *env->config;
	skel->rodata->emit_forks = env->selected[PERFCAP_SRC_SCHED];
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(proc_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

static int proc_attach(const struct source_env *env, char *why, size_t len)
{
	int err = proc_bpf__attach(skel);

	(void)env;
	if (err)
		source_explain(why, len, "cannot attach sched_process_fork/exec/exit", err);
	return err;
}

static void proc_detach(void)
{
	if (skel)
		proc_bpf__detach(skel);
}

static void proc_destroy(void)
{
	proc_bpf__destroy(skel);
	skel = NULL;
}

static void copy_comm(char out[17], const char in[16])
{
	memcpy(out, in, 16);
	out[16] = '\0';
}

static void handle_exec(struct consumer *c, const struct perfcap_proc_event *e)
{
	struct pc_rec_exec rec = { .h.type = PC_REC_EXEC, .ts = e->h.ts, .pid = e->pid,
				   .tid = e->tid };
	char comm[17];

	copy_comm(comm, e->comm);
	memcpy(rec.comm, e->comm, sizeof(rec.comm));
	processes_on_exec(&c->processes, e->pid, e->tid, comm, e->h.ts, c->read_proc_at_exec);
	if (c->nexec_pids < CONSUMER_EXECS_MAX)
		c->exec_pids[c->nexec_pids++] = e->pid;
	if (consumer_add_event(c, PERFCAP_SRC_PROC, &rec, sizeof(rec), e->h.ts) == 0)
		execs++;
}

static void handle_exit(struct consumer *c, const struct perfcap_proc_event *e)
{
	struct pc_rec_exit rec = { .h.type = PC_REC_EXIT, .ts = e->h.ts, .pid = e->pid,
				   .tid = e->tid };

	processes_on_exit(&c->processes, e->pid);
	if (consumer_add_event(c, PERFCAP_SRC_PROC, &rec, sizeof(rec), e->h.ts) == 0)
		exits++;
	if (c->on_exit)
		c->on_exit(c->on_exit_ctx, e->pid, e->h.ts);
}

static void proc_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_proc_event *e = rec;

	if (size < sizeof(*e))
		consumer_drop(c, PERFCAP_SRC_PROC);
	else if (e->h.type == PERFCAP_EV_EXEC)
		handle_exec(c, e);
	else
		handle_exit(c, e);
}

static int proc_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	int err = 0;

	(void)c;
	err |= chunk_buffer_add_kv_u64(kv, "procs.execs", execs);
	err |= chunk_buffer_add_kv_u64(kv, "procs.exits", exits);
	return err ? -ENOMEM : 0;
}

static const uint16_t proc_event_types[] = { PERFCAP_EV_EXEC, PERFCAP_EV_EXIT, 0 };

const struct source proc_source = {
	.summary = "process lifecycle: exec and exit; follows the children of targets; "
		   "their sockets at start and end (socket snapshots, read from /proc)",
	.id = PERFCAP_SRC_PROC,
	.default_on = true,
	.always_on = true,
	.event_types = proc_event_types,
	.load = proc_load,
	.attach = proc_attach,
	.detach = proc_detach,
	.destroy = proc_destroy,
	.handle = proc_handle,
	.stats = proc_stats,
};
