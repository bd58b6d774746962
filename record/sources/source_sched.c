/* source_sched.c - the sched source: context switches, wakeups, off-CPU
 * intervals with stacks (bpf/sched.bpf.c) and forks (emitted by
 * bpf/proc.bpf.c, the one owner of sched_process_fork, when this source is
 * selected). The reference source: the others follow its shape.
 *
 * Each kernel record becomes one capture record (SWITCH, WAKEUP, OFFCPU,
 * FORK). The tasks of SWITCH, WAKEUP and FORK records are only named
 * (THREAD records: a context switch is too frequent, and too often of an
 * untraced task, to read /proc for); a process with an OFFCPU record is
 * described like a sampled one (PROC/THREAD/MAP records), since its user
 * stack needs its mappings.
 *
 * With --stack-copy, blocked user threads' stack copies (USTACK records
 * with the OFFCPU flag) come through this ring and are written like the
 * cpu source's (consume/ustack_copy.c): just after their OFFCPU record
 * (flagged COPY_FOLLOWS) when taken at the thread's return to user space
 * (on_switch_ret, kernels with the task_work kfunc), else just before it
 * (on_switch, taken at the switch-out). One of the two sched_switch
 * programs is loaded; if on_switch_ret fails to load, on_switch is tried.
 *
 * A wakeup in interrupt context is told soft or hard by the CPU's preempt
 * count where a check at load shows it reads true (choose_irq_context:
 * offsets from the kernel's BTF, a probe run here and on another CPU),
 * else by the softirq_exit program (META sched.irq_context).
 *
 * Above --sched-rate context switches a second (default 10,000), the
 * programs at sched_switch, sched_waking and sched_wakeup_new are attached
 * only in a window at the start of each second, long enough for about
 * that many (the last window's rate says how long): see "windows".
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "common/units.h"
#include "consume/consumer.h"
#include "consume/ustack_copy.h"
#include "session/preflight.h"
#include "util/util.h"
#include "hot_links.h"
#include "metrics_drain.h"
#include "sched.skel.h"
#include "softirq_marks.h"
#include "source.h"
#include "source_sched.h"

_Static_assert(PERFCAP_TASK_STATE_MASK == PC_TASK_STATE_MASK, "state bits as in the format");
_Static_assert(PERFCAP_SCHED_BATCH_HEADER_SIZE == offsetof(struct perfcap_sched_batch, e),
	       "the batch header is what precedes the records");
_Static_assert(PERFCAP_OFFCPU_HEADER_SIZE == offsetof(struct perfcap_offcpu, kips),
	       "the OFFCPU header is what precedes the stack");
_Static_assert((PERFCAP_WAKE_HARDIRQ | PERFCAP_WAKE_SOFTIRQ | 0xf << PERFCAP_WAKE_VEC_SHIFT) ==
	       PC_WAKE_F_MASK, "wake context bits as in the format");
_Static_assert(PERFCAP_SOFTIRQ_UNNAMED == PC_WAKE_VEC_UNNAMED, "the unnamed vector as in the format");

static struct sched_bpf *skel;
static struct perfcap_sched_batch *batch_view; /* sched_batch as last read, per CPU */
static bool prev_state_from_tracepoint;
static bool copy_at_return;       /* on_switch_ret is the one loaded */
static bool with_waits;           /* the programs make the waits' sums too */
static bool loaded, attached;
static char copy_at_switch_why[160]; /* why not, when copies are on */
static const char *irq_context_how; /* META sched.irq_context */
static const char *softirq_vector_how; /* META sched.softirq_vector */
static bool softirq_marks_found;  /* rodata softirq_marks filled */
static char softirq_marks_why[160];
#define IRQ_UNREAD 17               /* its index in ustash_counts (bpf/sched.bpf.c) */
#define USTASH_NO_HEAD 18           /* STATS sched.ustack.no_head's index there */
#define GAP_KEPT 19                 /* STATS sched.windows.gap_kept's */
#define GAP_RAN 20                  /* STATS sched.windows.gap_ran's */
#define IN_UNSEEN 21                /* STATS sched.switch_in_unseen's */
static uint64_t irq_unread;         /* STATS sched.irq_unread, as last read */
static uint64_t in_unseen;          /* STATS sched.switch_in_unseen, as last read */
static uint32_t drop_switch_in;     /* PERFCAP_SCHED_DROP_SWITCH_IN, 0: unset */

/* Counter idx of ustash_counts: from the programs while they are loaded,
 * else as last read into *last (the summary may come after they are gone). */
static uint64_t count_now(int idx, uint64_t *last)
{
	if (skel)
		*last = skel->bss->ustash_counts[idx];
	return *last;
}

/* PERFCAP_SCHED_DROP_SWITCH_IN=N (perfcap-record(1), ENVIRONMENT), for
 * tests: the programs ignore every N-th switch-in of a traced thread, as
 * the kernel sometimes does not deliver one (bpf/sched.bpf.c,
 * close_unseen). Said in META sched.drop_switch_in. */
static uint32_t drop_switch_in_from_env(void)
{
	const char *set = getenv("PERFCAP_SCHED_DROP_SWITCH_IN");
	char *end;
	unsigned long n;

	if (!set || !*set)
		return 0;
	errno = 0;
	n = strtoul(set, &end, 10);
	if (errno || *end || n < 2 || n > 1000000) {
		warning_line("sched: PERFCAP_SCHED_DROP_SWITCH_IN=%s ignored: want 2-1000000", set);
		return 0;
	}
	warning_line("sched: ignoring one switch-in of a traced thread in %lu "
		     "(PERFCAP_SCHED_DROP_SWITCH_IN, for tests)", n);
	return (uint32_t)n;
}
static uint64_t switches, wakeups, offcpus, forks;

/* Stash slots for off-CPU stack copies (a power of two): a slot is held
 * from its thread's switch-out to its switch-in, so this many threads can
 * be blocked at once with their copies (bpf/sched.bpf.c probes 4 slots per
 * thread; one that finds none goes without: sched.ustack.no_slot). 512
 * slots of 72 KiB: 36 MiB of kernel memory, only when copies are on. */
#define USTASH_SLOTS 512

#define TASK_WORK_KFUNC "bpf_task_work_schedule_resume_impl"

/* Sizes the off-CPU stack copy stash (and the copies' task_works when
 * taken at the return): one slot when copies are off. */
static int ustash_setup(uint32_t stack_copy, char *why, size_t len)
{
	uint32_t slots = stack_copy ? USTASH_SLOTS : 1;
	int err = bpf_map__set_max_entries(skel->maps.offcpu_ustash, slots);

	if (!err)
		err = bpf_map__set_max_entries(skel->maps.copy_work,
					       copy_at_return ? slots : 1);
	if (err) {
		source_explain(why, len, "cannot size the off-CPU stack copy stash", err);
		return err;
	}
	skel->rodata->ustack_window = stack_copy;
	skel->rodata->ustash_mask = slots - 1;
	return 0;
}

/* With the waits source selected, the programs make its sums too
 * (source_sched.h); without it, its sums map is one entry (a hash map is
 * allocated whole at load). */
static int waits_setup(bool selected, char *why, size_t len)
{
	int err = 0;

	with_waits = selected;
	skel->rodata->with_waits = selected;
	if (selected)
		metrics_classes_fill(skel->rodata->agg_class_of);
	else
		err = bpf_map__set_max_entries(skel->maps.agg_metrics, 1);
	if (err)
		source_explain(why, len, "cannot size the waits' sums map", err);
	return err;
}

int sched_waits_maps(struct bpf_map **sums, struct bpf_map **counters)
{
	if (!loaded || !with_waits)
		return -ENOENT;
	*sums = skel->maps.agg_metrics;
	*counters = skel->maps.agg_counters;
	return 0;
}

bool sched_attached(void)
{
	return attached;
}


/* ---- loading and attaching -------------------------------------------- */

/* Which sched_switch program to load: on_switch_ret when copies are on,
 * wanted at the return, and the kernel has the kfunc. */
static bool want_copy_at_return(const struct record_options *o)
{
	if (!o->stack_copy)
		return false;
	if (o->offcpu_copy_at_switch) {
		snprintf(copy_at_switch_why, sizeof(copy_at_switch_why), "--offcpu-copy switch-out");
		return false;
	}
	if (!preflight_kernel_has_func(TASK_WORK_KFUNC)) {
		snprintf(copy_at_switch_why, sizeof(copy_at_switch_why),
			 "the kernel has no " TASK_WORK_KFUNC " (Linux 6.18+)");
		return false;
	}
	return true;
}

/* &__preempt_count - &runqueues (per-CPU variables of the same section),
 * from the kernel's BTF; 0 when either is not there. */
static long long preempt_count_distance(void)
{
	long long pc = preflight_percpu_offset("__preempt_count");
	long long rq = preflight_percpu_offset("runqueues");

	return pc < 0 || rq < 0 ? 0 : pc - rq;
}

/* probe_preempt_count on cpu (through an interrupt when it is not this
 * one; -1: here, directly): the preempt count it read, or
 * PERFCAP_PREEMPT_UNREAD. */
static uint32_t probe_preempt_count(int cpu)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (cpu >= 0) {
		opts.cpu = (__u32)cpu;
		opts.flags = BPF_F_TEST_RUN_ON_CPU;
	}
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.probe_preempt_count), &opts))
		return PERFCAP_PREEMPT_UNREAD;
	return opts.retval;
}

/* Tells interrupts apart by the preempt count if it reads true: no
 * interrupt here, a hard one on another CPU (an IPI); the softirq_exit
 * program is then not attached (one program less per soft interrupt on
 * the host). Else, and on one CPU, softirq_exit stays. */
/* A run on another CPU that shows a hard interrupt, trying each other CPU
 * up to REMOTE_TRIES times a millisecond apart: a CPU idling in a polling
 * loop (cpuidle haltpoll on a virtual machine) runs the function from its
 * idle loop when it sees it queued, without the interrupt, and shows
 * none. */
#define REMOTE_TRIES 10
static bool remote_shows_hardirq(int here)
{
	int ncpus = libbpf_num_possible_cpus();

	for (int try = 0; try < REMOTE_TRIES; try++) {
		for (int cpu = 0; cpu < ncpus; cpu++) {
			uint32_t pc = cpu == here ? PERFCAP_PREEMPT_UNREAD : probe_preempt_count(cpu);

			if (pc != PERFCAP_PREEMPT_UNREAD && (pc & PERFCAP_PREEMPT_HARDIRQ_MASK))
				return true;
		}
		usleep(1000);
	}
	return false;
}

/* Whether the preempt count reads true: no interrupt here, a hard one on
 * another CPU. The thread is pinned to its CPU meanwhile: moved to the
 * other one between the runs, its "remote" run would be local. */
static bool preempt_count_reads_true(void)
{
	int here = sched_getcpu();
	cpu_set_t saved, one;
	uint32_t local;
	bool ok;

	if (here < 0 || sched_getaffinity(0, sizeof(saved), &saved))
		return false;
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return false;
	local = probe_preempt_count(-1);
	ok = local != PERFCAP_PREEMPT_UNREAD &&
	     !(local & (PERFCAP_PREEMPT_HARDIRQ_MASK | PERFCAP_PREEMPT_SOFTIRQ_OFFSET)) &&
	     remote_shows_hardirq(here);
	sched_setaffinity(0, sizeof(saved), &saved);
	return ok;
}

/* Whether environment variable var (perfcap-record(1), ENVIRONMENT)
 * forces the fallback named value; says so with -v. */
static bool forced_by_env(const char *var, const char *value, const char *what)
{
	const char *set = getenv(var);

	if (!set || strcmp(set, value) != 0)
		return false;
	verbose_line("sched: %s by %s (%s)", what, value, var);
	return true;
}

static void choose_irq_context(void)
{
	irq_context_how = "softirq_exit";
	if (forced_by_env("PERFCAP_IRQ_CONTEXT", "softirq_exit", "soft interrupts told"))
		return;
	if (!skel->rodata->preempt_count_from_rq) {
		verbose_line("sched: soft interrupts told by softirq_exit: the kernel's BTF has no "
			     "__preempt_count or runqueues in .data..percpu");
		return;
	}
	if (!preempt_count_reads_true()) {
		verbose_line("sched: soft interrupts told by softirq_exit: the preempt count did not "
			     "read true here and on another CPU");
		return;
	}
	skel->bss->irq_by_preempt_count = true;
	bpf_program__set_autoattach(skel->progs.on_softirq_exit, false);
	irq_context_how = "preempt_count";
}

/* With the preempt count read, the running soft interrupt is named by the
 * per-CPU fields set while it runs where the kernel has them all
 * (softirq_marks.c): no program runs at each soft interrupt's entry (on
 * nginx and redis under load, 180,000-210,000 a second, the largest of
 * the default recording's programs). Else softirq_entry notes it. */
static void choose_softirq_vector(void)
{
	softirq_vector_how = "softirq_entry";
	if (forced_by_env("PERFCAP_SOFTIRQ_VECTOR", "softirq_entry", "soft interrupts named"))
		return;
	if (!skel->bss->irq_by_preempt_count) {
		verbose_line("sched: soft interrupts named by softirq_entry: the preempt count is not read");
		return;
	}
	if (!softirq_marks_found) {
		verbose_line("sched: soft interrupts named by softirq_entry: %s", softirq_marks_why);
		return;
	}
	skel->bss->softirq_by_marks = true;
	bpf_program__set_autoattach(skel->progs.on_softirq_entry, false);
	softirq_vector_how = "marks";
}

static int open_and_load(const struct source_env *env, char *why, size_t len)
{
	struct perfcap_softirq_marks marks;
	int err;

	skel = sched_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	bpf_program__set_autoload(skel->progs.on_switch, !copy_at_return);
	bpf_program__set_autoload(skel->progs.on_switch_ret, copy_at_return);
	bpf_program__set_autoattach(skel->progs.flush_batch, false); /* run, not attached */
	bpf_program__set_autoattach(skel->progs.probe_preempt_count, false);
	bpf_program__set_autoattach(skel->progs.sched_edge, false); /* win_begin */
	/* sched_switch(preempt, prev, next, prev_state) since Linux 5.18 */
	prev_state_from_tracepoint = preflight_tracepoint_args("sched_switch") >= 4;
	skel->rodata->pc_config = *env->config;
	skel->rodata->offcpu_min_ns = env->opts->offcpu_min_ns;
	skel->rodata->drop_switch_in_every = drop_switch_in;
	skel->rodata->stack_reuse_ns = env->opts->offcpu_stack_reuse_ns;
	skel->rodata->switch_has_prev_state = prev_state_from_tracepoint;
	skel->rodata->preempt_count_from_rq = preempt_count_distance();
	softirq_marks_found = softirq_marks_find(&marks, softirq_marks_why, sizeof(softirq_marks_why));
	skel->rodata->softirq_marks = marks;
	skel->rodata->marks_usable = softirq_marks_found;
	err = waits_setup(env->selected[PERFCAP_SRC_WAITS], why, len);
	if (!err)
		err = ustash_setup(env->opts->stack_copy, why, len);
	if (!err)
		err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(sched_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

static int load_either(const struct source_env *env, char *why, size_t len)
{
	int err;

	copy_at_return = want_copy_at_return(env->opts);
	drop_switch_in = drop_switch_in_from_env();
	err = open_and_load(env, why, len);
	if (!err || !copy_at_return)
		return err;
	/* the task_work program was refused: copies at the switch-out */
	snprintf(copy_at_switch_why, sizeof(copy_at_switch_why), "at the return: %s", why);
	warning_line("sched: off-CPU stack copies taken at the switch-out (%s)", why);
	sched_bpf__destroy(skel);
	copy_at_return = false;
	return open_and_load(env, why, len);
}

static int sched_load(const struct source_env *env, char *why, size_t len)
{
	int err = load_either(env, why, len);

	loaded = !err;
	if (loaded) {
		choose_irq_context();
		choose_softirq_vector();
	}
	return err;
}

static void win_begin(uint64_t budget);

static int sched_attach(const struct source_env *env, char *why, size_t len)
{
	int err;

	if (with_waits) /* the waits' windows start at the recording's start */
		skel->bss->agg_origin_ns = env->start_ns;
	err = sched_bpf__attach(skel);
	if (err)
		source_explain(why, len, "cannot attach sched_switch/sched_waking", err);
	attached = !err;
	if (attached && env->opts->sched_rate)
		win_begin(env->opts->sched_rate);
	return err;
}

static void sched_detach(void)
{
	if (skel)
		sched_bpf__detach(skel);
	attached = false;
}

static void sched_destroy(void)
{
	sched_bpf__destroy(skel);
	skel = NULL;
	loaded = attached = with_waits = false;
	free(batch_view);
	batch_view = NULL;
}

/* ---- records ------------------------------------------------------------ */

static void handle_switch(struct consumer *c, const struct perfcap_switch *e)
{
	struct pc_rec_switch rec = {
		.h.type = PC_REC_SWITCH,
		.h.flags = e->h.flags & (PC_SWITCH_F_PREV_TRACED | PC_SWITCH_F_NEXT_TRACED),
		.ts = e->h.ts,
		.cpu = e->h.cpu,
		.prev_state = e->prev_state,
		.prev_pid = e->prev_pid,
		.prev_tid = e->prev_tid,
		.next_pid = e->next_pid,
		.next_tid = e->next_tid,
		.prev_prio = e->prev_prio,
		.next_prio = e->next_prio,
	};

	consumer_thread_name(c, e->prev_pid, e->prev_tid, e->prev_comm, e->h.ts);
	consumer_thread_name(c, e->next_pid, e->next_tid, e->next_comm, e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), e->h.ts) == 0)
		switches++;
}

static void handle_wakeup(struct consumer *c, const struct perfcap_wakeup *e)
{
	struct pc_rec_wakeup rec = {
		.h.type = PC_REC_WAKEUP,
		.h.flags = (e->h.flags & PERFCAP_WAKEUP_F_NEW ? PC_WAKEUP_F_NEW : 0) |
			   (e->h.flags & PC_WAKE_F_MASK),
		.ts = e->h.ts,
		.pid = e->pid,
		.tid = e->tid,
		.waker_pid = e->waker_pid,
		.waker_tid = e->waker_tid,
		.target_cpu = e->target_cpu,
		.irq_pid = e->irq_pid,
		.irq_tid = e->irq_tid,
	};

	consumer_thread_name(c, e->pid, e->tid, e->comm, e->h.ts);
	if (e->waker_tid)
		consumer_thread_name(c, e->waker_pid, e->waker_tid, e->waker_comm, e->h.ts);
	else if (e->irq_tid)
		consumer_thread_name(c, e->irq_pid, e->irq_tid, e->waker_comm, e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), e->h.ts) == 0)
		wakeups++;
}

/* The raw kernel stack's ips as uint64_t (same size and representation as
 * __u64, which is unsigned long long where uint64_t is unsigned long). */
static const uint64_t *kernel_ips(const struct perfcap_offcpu *e)
{
	return (const uint64_t *)(const void *)e->kips;
}

static void handle_offcpu(struct consumer *c, const struct perfcap_offcpu *e, size_t size)
{
	uint32_t aspace = consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	bool kstack_error = e->h.flags & PERFCAP_OFFCPU_F_KSTACK_ERR;
	struct pc_rec_offcpu rec = {
		.h.type = PC_REC_OFFCPU,
		.h.flags = (e->waker_flags & PC_WAKE_F_MASK) |
			   (e->h.flags & PERFCAP_OFFCPU_F_COPY_FOLLOWS ? PC_OFFCPU_F_COPY_FOLLOWS : 0) |
			   (e->h.flags & PERFCAP_OFFCPU_F_COPY_SAME ? PC_OFFCPU_F_COPY_SAME : 0) |
			   (e->h.flags & PERFCAP_OFFCPU_F_GAP ? PC_OFFCPU_F_GAP : 0) |
			   (e->h.flags & PERFCAP_OFFCPU_F_WAKE_UNSEEN ? PC_OFFCPU_F_WAKE_UNSEEN : 0) |
			   (e->h.flags & PERFCAP_OFFCPU_F_IN_UNSEEN ? PC_OFFCPU_F_IN_UNSEEN : 0),
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.state = e->state,
		.waker_tid = e->waker_tid,
		.waker_pid = e->waker_pid,
		.irq_pid = e->irq_pid,
		.irq_tid = e->irq_tid,
		.copy_ts = e->copy_ts,
	};

	if (e->kstack_nr > PERFCAP_STACK_MAX_DEPTH ||
	    size < PERFCAP_OFFCPU_HEADER_SIZE + e->kstack_nr * sizeof(uint64_t)) {
		consumer_drop(c, PERFCAP_SRC_SCHED);
		return;
	}
	rec.kstack = consumer_raw_stack(c, PC_STACK_KERNEL, 0, 0, kstack_error, kernel_ips(e),
					e->kstack_nr, e->h.ts);
	rec.ustack = consumer_user_stack_id(c, PERFCAP_SRC_SCHED, e->ustack, aspace, e->pid,
					    e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), e->h.ts) == 0)
		offcpus++;
}

static void handle_fork(struct consumer *c, const struct perfcap_fork *e)
{
	struct pc_rec_fork rec = {
		.h.type = PC_REC_FORK,
		.h.flags = e->h.flags & PERFCAP_FORK_F_THREAD ? PC_FORK_F_THREAD : 0,
		.ts = e->h.ts,
		.parent_pid = e->parent_pid,
		.parent_tid = e->parent_tid,
		.child_pid = e->child_pid,
		.child_tid = e->child_tid,
	};

	consumer_thread_name(c, e->child_pid, e->child_tid, e->comm, e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), e->h.ts) == 0)
		forks++;
}

/* The SWITCH and WAKEUP records of a batch, in order (bpf/perfcap_bpf.h,
 * perfcap_sched_batch). A batch whose count does not fit its size is
 * dropped whole, its records counted as lost in user space (one when the
 * count itself is impossible). */
static void handle_batch(struct consumer *c, const struct perfcap_sched_batch *b, size_t size)
{
	if (b->n > PERFCAP_SCHED_BATCH_MAX) {
		consumer_drop(c, PERFCAP_SRC_SCHED);
		return;
	}
	if (size < PERFCAP_SCHED_BATCH_HEADER_SIZE + (size_t)b->n * sizeof(b->e[0])) {
		consumer_drop_n(c, PERFCAP_SRC_SCHED, b->n);
		return;
	}
	for (uint32_t i = 0; i < b->n; i++) {
		switch (b->e[i].h.type) {
		case PERFCAP_EV_SWITCH: handle_switch(c, &b->e[i].sw); break;
		case PERFCAP_EV_WAKEUP: handle_wakeup(c, &b->e[i].wk); break;
		default:                consumer_drop(c, PERFCAP_SRC_SCHED); break;
		}
	}
}

/* Every BATCH_FLUSH_NS the recorder looks at each CPU's batch (one read
 * of the per-CPU map: a system call, no interrupt) and has flush_batch run
 * on each CPU whose batch holds a record older than that (BPF_PROG_TEST_RUN
 * on that CPU: an IPI): a CPU busy with one untraced task switches no more
 * and would keep its records. A CPU that keeps switching sends its batch
 * itself, by age, at its next record; one that went idle sent it then. So
 * under load hardly any CPU is interrupted, where running the program on
 * every CPU interrupted each of them ten times a second (640 interrupts a
 * second on a 64-CPU host, each waited for by the recorder). After the programs
 * are detached (final), what is left is read from the map instead: the
 * ring has been drained by then. */
#define BATCH_FLUSH_NS PERFCAP_SCHED_BATCH_AGE_NS

static uint64_t batch_flushed_ns;
static uint64_t batch_flush_errors;
static uint64_t batch_flush_ipis;   /* STATS sched.batch_flush_ipis */

/* Every CPU's batch into batch_view; the number of CPUs, 0 on error. */
static int read_batches(void)
{
	int fd = bpf_map__fd(skel->maps.sched_batch), ncpus = libbpf_num_possible_cpus();
	__u32 zero = 0;

	if (ncpus <= 0)
		return 0;
	if (!batch_view && !(batch_view = calloc((size_t)ncpus, sizeof(*batch_view))))
		return 0;
	if (bpf_map_lookup_elem(fd, &zero, batch_view)) {
		batch_flush_errors++;
		return 0;
	}
	return ncpus;
}

/* force: every batch that holds a record, whatever its age. */
static void flush_cpu_batches(uint64_t now_ns, bool force)
{
	int fd = bpf_program__fd(skel->progs.flush_batch), ncpus = read_batches();
	/* the recorder's tgid: flush_batch leaves the batch of the CPU it runs
	 * on alone while the programs that write batches may interrupt it
	 * (bpf/sched.bpf.c); forced (they are detached), none that could */
	unsigned long long self[1] = { force ? ~0ull : (unsigned long long)getpid() };

	for (int cpu = 0; cpu < ncpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .cpu = cpu, .flags = BPF_F_TEST_RUN_ON_CPU,
			    .ctx_in = self, .ctx_size_in = sizeof(self));
		const struct perfcap_sched_batch *b = &batch_view[cpu];
		int err;

		/* both clocks are CLOCK_MONOTONIC; a batch stamped after
		 * now_ns started since */
		if (!b->n || (!force && (b->h.ts >= now_ns || now_ns - b->h.ts < BATCH_FLUSH_NS)))
			continue;
		batch_flush_ipis++;
		err = bpf_prog_test_run_opts(fd, &opts);
		/* an offline CPU (-ENXIO) went idle first: it holds nothing */
		if (err && err != -ENXIO)
			batch_flush_errors++;
	}
}

static void read_left_batches(struct consumer *c)
{
	int ncpus = read_batches();

	for (int cpu = 0; cpu < ncpus; cpu++)
		if (batch_view[cpu].n)
			handle_batch(c, &batch_view[cpu], sizeof(batch_view[cpu]));
}

/* ---- windows ------------------------------------------------------------ */

/* Above `budget` context switches of traced threads a second, the three
 * programs that run at every switch and wakeup on the host are attached
 * only in a window at the start of each period (a second), long enough
 * for about budget switches (the last window's rate says how long, at
 * least WIN_MIN_NS); between windows they are detached: a switch then
 * costs nothing, where a program that returns at once still costs about
 * 0.09 us a call. Below it, the period is followed whole (a load that
 * comes, or grows past the budget, to the end of its first second).
 *
 * At a window's end (win_close) the programs are detached, each CPU's
 * batch is sent, and the task iterator sched_edge writes out each traced
 * thread's run-time counters (SCHED_TASK_CLOSE: their differences to the
 * next SCHED_TASK are its run time in the gap; a thread exiting in the
 * gap is written out at its exit, SCHED_TASK_EXIT) and sums its wait in
 * progress up to there. At the next one's start
 * (win_open) the epoch moves (an off-CPU interval switched out before
 * the gap is kept only if its thread stayed off CPU throughout, its run
 * time unchanged), sched_edge writes out each traced thread (SCHED_TASK:
 * running, runnable or blocked, and its run-time counters) and starts the
 * waits of the blocked ones, a SCHED_GAP says what was not seen, and the
 * programs are attached again. */
#define WIN_PERIOD_NS 1000000000ull
#define WIN_MIN_NS      50000000ull

static struct {
	uint64_t budget;             /* --sched-rate; 0: no windows */
	uint64_t last_rate;          /* switches a second, at the last period's end */
	bool windowed;               /* this period's window is shorter than it */
	uint64_t span_start, span_ns;
	uint64_t period_start, open_start, open_len;
	uint64_t gap_start;          /* the last close */
	uint64_t switches_at_open;   /* `switches` when the window opened */
	uint64_t covered_ns;         /* attached time in all */
	uint64_t windows;            /* windows shorter than their period */
	uint64_t tasks;              /* SCHED_TASK, _CLOSE and _EXIT records */
	uint64_t attach_failed;      /* periods not followed: the programs refused */
	uint64_t edge_failed;        /* iterator runs that failed */
	int err;                     /* the last failure: -errno */
} win;
uint64_t sched_switch_rate(uint64_t now)
{
	static uint64_t last_switches, last_ns;
	uint64_t rate = 0;

	if (!attached)
		return 0;
	if (win.budget && win.last_rate)   /* a period measured: windows may cut the count */
		return win.last_rate;
	if (last_ns && now > last_ns)
		rate = (switches - last_switches) * 1000000000ull / (now - last_ns);
	last_switches = switches;
	last_ns = now;
	return rate;
}

/* The programs at every switch and wakeup on the host (hot_links.h: if
 * the kernel refuses to attach them again, they stay attached and every
 * switch is followed, STATS sched.windows.detach). */
static struct hot_links hot;

/* The programs are attached (also when they cannot be detached). */
static bool win_is_open(void)
{
	return hot.state != 0;
}

static void win_begin(uint64_t budget)
{
	win.budget = budget;
	win.span_start = win.period_start = win.open_start = monotonic_ns();
	win.open_len = WIN_PERIOD_NS;
	win.switches_at_open = switches;
	hot_links_add(&hot, copy_at_return ? skel->progs.on_switch_ret : skel->progs.on_switch,
		      copy_at_return ? &skel->links.on_switch_ret : &skel->links.on_switch);
	hot_links_add(&hot, skel->progs.on_wakeup, &skel->links.on_wakeup);
	hot_links_add(&hot, skel->progs.on_wakeup_new, &skel->links.on_wakeup_new);
	/* the iterator is attached now, while the recorder has its
	 * capabilities; each edge creates a reader of it */
	skel->links.sched_edge = bpf_program__attach_iter(skel->progs.sched_edge, NULL);
	if (!skel->links.sched_edge) {
		win.err = -errno;
		win.budget = 0;   /* followed whole: no windows without the edges */
		warning_line("sched: no windows, every switch followed: cannot attach the task "
			     "iterator (%s)", strerror(-win.err));
	}
}

/* The capture's SCHED_TASK (type: or _CLOSE, _EXIT) for one thread. */
static void write_task(struct consumer *c, const struct perfcap_sched_task *t, uint64_t ts,
		       uint16_t type)
{
	struct pc_rec_sched_task rec = {
		.h.type = type,
		.ts = ts,
		.runtime_ns = t->runtime_ns,
		.run_delay_ns = t->run_delay_ns,
		.pid = t->pid,
		.tid = t->tid,
		.state = t->state & PC_TASK_STATE_MASK,
		.where = t->where,
		.cpu = t->cpu,
		.nvcsw = t->nvcsw,
	};

	if (consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), ts) == 0)
		win.tasks++;
}

/* Runs sched_edge at t over every task, at a close or at an opening, and
 * writes the threads it shows. false when it could not run. */
static bool run_edge(struct consumer *c, uint64_t t, bool at_close)
{
	struct perfcap_sched_task tasks[64];
	ssize_t n;
	int fd;

	skel->bss->edge_ns = t;
	skel->bss->edge_close = at_close;
	fd = bpf_iter_create(bpf_link__fd(skel->links.sched_edge));
	if (fd < 0) {
		win.err = -errno;
		win.edge_failed++;
		return false;
	}
	/* a read returns whole entries (each bpf_seq_write is one) */
	while ((n = read(fd, tasks, sizeof(tasks))) > 0 || (n < 0 && errno == EINTR))
		for (ssize_t i = 0; n > 0 && i < n / (ssize_t)sizeof(tasks[0]); i++)
			write_task(c, &tasks[i], t,
				   at_close ? PC_REC_SCHED_TASK_CLOSE : PC_REC_SCHED_TASK);
	if (n < 0) {
		win.err = -errno;
		win.edge_failed++;
	}
	close(fd);
	return n == 0;
}

/* The window ends now: programs detached, batches sent, waits summed.
 * If the kernel refuses to attach them again (the probe before the first
 * detach), they stay attached: followed whole from here. */
static void win_close(struct consumer *c)
{
	if (!hot_links_detach(&hot)) {
		win.err = hot.err;
		warning_line("sched: every switch followed from here: the kernel refuses to "
			     "attach the programs again (%s)", strerror(-hot.err));
		return;
	}
	win.gap_start = monotonic_ns();
	win.covered_ns += win.gap_start - win.open_start;
	skel->bss->sched_in_gap = true;   /* a thread exiting now: SCHED_TASK_EXIT */
	flush_cpu_batches(win.gap_start, true);
	run_edge(c, win.gap_start, true);
}

static void write_gap(struct consumer *c, uint64_t end)
{
	struct pc_rec_sched_gap rec = {
		.h.type = PC_REC_SCHED_GAP,
		.ts = win.gap_start,
		.end_ts = end,
	};

	consumer_add_event(c, PERFCAP_SRC_SCHED, &rec, sizeof(rec), rec.ts);
}

/* A window opens now: the threads written, the gap said, the programs
 * attached again. false when they could not be (the gap goes on). */
static bool win_open(struct consumer *c)
{
	uint64_t t;

	skel->bss->sched_epoch++;
	t = monotonic_ns();
	run_edge(c, t, false);
	skel->bss->sched_in_gap = false;
	write_gap(c, t);
	win.gap_start = t;
	if (!hot_links_attach(&hot)) {
		win.err = hot.err;
		win.attach_failed++;
		return false;
	}
	win.open_start = t;
	win.switches_at_open = switches;
	return true;
}

/* A new period from now: its window from the last one's rate. */
static void win_next_period(struct consumer *c, uint64_t now)
{
	uint64_t len, rate, w, seen = switches - win.switches_at_open;

	len = win_is_open() ? now - win.open_start : win.open_len;
	if (!len)
		len = 1;
	rate = seen * WIN_PERIOD_NS / len;
	win.last_rate = rate;
	w = rate ? win.budget * WIN_PERIOD_NS / rate : WIN_PERIOD_NS;
	win.windowed = w < WIN_PERIOD_NS;
	if (!win.windowed)
		w = WIN_PERIOD_NS;
	else if (w < WIN_MIN_NS)
		w = WIN_MIN_NS;
	win.period_start = now;
	if (win_is_open()) {   /* open on: the window goes on from here */
		win.covered_ns += now - win.open_start;
		win.open_start = now;
		win.switches_at_open = switches;
	} else if (!win_open(c)) {
		win.windowed = true;
		return;
	}
	win.open_len = w;
	if (win.windowed)
		win.windows++;
}

static void win_tick(struct consumer *c, uint64_t now)
{
	if (!win.budget || !win.span_start || hot.state < 0)
		return;
	if (win_is_open() && win.windowed && now >= win.open_start + win.open_len)
		win_close(c);
	if (now >= win.period_start + WIN_PERIOD_NS)
		win_next_period(c, now);
	if (win_is_open() && win.windowed)
		consumer_tick_by(c, win.open_start + win.open_len);
	consumer_tick_by(c, win.period_start + WIN_PERIOD_NS);
}

/* At the end (the programs detached by the session): the last gap, if
 * the recording ends in one. */
static void win_end(struct consumer *c, uint64_t now)
{
	if (!win.span_start)
		return;
	if (win_is_open())
		win.covered_ns += now - win.open_start;
	else
		write_gap(c, now > win.gap_start ? now : win.gap_start);
	win.span_ns = now - win.span_start;
}

static void sched_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	if (!skel)
		return;
	if (final) {
		read_left_batches(c);
		if (win.budget)
			win_end(c, now_ns);
		return;
	}
	if (now_ns - batch_flushed_ns >= BATCH_FLUSH_NS) {
		batch_flushed_ns = now_ns;
		flush_cpu_batches(now_ns, false);
	}
	if (win.budget)
		win_tick(c, now_ns);
}

/* A traced thread that exited inside a gap (on_task_exit). */
static void handle_exit(struct consumer *c, const struct perfcap_sched_exit *e)
{
	write_task(c, &e->t, e->h.ts, PC_REC_SCHED_TASK_EXIT);
}

static size_t size_of_type(uint16_t type)
{
	switch (type) {
	case PERFCAP_EV_SWITCH: return sizeof(struct perfcap_switch);
	case PERFCAP_EV_WAKEUP: return sizeof(struct perfcap_wakeup);
	case PERFCAP_EV_OFFCPU: return PERFCAP_OFFCPU_HEADER_SIZE;
	case PERFCAP_EV_FORK:   return sizeof(struct perfcap_fork);
	case PERFCAP_EV_USTACK: return PERFCAP_USTACK_HEADER_SIZE;
	case PERFCAP_EV_SCHED_BATCH: return PERFCAP_SCHED_BATCH_HEADER_SIZE;
	case PERFCAP_EV_SCHED_EXIT: return sizeof(struct perfcap_sched_exit);
	default:                return SIZE_MAX;
	}
}

static void sched_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (size < size_of_type(h->type)) {
		consumer_drop(c, PERFCAP_SRC_SCHED);
		return;
	}
	switch (h->type) {
	case PERFCAP_EV_SWITCH: handle_switch(c, rec); break;
	case PERFCAP_EV_WAKEUP: handle_wakeup(c, rec); break;
	case PERFCAP_EV_OFFCPU: handle_offcpu(c, rec, size); break;
	case PERFCAP_EV_FORK:   handle_fork(c, rec); break;
	case PERFCAP_EV_USTACK: ustack_copy_handle(c, PERFCAP_SRC_SCHED, rec, size); break;
	case PERFCAP_EV_SCHED_BATCH: handle_batch(c, rec, size); break;
	case PERFCAP_EV_SCHED_EXIT: handle_exit(c, rec); break;
	}
}

/* ---- metadata and counters ----------------------------------------------- */

static int sched_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "sched.offcpu_min_ns", env->opts->offcpu_min_ns);
	err |= chunk_buffer_add_kv_u64(kv, "sched.stack_reuse_ns", env->opts->offcpu_stack_reuse_ns);
	err |= chunk_buffer_add_kv(kv, "sched.prev_state",
				   prev_state_from_tracepoint ? "tracepoint" : "task");
	if (irq_context_how)
		err |= chunk_buffer_add_kv(kv, "sched.irq_context", irq_context_how);
	if (softirq_vector_how)
		err |= chunk_buffer_add_kv(kv, "sched.softirq_vector", softirq_vector_how);
	if (win.budget)
		err |= chunk_buffer_add_kv_u64(kv, "sched.windows.budget", win.budget);
	if (drop_switch_in)
		err |= chunk_buffer_add_kv_u64(kv, "sched.drop_switch_in", drop_switch_in);
	if (env->opts->stack_copy) {
		err |= chunk_buffer_add_kv_u64(kv, "sched.stack_copy", env->opts->stack_copy);
		err |= chunk_buffer_add_kv(kv, "sched.stack_copy_at",
					   copy_at_return ? "return" : "switch-out");
		if (!copy_at_return)
			err |= chunk_buffer_add_kv(kv, "sched.stack_copy_at_why",
						   copy_at_switch_why);

	}
	return err ? -ENOMEM : 0;
}

/* The counters of copies taken at the return to user space
 * (bpf/sched.bpf.c "copies at the return"). */
static int return_copy_stats(struct chunk_buffer *kv, const __u64 *n)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.scheduled", n[5]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.joined", n[6]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.exited", n[7]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.failed", n[8]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.too_many", n[9]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.abandoned", n[10]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.copy_ns", n[11]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.same", n[12]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.refreshed", n[13]);
	err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.no_head", n[USTASH_NO_HEAD]);
	return err;
}

/* STATS sched.windows.* (see "windows"). */
static int window_stats(struct chunk_buffer *kv)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.count", win.windows);
	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.covered_ns", win.covered_ns);
	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.span_ns", win.span_ns);
	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.tasks", win.tasks);
	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.attach_failed", win.attach_failed);
	err |= chunk_buffer_add_kv_u64(kv, "sched.windows.edge_failed", win.edge_failed);
	if (skel) {
		err |= chunk_buffer_add_kv_u64(kv, "sched.windows.gap_kept",
					       skel->bss->ustash_counts[GAP_KEPT]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.windows.gap_ran",
					       skel->bss->ustash_counts[GAP_RAN]);
	}
	if (hot.state < 0)
		err |= chunk_buffer_add_kv(kv, "sched.windows.detach", "refused: attached throughout");
	if (win.err)
		err |= chunk_buffer_add_kv(kv, "sched.windows.error", strerror(-win.err));
	return err;
}

static int sched_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	int err = 0;

	(void)c;
	err |= chunk_buffer_add_kv_u64(kv, "sched.switches", switches);
	err |= chunk_buffer_add_kv_u64(kv, "sched.wakeups", wakeups);
	err |= chunk_buffer_add_kv_u64(kv, "sched.offcpu", offcpus);
	err |= chunk_buffer_add_kv_u64(kv, "sched.forks", forks);
	err |= chunk_buffer_add_kv_u64(kv, "sched.batch_flush_errors", batch_flush_errors);
	err |= chunk_buffer_add_kv_u64(kv, "sched.batch_flush_ipis", batch_flush_ipis);
	if (skel) {
		const __u64 *n = skel->bss->ustash_counts;

		err |= chunk_buffer_add_kv_u64(kv, "sched.kstack.reused", n[14]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.kstack.agreed", n[15]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.kstack.differed", n[16]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.irq_unread",
					       count_now(IRQ_UNREAD, &irq_unread));
		err |= chunk_buffer_add_kv_u64(kv, "sched.switch_in_unseen",
					       count_now(IN_UNSEEN, &in_unseen));
	}
	if (win.budget)
		err |= window_stats(kv);
	else if (win.err)   /* no windows: the task iterator could not be attached */
		err |= chunk_buffer_add_kv(kv, "sched.windows.error", strerror(-win.err));
	if (skel && skel->rodata->ustack_window) {
		const __u64 *n = skel->bss->ustash_counts;

		err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.taken", n[0]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.reused", n[1]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.sent", n[2]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.overwritten", n[3]);
		err |= chunk_buffer_add_kv_u64(kv, "sched.ustack.no_slot", n[4]);
		if (copy_at_return)
			err |= return_copy_stats(kv, n);
	}
	return err ? -ENOMEM : 0;
}

static const uint16_t sched_event_types[] = {
	PERFCAP_EV_SWITCH, PERFCAP_EV_WAKEUP, PERFCAP_EV_OFFCPU, PERFCAP_EV_FORK,
	PERFCAP_EV_USTACK, PERFCAP_EV_SCHED_BATCH, PERFCAP_EV_SCHED_EXIT, 0
};

/* Appends part to the note in buf (len), after a "; " when not first. */
static void note_add(char *buf, size_t len, const char *part)
{
	size_t used = strlen(buf);

	if (used + 2 < len)
		snprintf(buf + used, len - used, "%s%s", used ? "; " : "", part);
}

/* What the summary says of the sched source beyond its counts: the
 * windows; wakeups whose interrupt could not be told soft or hard
 * (written as hard: a timer's or a device's, whatever they were); and
 * switch-ins the kernel did not deliver. */
static void sched_summary_note(char *buf, size_t len)
{
	char part[512], n[32];

	buf[0] = '\0';
	if (win.windows && win.span_ns) {
		snprintf(part, sizeof(part), "followed in %llu time windows, %.1f%% of the recording "
			 "(--sched-rate %llu): thread states, waits and wakeups seen there stand "
			 "for their second in the report's time shares (SCHED_GAP; STATS "
			 "sched.windows.*)", (unsigned long long)win.windows,
			 100.0 * (double)win.covered_ns / (double)win.span_ns,
			 (unsigned long long)win.budget);
		note_add(buf, len, part);
	}
	if (count_now(IRQ_UNREAD, &irq_unread)) {
		snprintf(part, sizeof(part), "%s wakeups in interrupt context were taken for hard "
			 "interrupts: the CPU's preempt count could not be read (STATS "
			 "sched.irq_unread), so a packet's or a disk's wakeup among them reads as "
			 "a timer's or a device's", fmt_count(n, sizeof(n), irq_unread));
		note_add(buf, len, part);
	}
	if (count_now(IN_UNSEEN, &in_unseen)) {
		snprintf(part, sizeof(part), "%s switch-ins of traced threads were not delivered "
			 "by the kernel: their off-CPU intervals end at the thread's run time, "
			 "without kernel stack (STATS sched.switch_in_unseen)",
			 fmt_count(n, sizeof(n), in_unseen));
		note_add(buf, len, part);
	}
}

const struct source sched_source = {
	.summary = "context switches, wakeups, off-CPU intervals with stacks "
		   "(>= --offcpu-min), forks; above --sched-rate switches a second, in time "
		   "windows",
	.id = PERFCAP_SRC_SCHED,
	.default_on = true,
	.event_types = sched_event_types,
	.load = sched_load,
	.attach = sched_attach,
	.detach = sched_detach,
	.destroy = sched_destroy,
	.handle = sched_handle,
	.meta = sched_meta,
	.stats = sched_stats,
	.tick = sched_tick,
	.summary_note = sched_summary_note,
};
