/* softirq_marks.c - the per-CPU fields that name the running soft
 * interrupt, found in the kernel's BTF (see softirq_marks.h).
 *
 * Every per-CPU variable is in the BTF DATASEC .data..percpu at its offset
 * in the per-CPU area; a struct member's offset and a struct's size come
 * from the same BTF. So each field's distance from runqueues (whose
 * address the programs have: a task's cfs_rq->rq) is a sum of those. The
 * kernels differ: __softirq_pending is a per-CPU variable of its own on
 * recent x86-64 kernels and a member of irq_stat before; NR_BASES timer
 * bases are 2 or 3; softnet_data.in_net_rx_action came in Linux 6.8, the
 * kfunc bpf_rdonly_cast the programs read them with in 6.2. One missing
 * piece and the recorder keeps its softirq_entry program.
 */
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "session/preflight.h"
#include "softirq_marks.h"

/* The struct (or typedef of one) named name: its type id, or -1. */
static int struct_id(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);

	if (id < 0)
		id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	id = btf__resolve_type(btf, (unsigned)id);
	return id > 0 && btf_is_struct(btf__type_by_id(btf, (unsigned)id)) ? id : -1;
}

/* The byte offset of member in struct id (a plain member, not a bit
 * field), or -1; *type gets its type id. */
static long long member(const struct btf *btf, int id, const char *name, int *type)
{
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (unsigned)id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; m && i < btf_vlen(t); i++) {
		const char *n = btf__name_by_offset(btf, m[i].name_off);
		unsigned bits = btf_member_bit_offset(t, (unsigned)i);

		if (n && strcmp(n, name) == 0 && !btf_member_bitfield_size(t, (unsigned)i) &&
		    bits % 8 == 0) {
			if (type)
				*type = (int)m[i].type;
			return bits / 8;
		}
	}
	return -1;
}

static bool pending_offset(const struct btf *btf, long long *off)
{
	int id;
	long long m;

	*off = preflight_percpu_var(btf, "__softirq_pending", NULL);
	if (*off >= 0)
		return true;
	*off = preflight_percpu_var(btf, "irq_stat", NULL);
	id = struct_id(btf, "irq_cpustat_t");
	m = member(btf, id, "__softirq_pending", NULL);
	if (*off < 0 || m < 0)
		return false;
	*off += m;
	return true;
}

static bool timer_offsets(const struct btf *btf, long long rq, struct perfcap_softirq_marks *m)
{
	long long size = 0, base = preflight_percpu_var(btf, "timer_bases", &size);
	int id = struct_id(btf, "timer_base");
	long long each = id > 0 ? btf__resolve_size(btf, (unsigned)id) : -1;
	long long nr;

	if (base < 0 || each <= 0 || member(btf, id, "running_timer", NULL) < 0 || size % each)
		return false;
	nr = size / each;     /* NR_BASES: the last one deferrable when more than one */
	if (nr < 1 || nr > PERFCAP_TIMER_BASES_MAX)
		return false;
	m->timer_bases = base - rq;
	m->nr_timer = (unsigned)(nr > 1 ? nr - 1 : 1);
	return true;
}

static bool hrtimer_offsets(const struct btf *btf, long long rq, struct perfcap_softirq_marks *m)
{
	long long base = preflight_percpu_var(btf, "hrtimer_bases", NULL);
	int id = struct_id(btf, "hrtimer_cpu_base"), arr_type = 0;
	const struct btf_type *arr;

	if (base < 0 || member(btf, id, "clock_base", &arr_type) < 0 ||
	    member(btf, struct_id(btf, "hrtimer_clock_base"), "running", NULL) < 0)
		return false;
	arr = btf__type_by_id(btf, (unsigned)arr_type);
	if (!arr || !btf_is_array(arr) || btf_array(arr)->nelems != PERFCAP_HRTIMER_BASES)
		return false;
	m->hrtimer_bases = base - rq;
	return true;
}

static bool net_rx_offsets(const struct btf *btf, long long rq, struct perfcap_softirq_marks *m)
{
	long long base = preflight_percpu_var(btf, "softnet_data", NULL), pending;

	if (base < 0 || member(btf, struct_id(btf, "softnet_data"), "in_net_rx_action", NULL) < 0 ||
	    !pending_offset(btf, &pending))
		return false;
	m->softnet = base - rq;
	m->pending = pending - rq;
	return true;
}

bool softirq_marks_find(struct perfcap_softirq_marks *m, char *why, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long rq = btf ? preflight_percpu_var(btf, "runqueues", NULL) : -1;
	const char *missing = NULL;

	memset(m, 0, sizeof(*m));
	if (rq < 0)
		missing = "per-CPU runqueues";
	else if (!timer_offsets(btf, rq, m))
		missing = "per-CPU timer_bases[].running_timer";
	else if (!hrtimer_offsets(btf, rq, m))
		missing = "per-CPU hrtimer_bases.clock_base[].running";
	else if (!net_rx_offsets(btf, rq, m))
		missing = "per-CPU softnet_data.in_net_rx_action (Linux 6.8+) or __softirq_pending";
	else if (btf__find_by_name_kind(btf, "bpf_rdonly_cast", BTF_KIND_FUNC) < 0)
		missing = "kfunc bpf_rdonly_cast";
	btf__free(btf);
	if (missing) {
		memset(m, 0, sizeof(*m));
		snprintf(why, len, "the kernel's BTF has no %s", missing);
		return false;
	}
	return true;
}
