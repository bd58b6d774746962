/* metrics_drain.c - the class table and the window-by-window draining of
 * an agg_metrics map that the agg and waits sources share (see
 * metrics_drain.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>

#include "consume/consumer.h"
#include "metrics_drain.h"
#include "session/percpu_counts.h"
#include "util/util.h"
#include "syscall_sets.h"

#define AGG_DRAIN_BATCH 4096                   /* keys read per pass */

/* ---- the class table --------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t klass;
} classes[] = {
	{ "futex", PERFCAP_AGG_FUTEX }, { "futex_waitv", PERFCAP_AGG_FUTEX_WAIT },
	{ "epoll_wait", PERFCAP_AGG_POLL }, { "epoll_pwait", PERFCAP_AGG_POLL },
	{ "epoll_pwait2", PERFCAP_AGG_POLL }, { "poll", PERFCAP_AGG_POLL_NOKEY },
	{ "ppoll", PERFCAP_AGG_POLL_NOKEY }, { "select", PERFCAP_AGG_POLL_NOKEY },
	{ "pselect6", PERFCAP_AGG_POLL_NOKEY },
	{ "recvfrom", PERFCAP_AGG_NET_RECV }, { "recvmsg", PERFCAP_AGG_NET_RECV },
	{ "recvmmsg", PERFCAP_AGG_NET_RECV },
	{ "sendto", PERFCAP_AGG_NET_SEND }, { "sendmsg", PERFCAP_AGG_NET_SEND },
	{ "sendmmsg", PERFCAP_AGG_NET_SEND },
	{ "read", PERFCAP_AGG_RW_READ }, { "readv", PERFCAP_AGG_RW_READ },
	{ "pread64", PERFCAP_AGG_RW_READ }, { "preadv", PERFCAP_AGG_RW_READ },
	{ "preadv2", PERFCAP_AGG_RW_READ },
	{ "write", PERFCAP_AGG_RW_WRITE }, { "writev", PERFCAP_AGG_RW_WRITE },
	{ "pwrite64", PERFCAP_AGG_RW_WRITE }, { "pwritev", PERFCAP_AGG_RW_WRITE },
	{ "pwritev2", PERFCAP_AGG_RW_WRITE }, { "sendfile", PERFCAP_AGG_RW_WRITE },
	{ "fsync", PERFCAP_AGG_RW_WRITE }, { "fdatasync", PERFCAP_AGG_RW_WRITE },
};

static const char *const class_names[PERFCAP_AGG_CLASSES] = {
	[PERFCAP_AGG_FUTEX_WAIT] = "futex_wait", [PERFCAP_AGG_FUTEX_WAKE] = "futex_wake",
	[PERFCAP_AGG_POLL] = "poll", [PERFCAP_AGG_NET_RECV] = "net_recv",
	[PERFCAP_AGG_NET_SEND] = "net_send", [PERFCAP_AGG_VFS_READ] = "vfs_read",
	[PERFCAP_AGG_VFS_WRITE] = "vfs_write", [PERFCAP_AGG_OTHER] = "other",
};

void metrics_classes_fill(volatile uint8_t *table)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		int nr = syscall_number(classes[i].name);

		if (nr >= 0 && nr < PERFCAP_SYSCALL_NR_MAX)
			table[nr] = classes[i].klass;
	}
}

const char *metrics_class_list(void)
{
	static char list[160];
	size_t used = 0;

	if (list[0])
		return list;
	for (int k = 1; k < PERFCAP_AGG_CLASSES; k++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d:%s",
					 used ? "," : "", k, class_names[k]);
	return list;
}

/* ---- draining -------------------------------------------------------------- */

static void write_metric(struct metrics_drain *d, struct consumer *c, const struct perfcap_agg_key *k,
			 const struct perfcap_agg_value *v)
{
	struct pc_rec_thread_metric rec = {
		.h.type = PC_REC_THREAD_METRIC,
		.h.flags = k->flags,
		.window_start = d->origin_ns + (uint64_t)k->window * PERFCAP_AGG_WINDOW_NS,
		.window_ns = PERFCAP_AGG_WINDOW_NS,
		.pid = k->pid,
		.tid = k->tid,
		.klass = k->klass,
		.key = k->key,
		.count = v->count,
		.errors = v->errors,
		.total_ns = v->total_ns,
		.bytes = v->bytes,
	};

	memcpy(rec.hist, v->hist, sizeof(rec.hist));
	if ((int64_t)k->window < d->drained_below)
		d->late++;
	if (consumer_add_event(c, d->source, &rec, sizeof(rec), rec.window_start))
		d->write_errors++;
	d->records++;
}

/* One pass: writes and deletes up to AGG_DRAIN_BATCH entries of windows
 * below `below`. Returns how many keys it looked at. */
static size_t drain_pass(struct metrics_drain *d, struct consumer *c, int64_t below,
			 bool *more)
{
	static struct perfcap_agg_key keys[AGG_DRAIN_BATCH];
	int fd = d->map_fd;
	struct perfcap_agg_key cur, next;
	struct perfcap_agg_value v;
	size_t n = 0, seen = 0;
	void *prev = NULL;

	*more = false;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		cur = next;
		prev = &cur;
		seen++;
		if ((int64_t)cur.window >= below)
			continue;
		if (n == AGG_DRAIN_BATCH) {
			*more = true;
			break;
		}
		keys[n++] = cur;
	}
	for (size_t i = 0; i < n; i++) {
		/* read, then delete: a call summed in between is in neither (it is
		 * in a window over for AGG_GRACE_NS, so only a preempted exit) */
		if (bpf_map_lookup_elem(fd, &keys[i], &v) || bpf_map_delete_elem(fd, &keys[i])) {
			d->drain_errors++;
			continue;
		}
		write_metric(d, c, &keys[i], &v);
	}
	return seen;
}

static void drain(struct metrics_drain *d, struct consumer *c, int64_t below)
{
	bool more = true;

	for (int pass = 0; more && pass < 64; pass++)
		drain_pass(d, c, below, &more);
	if (below > d->drained_below)
		d->drained_below = below;
}

void metrics_drain_tick(struct metrics_drain *d, struct consumer *c, uint64_t now_ns,
			bool final)
{
	int64_t below;

	if (d->map_fd < 0)
		return;
	if (final) {
		drain(d, c, INT64_MAX);
		return;
	}
	if (now_ns < d->origin_ns + PERFCAP_AGG_WINDOW_NS + METRICS_GRACE_NS)
		return;
	below = (int64_t)((now_ns - d->origin_ns - METRICS_GRACE_NS) / PERFCAP_AGG_WINDOW_NS);
	if (below > d->drained_below)
		drain(d, c, below);
}

int metrics_drain_stats(const struct metrics_drain *d, struct chunk_buffer *kv,
			const char *prefix)
{
	char key[64];
	int err = 0;

	snprintf(key, sizeof(key), "%s.records", prefix);
	err |= chunk_buffer_add_kv_u64(kv, key, d->records);
	snprintf(key, sizeof(key), "%s.late", prefix);
	err |= chunk_buffer_add_kv_u64(kv, key, d->late);
	snprintf(key, sizeof(key), "%s.drain_errors", prefix);
	err |= chunk_buffer_add_kv_u64(kv, key, d->drain_errors);
	snprintf(key, sizeof(key), "%s.write_errors", prefix);
	err |= chunk_buffer_add_kv_u64(kv, key, d->write_errors);
	return err ? -ENOMEM : 0;
}

int metrics_meta_kv(struct chunk_buffer *kv, const char *prefix, uint64_t origin_ns)
{
	static const char *const keys[] = { "origin_ns", "window_ns", "entries_max" };
	const uint64_t values[] = { origin_ns, PERFCAP_AGG_WINDOW_NS, PERFCAP_AGG_ENTRIES };
	char key[64];
	int err = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(key, sizeof(key), "%s.%s", prefix, keys[i]);
		err |= chunk_buffer_add_kv_u64(kv, key, values[i]);
	}
	snprintf(key, sizeof(key), "%s.classes", prefix);
	err |= chunk_buffer_add_kv(kv, key, metrics_class_list());
	return err ? -ENOMEM : 0;
}

void metrics_read_counters(struct bpf_map *counters, const char *prefix, const char *what,
			   uint64_t v[PERFCAP_AGG_C_NR])
{
	percpu_counts_read(counters, v, PERFCAP_AGG_C_NR);
	if (v[PERFCAP_AGG_C_FULL_CALLS])
		warning_line("%s: %llu %s (%.3f s) found the sums map full: not in the "
			     "THREAD_METRIC records (STATS %s.map_full.*)", prefix,
			     (unsigned long long)v[PERFCAP_AGG_C_FULL_CALLS], what,
			     (double)v[PERFCAP_AGG_C_FULL_NS] / 1e9, prefix);
}
