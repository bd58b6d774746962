/* source_mem.c - the mem source (`-e mem`): sampled user page faults
 * (FAULT records, 1 in --fault-sample N, each weighing N) and executable
 * mappings made at run time. bpf/mem.bpf.c is the kernel side; the mem
 * system calls themselves (mmap, munmap, mprotect, brk) are recorded as
 * SYSCALL records by the syscall source's `mem` set.
 *
 * An EXEC_MAP record (mmap/mprotect with PROT_EXEC succeeded in a traced
 * process: bpf/mem_calls.bpf.h, run by the syscall program's sys_exit,
 * whose counters map this source's object then uses too) writes nothing
 * itself: it makes the recorder re-read the
 * process's /proc/PID/maps at once (processes_on_exec_mapping), unless a
 * known mapping already covers the range, so a library loaded by dlopen
 * or JIT code gets MAP records (and symbols) even when no CPU sample has
 * hit it yet, and even if it is unmapped again before the next sample.
 */
#include <errno.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cli.h"
#include "consume/consumer.h"
#include "mem.skel.h"
#include "session/percpu_counts.h"
#include "source.h"
#include "syscall_prog.h"

static struct mem_bpf *skel;
static uint64_t fault_records, exec_maps, maps_rereads;

static int load_own(const struct source_env *env, char *why, size_t len)
{
	int err;

	skel = mem_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	skel->rodata->pc_config = *env->config;
	skel->rodata->fault_one_in = (uint32_t)env->opts->fault_one_in;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = syscall_prog_share_maps(PERFCAP_SRC_MEM, skel->obj, why, len);
	if (!err)
		err = source_loaded(mem_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

/* Our `mem` set (mmap, munmap, mprotect, brk) and our part in the syscall
 * program, then our BPF object, which uses that part's counters. */
static int mem_load(const struct source_env *env, char *why, size_t len)
{
	int err = syscall_prog_load(PERFCAP_SRC_MEM, env, why, len);

	return err ? err : load_own(env, why, len);
}

static int mem_attach(const struct source_env *env, char *why, size_t len)
{
	int err = mem_bpf__attach(skel);

	(void)env;
	if (err) {
		source_explain(why, len, "cannot attach exceptions:page_fault_user", err);
		return err;
	}
	return syscall_prog_attach(PERFCAP_SRC_MEM, why, len);
}

static void mem_detach(void)
{
	if (skel)
		mem_bpf__detach(skel);
	syscall_prog_detach(PERFCAP_SRC_MEM); /* no-op unless mem holds it */
}

static void mem_destroy(void)
{
	mem_bpf__destroy(skel);
	skel = NULL;
	syscall_prog_destroy(PERFCAP_SRC_MEM);
}

/* ---- records ------------------------------------------------------------ */

static void handle_fault(struct consumer *c, const struct perfcap_fault *e)
{
	struct pc_rec_fault rec = {
		.h.type = PC_REC_FAULT,
		.ts = e->h.ts,
		.pid = e->pid,
		.tid = e->tid,
		.addr = e->addr,
		.ip = e->ip,
		.error_code = e->error_code,
		.weight = e->weight,
	};

	consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_MEM, &rec, sizeof(rec), e->h.ts) == 0)
		fault_records++;
}

static void handle_exec_map(struct consumer *c, const struct perfcap_exec_map *e)
{
	consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	exec_maps++;
	if (processes_on_exec_mapping(&c->processes, e->pid, e->start, e->len, e->h.ts))
		maps_rereads++;
}

static void mem_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (h->type == PERFCAP_EV_SYSCALL)
		syscall_prog_handle(c, rec, size);
	else if (h->type == PERFCAP_EV_FAULT && size >= sizeof(struct perfcap_fault))
		handle_fault(c, rec);
	else if (h->type == PERFCAP_EV_EXEC_MAP && size >= sizeof(struct perfcap_exec_map))
		handle_exec_map(c, rec);
	else
		consumer_drop(c, PERFCAP_SRC_MEM);
}

/* ---- metadata and counters ------------------------------------------------ */

static int mem_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = syscall_prog_meta(PERFCAP_SRC_MEM, kv);

	err |= chunk_buffer_add_kv_u64(kv, "mem.fault_one_in", env->opts->fault_one_in);
	err |= chunk_buffer_add_kv_u64(kv, "mem.fault_seed", env->config->sample_seed);
	err |= chunk_buffer_add_kv(kv, "mem.exec_maps", "mmap,mprotect,pkey_mprotect with "
				   "PROT_EXEC: /proc/PID/maps re-read");
	return err ? -ENOMEM : 0;
}

static int mem_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	uint64_t v[PERFCAP_MEM_C_NR] = { 0 };
	int err = syscall_prog_stats(PERFCAP_SRC_MEM, kv);

	(void)c;
	if (skel)
		percpu_counts_read(skel->maps.mem_counters, v, PERFCAP_MEM_C_NR);
	err |= chunk_buffer_add_kv_u64(kv, "mem.faults", v[PERFCAP_MEM_C_FAULTS]);
	err |= chunk_buffer_add_kv_u64(kv, "mem.faults_sampled", v[PERFCAP_MEM_C_SAMPLED]);
	err |= chunk_buffer_add_kv_u64(kv, "mem.fault_records", fault_records);
	err |= chunk_buffer_add_kv_u64(kv, "mem.exec_maps_seen", v[PERFCAP_MEM_C_EXEC_MAPS]);
	err |= chunk_buffer_add_kv_u64(kv, "mem.exec_maps_handled", exec_maps);
	err |= chunk_buffer_add_kv_u64(kv, "mem.maps_rereads", maps_rereads);
	return err ? -ENOMEM : 0;
}

/* The syscall program's windows (--syscall-rate): ticked and told by the
 * program's primary holder only (syscall_prog.c). */
static void mem_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	syscall_prog_tick(PERFCAP_SRC_MEM, c, now_ns, final);
}

static void mem_note(char *buf, size_t len)
{
	syscall_prog_note(PERFCAP_SRC_MEM, buf, len);
}

static const uint16_t mem_event_types[] = {
	PERFCAP_EV_FAULT, PERFCAP_EV_EXEC_MAP, PERFCAP_EV_SYSCALL, 0
};

const struct source mem_source = {
	.summary = "user page faults (1 in --fault-sample N, weighted), mmap/munmap/mprotect/"
		   "brk calls; maps re-read when code is mapped",
	.id = PERFCAP_SRC_MEM,
	.event_types = mem_event_types,
	.load = mem_load,
	.attach = mem_attach,
	.detach = mem_detach,
	.destroy = mem_destroy,
	.handle = mem_handle,
	.meta = mem_meta,
	.stats = mem_stats,
	.tick = mem_tick,
	.summary_note = mem_note,
};
