/* load_aggregates.c - the decoder of THREAD_METRIC records (format 1.3,
 * the recorder's agg and waits sources): one thread_metrics row per
 * record (kind 'calls' or 'waits' by its flag), and its
 * sums handed to the correlator, which fills the syscall columns of
 * thread_time_shares from them (correlate/metric_shares.c). Records of an
 * unknown class are stored with class NULL and not summed; records whose
 * window would wrap the clock are counted as malformed. */
#include "correlate/correlate.h"
#include "load_state.h"

static const char *const class_names[PC_METRIC_CLASSES] = {
	[PC_METRIC_FUTEX_WAIT] = "futex_wait", [PC_METRIC_FUTEX_WAKE] = "futex_wake",
	[PC_METRIC_POLL] = "poll", [PC_METRIC_NET_RECV] = "net_recv",
	[PC_METRIC_NET_SEND] = "net_send", [PC_METRIC_VFS_READ] = "vfs_read",
	[PC_METRIC_VFS_WRITE] = "vfs_write", [PC_METRIC_OTHER] = "other",
};

int decode_thread_metric(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_thread_metric *m = in->body;
	const char *name = m->klass < PC_METRIC_CLASSES ? class_names[m->klass] : NULL;
	int64_t *row = in->row;

	if (m->window_start + m->window_ns < m->window_start || m->window_ns == 0) {
		L->counts.records_malformed++;
		return 0;
	}
	if (in->rec->flags & PC_METRIC_F_WAIT)
		L->counts.metrics_waits++;   /* the waits source's, not agg's */
	row[0] = (int64_t)m->window_start;
	row[1] = (int64_t)(m->window_start + m->window_ns);
	row[2] = m->pid;
	row[3] = m->tid;
	batch_text(row, in->kind, 4, name);
	batch_text(row, in->kind, 5, in->rec->flags & PC_METRIC_F_WAIT ? "waits" : "calls");
	row[6] = (int64_t)m->key;
	if (m->key == PC_METRIC_NO_KEY)
		in->kind[6] = BATCH_NULL;
	row[7] = (int64_t)m->count;
	row[8] = (int64_t)m->errors;
	row[9] = (int64_t)m->total_ns;
	row[10] = (int64_t)m->bytes;
	for (int b = 0; b < PC_METRIC_HIST; b++)
		row[11 + b] = m->hist[b];
	if (name && correlator_add_metric(L->corr, &(struct metric_sum){
			.window_start = m->window_start, .window_ns = m->window_ns,
			.pid = m->pid, .tid = m->tid, .klass = m->klass,
			.wait = (in->rec->flags & PC_METRIC_F_WAIT) != 0,
			.count = m->count, .total_ns = m->total_ns }) < 0)
		L->failed = 1;
	return 1;
}
