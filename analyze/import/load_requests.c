/* load_requests.c - the requests of a capture, after its chunks: from the
 * socket calls (correlate/requests.c, needs -e syscall,net) and from the
 * req source's REQUEST records (correlate/kernel_requests.c, in the
 * default recording), as `--requests-from` chooses: auto (calls where a
 * process has them, the kernel's records for the other processes), calls
 * or kernel. REQUEST records are kept as they are decoded, and each
 * request of a REQUEST_BATCH as the REQUEST record it stands for; the
 * REQUEST_WINDOWs (1.10) too, which the kernel's requests name. */
#include <stdlib.h>

#include "correlate/kernel_requests.h"
#include "correlate/request_totals.h"
#include "correlate/requests.h"
#include "load_state.h"
#include "loader.h"
#include "request_pace.h"

int decode_request(struct loader *L, const struct record_in *in)
{
	if (kernel_requests_add(&L->kreqs, in->body) < 0)
		L->failed = 1;
	return 0;
}

int decode_request_batch(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_request_batch *b = in->body;

	if (!b->n || b->n > PC_REQUEST_BATCH_MAX ||
	    (size_t)b->n * sizeof(struct pc_request_entry) > in->tail_len) {
		L->counts.records_malformed++;
		return 0;
	}
	L->counts.requests_batched += b->n;
	L->nevents += b->n - 1u;   /* as many events as requests, as the recorder counted */
	if (kernel_requests_add_batch(&L->kreqs, b, in->tail) < 0)
		L->failed = 1;
	return 0;
}

int decode_request_window(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_request_window *w = in->body;

	if (!w->period_ns || w->open_ns > w->period_ns || w->ts > (uint64_t)INT64_MAX ||
	    w->period_ns > (uint64_t)INT64_MAX - w->ts || w->started > (uint64_t)INT64_MAX) {
		L->counts.records_malformed++;
		return 0;
	}
	if (kernel_requests_add_window(&L->kreqs, w) < 0)
		L->failed = 1;
	return 0;
}

/* request_marks.kind by enum pc_mark_kind */
static const char *const mark_kinds[] = { NULL, "period", "close", "end", "snapshot" };

int decode_request_mark(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_request_mark *m = in->body;

	if (m->ts > (uint64_t)INT64_MAX || m->conn_ts > (uint64_t)INT64_MAX) {
		L->counts.records_malformed++;
		return 0;
	}
	in->row[0] = (int64_t)m->ts;
	in->row[1] = (int64_t)m->cookie;
	in->row[2] = (int64_t)m->conn_ts;
	in->row[3] = m->pid;
	in->row[4] = m->copied;
	/* 1.15 marks (kind 0) have no read count: read and kind NULL */
	in->row[5] = m->read > INT64_MAX ? INT64_MAX : (int64_t)m->read;
	batch_text(in->row, in->kind, 6, m->kind < sizeof(mark_kinds) / sizeof(mark_kinds[0]) ?
		   mark_kinds[m->kind] : "unknown");
	if (!m->kind)
		in->kind[5] = BATCH_NULL;
	return 1;
}

int requests_pass(struct loader *L)
{
	struct request_totals totals;
	struct request_pids from_calls = { 0 };
	int rc = 0, from = L->requests_from;

	/* calls paired in windows (above --syscall-rate) make no whole
	 * request: a read in a window, its answer in the gap; the kernel's
	 * REQUEST records (req, windowed on its own) are complete */
	if (from == LOAD_REQUESTS_AUTO && L->scw.n)
		from = LOAD_REQUESTS_KERNEL;
	request_totals_init(&totals);
	if (from != LOAD_REQUESTS_KERNEL &&
	    requests_build(L->db, &L->requests, &totals, &from_calls) < 0)
		rc = -1;
	if (rc == 0 && from == LOAD_REQUESTS_CALLS)
		L->kreqs.skipped = L->kreqs.n;
	else if (rc == 0)     /* auto: the processes with rows from calls are left out */
		rc = kernel_requests_build(L->db, &L->kreqs, from_calls.v, from_calls.n, &totals);
	free(from_calls.v);
	kernel_requests_release(&L->kreqs);  /* the counts stay for the quality table */
	if (rc == 0)
		rc = request_totals_write(L->db, &totals);
	if (rc == 0)
		rc = request_pace_build(L->db);
	request_totals_free(&totals);
	return rc;
}
