/* metrics.bpf.h - what the agg and waits BPF objects share: the class
 * table, the per-(thread, window, class, key) sums in `agg_metrics` with
 * their counters, and the classification of a system call (futex op, the
 * kind of an fd: socket or file). Each object that includes it has its own
 * maps; user space drains each (record/sources/metrics_drain.c).
 */
#ifndef PERFCAP_METRICS_BPF_H
#define PERFCAP_METRICS_BPF_H

#include "perfcap_common.bpf.h"
#include "linux_abi.bpf.h"

/* Set by user space before load. */
const volatile __u8 agg_class_of[PERFCAP_SYSCALL_NR_MAX];

/* Set by user space before attach: record.start_ns, windows start there. */
__u64 agg_origin_ns = 0;

#define FUTEX_CMD_MASK 0x7f

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERFCAP_AGG_ENTRIES);
	__type(key, struct perfcap_agg_key);
	__type(value, struct perfcap_agg_value);
} agg_metrics SEC(".maps");

PC_COUNTERS(agg_counters, PERFCAP_AGG_C_NR);

static __always_inline void count_n(__u32 counter, __u64 n)
{
	pc_counter_add(&agg_counters, counter, n);
}

/* ---- classification ------------------------------------------------------- */

/* The inode of fd in task's table, or NULL. */
static __always_inline struct inode *fd_inode(struct task_struct *task, __u64 fd)
{
	struct fdtable *fdt = task->files->fdt;
	struct file **fds;
	struct file *f = NULL;

	if (fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	return BPF_CORE_READ(f, f_inode);
}

/* The class and key of a read/write-like call on fd: socket or file. */
static __always_inline __u16 rw_class(struct task_struct *task, __u64 fd, bool write,
				      __u64 *key)
{
	struct inode *inode = fd_inode(task, fd);
	umode_t mode = inode ? BPF_CORE_READ(inode, i_mode) : 0;

	if ((mode & S_IFMT) == S_IFSOCK) {
		*key = fd;
		return write ? PERFCAP_AGG_NET_SEND : PERFCAP_AGG_NET_RECV;
	}
	*key = inode ? BPF_CORE_READ(inode, i_ino) : PERFCAP_AGG_NO_KEY;
	return write ? PERFCAP_AGG_VFS_WRITE : PERFCAP_AGG_VFS_READ;
}

/* futex(2) operations that wait (the rest wake, requeue or unlock). */
static __always_inline bool futex_waits(__u64 op)
{
	switch (op & FUTEX_CMD_MASK) {
	case 0: case 6: case 9: case 11: case 13: /* WAIT LOCK_PI WAIT_BITSET WAIT_REQUEUE_PI LOCK_PI2 */
		return true;
	default:
		return false;
	}
}

/* The class and key of system call nr with its first two arguments. */
static __always_inline __u16 classify(struct task_struct *task, __u64 nr, __u64 arg0,
				      __u64 arg1, __u64 *key)
{
	__u8 c = nr < PERFCAP_SYSCALL_NR_MAX ? agg_class_of[nr] : PERFCAP_AGG_NONE;

	*key = PERFCAP_AGG_NO_KEY;
	switch (c) {
	case PERFCAP_AGG_FUTEX:
		*key = arg0;
		return futex_waits(arg1) ? PERFCAP_AGG_FUTEX_WAIT : PERFCAP_AGG_FUTEX_WAKE;
	case PERFCAP_AGG_FUTEX_WAIT: /* futex_waitv: no one address */
		return c;
	case PERFCAP_AGG_RW_READ:
		return rw_class(task, arg0, false, key);
	case PERFCAP_AGG_RW_WRITE:
		return rw_class(task, arg0, true, key);
	case PERFCAP_AGG_POLL_NOKEY:
		return PERFCAP_AGG_POLL;
	case PERFCAP_AGG_POLL:
	case PERFCAP_AGG_NET_RECV:
	case PERFCAP_AGG_NET_SEND:
		*key = arg0; /* the epoll fd, the socket fd */
		return c;
	default:
		return PERFCAP_AGG_OTHER;
	}
}

static __always_inline __u32 hist_bucket(__u64 ns)
{
	__u64 x = ns >> PERFCAP_AGG_HIST_SHIFT;
	__u32 b = 0;

	/* floor(log2(x)), 0 for 0: six halvings of the range, not a loop */
	if (x >> 32) { b += 32; x >>= 32; }
	if (x >> 16) { b += 16; x >>= 16; }
	if (x >> 8) { b += 8; x >>= 8; }
	if (x >> 4) { b += 4; x >>= 4; }
	if (x >> 2) { b += 2; x >>= 2; }
	if (x >> 1)
		b += 1;
	return b < PERFCAP_AGG_HIST - 1 ? b : PERFCAP_AGG_HIST - 1;
}

/* Plain adds: an entry is keyed by thread, and one thread's calls and
 * waits end one at a time (its switch-ins and system call exits do not
 * overlap), so no two CPUs add to one entry at once; user space only
 * reads. */
static __always_inline void add_call(struct perfcap_agg_value *v, __u64 ns, long ret,
				     bool bytes)
{
	__u32 b = hist_bucket(ns);

	v->count++;
	v->total_ns += ns;
	if (ret < 0)
		v->errors++;
	else if (bytes && ret > 0)
		v->bytes += ret;
	v->hist[b & (PERFCAP_AGG_HIST - 1)]++;
}

/* Adds one call (or wait) of ns to k's entry; a full map is counted for
 * source. */
static __always_inline void sum(__u32 source, struct perfcap_agg_key *k, __u64 ns, long ret)
{
	static const struct perfcap_agg_value zero;
	struct perfcap_agg_value *v = bpf_map_lookup_elem(&agg_metrics, k);
	bool bytes = k->klass != PERFCAP_AGG_OTHER && k->klass != PERFCAP_AGG_FUTEX_WAIT &&
		     k->klass != PERFCAP_AGG_POLL;

	if (!v) {
		/* -EEXIST: another CPU inserted it first; anything else: full */
		bpf_map_update_elem(&agg_metrics, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&agg_metrics, k);
	}
	if (!v) {
		count_n(PERFCAP_AGG_C_FULL_CALLS, 1);
		count_n(PERFCAP_AGG_C_FULL_NS, ns);
		pc_count(source, PERFCAP_LOSS_MAP_FULL);
		return;
	}
	add_call(v, ns, ret, bytes);
	count_n(PERFCAP_AGG_C_CALLS, 1);
}

#endif /* PERFCAP_METRICS_BPF_H */
