/* syscall_prog.c - loads, attaches and reads the one syscall BPF program
 * shared by the syscall, mux, net, lock and mem sources (see
 * syscall_prog.h), and turns its kernel records into SYSCALL records.
 *
 * Every sharing source holds a reference (a bit per source id): the first
 * load builds the program with the union of the selected sources' sets,
 * the first attach attaches it, the last detach / destroy undoes it. The
 * program's own META and STATS keys are written by the "primary" holder,
 * the attached holder with the lowest id, so they appear once.
 *
 * With the net or mem source selected, the sys_exit program also runs
 * that source's part (bpf/net_calls.bpf.h, bpf/mem_calls.bpf.h) and those
 * parts' maps are the source's object's too (syscall_prog_share_maps);
 * without net, net's maps are made with one entry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cli.h"
#include "consume/consumer.h"
#include "source.h"
#include "syscall.skel.h"
#include "syscall_prog.h"
#include "syscall_sets.h"
#include "syscall_windows.h"

static struct syscall_bpf *skel;
static uint32_t loaded_by;      /* bit per source id holding a load */
static uint32_t attached_by;    /* bit per source id holding an attach */
static uint32_t attached_ever;  /* ... or that held one (until destroy) */
static struct syscall_set user_set;  /* the syscall source's set */
static struct perfcap_syscall_sel table[PERFCAP_SYSCALL_NR_MAX]; /* as loaded */
static uint64_t min_ns;
static uint64_t rate_budget;    /* --syscall-rate */

#define BIT(id) (1u << (id))

/* ---- loading ---------------------------------------------------------- */

static int build_sets(const struct source_env *env, char *why, size_t len)
{
	const char *list = env->opts->syscalls ? env->opts->syscalls : SYSCALL_DEFAULT_SET;
	char reason[200];

	if (syscall_set_parse(list, &user_set, reason, sizeof(reason))) {
		snprintf(why, len, "--syscalls: %s", reason);
		return -EINVAL;
	}
	syscall_sets_build(env->selected, &user_set, table);
	min_ns = env->opts->syscall_min_ns;
	rate_budget = env->opts->syscall_rate;
	return 0;
}

/* The net and mem sources' parts run in the sys_exit program when they
 * are selected; net's LRU maps are preallocated, so without net they are
 * made as small as they can be. */
static void parts_setup(const bool selected[PERFCAP_SRC_MAX])
{
	bool with_net = selected[PERFCAP_SRC_NET];

	skel->rodata->with_net = with_net;
	skel->rodata->with_mem = selected[PERFCAP_SRC_MEM];
	if (with_net)
		return;
	bpf_map__set_max_entries(skel->maps.fds, 1);
	bpf_map__set_max_entries(skel->maps.socks, 1);
	bpf_map__set_max_entries(skel->maps.ports, 1);
}

static int open_and_load(const struct source_env *env, char *why, size_t len)
{
	int err = build_sets(env, why, len);

	if (err)
		return err;
	skel = syscall_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	parts_setup(env->selected);
	skel->rodata->pc_config = *env->config;
	memcpy((void *)skel->rodata->syscall_set, table, sizeof(table));
	skel->rodata->syscall_min_ns = min_ns;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(syscall_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

int syscall_prog_load(int source, const struct source_env *env, char *why, size_t len)
{
	int err = 0;

	if (!loaded_by)
		err = open_and_load(env, why, len);
	if (err) {
		syscall_bpf__destroy(skel);
		skel = NULL;
		return err;
	}
	loaded_by |= BIT(source);
	return 0;
}

/* The maps of source's part of the loaded sys_exit program; NULL when it
 * runs no part of source's. */
static const char *const *part_maps(int source)
{
	static const char *const net[] = { "fds", "socks", "ports", "net_counts", NULL };
	static const char *const mem[] = { "mem_counters", NULL };

	if (!skel)
		return NULL;
	if (source == PERFCAP_SRC_NET && skel->rodata->with_net)
		return net;
	if (source == PERFCAP_SRC_MEM && skel->rodata->with_mem)
		return mem;
	return NULL;
}

int syscall_prog_share_maps(int source, struct bpf_object *obj, char *why, size_t len)
{
	const char *const *names = part_maps(source);

	if (!names) {
		snprintf(why, len, "the syscall program was loaded without the %s part",
			 event_source_name(source));
		return -EINVAL;
	}
	for (; *names; names++) {
		struct bpf_map *ours = bpf_object__find_map_by_name(skel->obj, *names);
		struct bpf_map *theirs = bpf_object__find_map_by_name(obj, *names);
		int err;

		if (!ours || !theirs) {
			snprintf(why, len, "no map '%s' to share with the syscall program", *names);
			return -ENOENT;
		}
		err = bpf_map__reuse_fd(theirs, bpf_map__fd(ours));
		if (err) {
			source_explain(why, len, "cannot share the syscall program's maps", err);
			return err;
		}
	}
	return 0;
}

/* ---- attaching -------------------------------------------------------- */

static int attach_one(struct bpf_program *prog, struct bpf_link **link, const char *what,
		      char *why, size_t len)
{
	int err;

	*link = bpf_program__attach(prog);
	if (*link)
		return 0;
	err = errno ? -errno : -EINVAL;
	source_explain(why, len, what, err);
	return err;
}

/* sys_exit, then sys_enter: an entry is only ever written when the code
 * that consumes it runs. */
static int attach_all(char *why, size_t len)
{
	int err;

	err = attach_one(skel->progs.on_sys_exit, &skel->links.on_sys_exit,
			 "cannot attach sys_exit", why, len);
	err = err ? err : attach_one(skel->progs.on_sys_enter, &skel->links.on_sys_enter,
				     "cannot attach sys_enter", why, len);
	if (err)
		syscall_bpf__detach(skel);
	return err;
}

int syscall_prog_attach(int source, char *why, size_t len)
{
	int err = 0;

	if (!skel || !(loaded_by & BIT(source))) {
		snprintf(why, len, "the syscall program is not loaded");
		return -EINVAL;
	}
	if (!attached_by) {
		err = attach_all(why, len);
		if (!err)
			syscall_windows_begin(skel, rate_budget);
	}
	if (!err) {
		attached_by |= BIT(source);
		attached_ever |= BIT(source);
	}
	return err;
}

void syscall_prog_detach(int source)
{
	if (!(attached_by & BIT(source)))
		return;
	attached_by &= ~BIT(source);
	if (!attached_by && skel)
		syscall_bpf__detach(skel);
}

void syscall_prog_destroy(int source)
{
	syscall_prog_detach(source);
	loaded_by &= ~BIT(source);
	attached_ever &= ~BIT(source);
	if (loaded_by)
		return;
	syscall_bpf__destroy(skel);
	skel = NULL;
}

/* ---- records ------------------------------------------------------------ */

/* The source a call of nr is counted for: its owner in the table. */
static int owner_of(uint32_t nr)
{
	if (nr < PERFCAP_SYSCALL_NR_MAX && table[nr].source)
		return table[nr].source;
	return PERFCAP_SRC_SYSCALL;
}

void syscall_prog_handle(struct consumer *c, const void *data, size_t size)
{
	const struct perfcap_syscall *e = data;
	struct pc_rec_syscall rec;
	uint32_t aspace;
	int owner;

	if (size < sizeof(*e)) {
		consumer_drop(c, PERFCAP_SRC_SYSCALL);
		return;
	}
	owner = owner_of(e->nr);
	aspace = consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	rec = (struct pc_rec_syscall){
		.h.type = PC_REC_SYSCALL,
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.nr = e->nr,
		.ustack = PC_STACK_NONE,
		.ret = e->ret,
		.args = { e->args[0], e->args[1], e->args[2] },
		.io_calls = e->io_calls,
	};
	if (e->ustack >= 0)
		rec.ustack = consumer_user_stack_id(c, owner, e->ustack, aspace, e->pid, e->h.ts);
	consumer_add_event(c, owner, &rec, sizeof(rec), e->h.ts);
}

/* ---- metadata ------------------------------------------------------------ */

/* The holder with the lowest id that attached writes the program's own
 * keys (STATS are read after the detach). */
static bool is_primary(int source)
{
	return attached_ever && (attached_ever & -attached_ever) == BIT(source);
}

static int add_set(struct chunk_buffer *kv, const char *key, const struct syscall_set *s)
{
	char *names = syscall_set_format(s);
	int err;

	if (!names)
		return -ENOMEM;
	err = chunk_buffer_add_kv(kv, key, names);
	free(names);
	return err;
}

/* The numbers emitted with a user stack. */
static void stack_set(struct syscall_set *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t nr = 0; nr < PERFCAP_SYSCALL_NR_MAX; nr++) {
		if (table[nr].flags & PERFCAP_SYSCALL_F_STACK)
			syscall_set_add(out, nr);
	}
}

static int program_meta(struct chunk_buffer *kv)
{
	struct syscall_set stacks;
	int err = 0;

	stack_set(&stacks);
	err |= add_set(kv, "syscall.stacks", &stacks);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.min_ns", min_ns);
	err |= chunk_buffer_add_kv(kv, "syscall.owner_order", "mux,lock,net,mem,syscall");
	err |= syscall_windows_meta(kv);
	return err;
}

int syscall_prog_meta(int source, struct chunk_buffer *kv)
{
	const char *name = event_source_name(source);
	struct syscall_set s;
	char key[64] = "syscall.set";
	int err = 0;

	if (name && syscall_set_of(name, &user_set, &s)) {
		if (source != PERFCAP_SRC_SYSCALL)
			snprintf(key, sizeof(key), "syscall.set.%s", name);
		err |= add_set(kv, key, &s);
	}
	if (is_primary(source))
		err |= program_meta(kv);
	return err ? -ENOMEM : 0;
}

/* ---- counters -------------------------------------------------------------- */

/* Sums a per-CPU map value of `words` u64s at key into out. */
static int read_percpu(int fd, uint32_t key, uint64_t *out, size_t words)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *values;
	int err = 0;

	memset(out, 0, words * sizeof(*out));
	if (ncpu <= 0)
		return -EINVAL;
	values = calloc((size_t)ncpu * words, sizeof(*values));
	if (!values)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, values))
		err = -errno;
	for (int cpu = 0; cpu < ncpu && !err; cpu++) {
		for (size_t w = 0; w < words; w++)
			out[w] += values[(size_t)cpu * words + w];
	}
	free(values);
	return err;
}

static int per_syscall_stats(struct chunk_buffer *kv)
{
	int fd = bpf_map__fd(skel->maps.syscall_totals);
	char key[96], buf[24];
	uint64_t t[2];
	int err = 0;

	for (uint32_t nr = 0; nr < PERFCAP_SYSCALL_NR_MAX && !err; nr++) {
		const char *name = syscall_name(nr, buf, sizeof(buf));

		if (read_percpu(fd, nr, t, 2) || !t[0])
			continue;
		snprintf(key, sizeof(key), "syscall.calls.%s", name);
		err |= chunk_buffer_add_kv_u64(kv, key, t[0]);
		snprintf(key, sizeof(key), "syscall.ns.%s", name);
		err |= chunk_buffer_add_kv_u64(kv, key, t[1]);
	}
	return err;
}

static int counter_stats(struct chunk_buffer *kv)
{
	int fd = bpf_map__fd(skel->maps.syscall_counters);
	uint64_t v[PERFCAP_SC_NR];
	int err = 0;

	for (uint32_t i = 0; i < PERFCAP_SC_NR; i++)
		read_percpu(fd, i, &v[i], 1);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.emitted", v[PERFCAP_SC_EMITTED]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.filtered.min_duration",
				       v[PERFCAP_SC_FILTERED_MIN]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.unmatched",
				       v[PERFCAP_SC_UNMATCHED_ENTER] + v[PERFCAP_SC_UNMATCHED_EXIT]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.unmatched.enter",
				       v[PERFCAP_SC_UNMATCHED_ENTER]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.unmatched.exit", v[PERFCAP_SC_UNMATCHED_EXIT]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.pending_full", v[PERFCAP_SC_MAP_FULL]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.bad_nr", v[PERFCAP_SC_BAD_NR]);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.paired", v[PERFCAP_SC_PAIRED]);
	err |= syscall_windows_stats(kv, v[PERFCAP_SC_CUT]);
	return err;
}

int syscall_prog_stats(int source, struct chunk_buffer *kv)
{
	int err = 0;

	if (!skel || !is_primary(source))
		return 0;
	err |= counter_stats(kv);
	err |= per_syscall_stats(kv);
	return err ? -ENOMEM : 0;
}

/* ---- windows --------------------------------------------------------------- */

void syscall_prog_tick(int source, struct consumer *c, uint64_t now_ns, bool final)
{
	if (skel && is_primary(source))
		syscall_windows_tick(c, now_ns, final);
}

void syscall_prog_note(int source, char *buf, size_t len)
{
	buf[0] = 0;
	if (is_primary(source))
		syscall_windows_note(buf, len);
}
