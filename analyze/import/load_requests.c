/* load_requests.c - the requests of a capture, after its chunks: from the
 * socket calls (correlate/requests.c, needs -e syscall,net) and from the
 * req source's REQUEST records (correlate/kernel_requests.c, in the
 * default recording), as `--requests-from` chooses: auto (calls where a
 * process has them, the kernel's records for the other processes), calls
 * or kernel. REQUEST records are kept as they are decoded, and each
 * request of a REQUEST_BATCH as the REQUEST record it stands for. */
#include <string.h>

#include "correlate/kernel_requests.h"
#include "correlate/requests.h"
#include "load_state.h"
#include "loader.h"

int decode_request(struct loader *L, const struct record_in *in)
{
	if (kernel_requests_add(&L->kreqs, in->body) < 0)
		L->failed = 1;
	return 0;
}

/* The i-th request of a batch, as its REQUEST record would be. */
static void batch_entry(const struct pc_rec_request_batch *b, const struct pc_request_entry *e,
			uint32_t i, struct pc_rec_request *r)
{
	memset(r, 0, sizeof(*r));
	r->h.type = PC_REC_REQUEST;
	r->h.flags = e->flags;
	r->h.size = sizeof(*r);
	r->start_ts = b->base_ts + e->start_off;
	r->end_ts = r->start_ts + e->end_ns;
	r->conn_ts = b->conn_ts;
	r->cookie = b->cookie;
	r->first_write_ns = e->first_write_ns;
	r->ready_ns = e->ready_ns;
	r->lower_ns = e->lower_ns;
	r->bytes_in = e->bytes_in;
	r->bytes_out = e->bytes_out;
	r->pid = b->pid;
	r->pickup_tid = e->pickup_tid;
	r->other_tid = e->other_tid;
	r->fd = b->fd;
	r->number = b->number + i;
	r->reads = e->reads;
	r->writes = e->writes;
	r->family = b->family;
	r->lport = b->lport;
	r->origin = b->origin;
}

int decode_request_batch(struct loader *L, const struct record_in *in)
{
	const struct pc_rec_request_batch *b = in->body;
	struct pc_request_entry e;
	struct pc_rec_request r;
	uint32_t i;

	if (!b->n || b->n > PC_REQUEST_BATCH_MAX || (size_t)b->n * sizeof(e) > in->tail_len) {
		L->counts.records_malformed++;
		return 0;
	}
	L->counts.requests_batched += b->n;
	for (i = 0; i < b->n && !L->failed; i++) {
		memcpy(&e, in->tail + i * sizeof(e), sizeof(e));
		batch_entry(b, &e, i, &r);
		if (kernel_requests_add(&L->kreqs, &r) < 0)
			L->failed = 1;
	}
	return 0;
}

int requests_pass(struct loader *L)
{
	int rc;

	if (L->requests_from != LOAD_REQUESTS_KERNEL && requests_build(L->db, &L->requests) < 0)
		return -1;
	if (L->requests_from == LOAD_REQUESTS_CALLS) {
		L->kreqs.skipped = L->kreqs.n;
		rc = 0;
	} else {
		rc = kernel_requests_build(L->db, &L->kreqs, L->requests_from == LOAD_REQUESTS_AUTO);
	}
	kernel_requests_release(&L->kreqs);  /* the counts stay for the quality table */
	return rc;
}
