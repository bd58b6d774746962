/* report_wakeups.c - "Wakeup graph": who woke whom (book 8.3, off-wake
 * analysis). The scope's main edges waker -> wakee over blocked waits,
 * each with where the chains of wakeups behind it end
 * (query/wake_chains.h): A waited for B, B waited for the disk. In
 * JSON: "wakeup_graph" (docs/report-json.md), which the HTML page draws.
 * Computed first (struct wake_graph), then rendered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/wake_chains.h"
#include "util/fmt.h"
#include "report_sections.h"

#define WAKEUP_EDGES 8

static const char *comm_of(const struct report_context *ctx, uint32_t pid, uint32_t tid)
{
	const char *name = tid ? names_thread(ctx->names, pid, tid) : NULL;

	return name ? name : "?";
}

/* "thread 123 name", "softirq:NET_RX on 123 name", "timer". */
static const char *waker_label(const struct report_context *ctx, const struct wake_edge *e,
			       char *buf, size_t len)
{
	if (e->waker_tid == 0)
		snprintf(buf, len, "%s", e->waker_kind);
	else
		snprintf(buf, len, "%s%s %u %s", e->waker_kind,
			 strncmp(e->waker_kind, "softirq:", 8) == 0 ? " on" : "", e->waker_tid,
			 comm_of(ctx, e->waker_pid, e->waker_tid));
	return buf;
}

/* "running 123 name", "device (block_io of 123 name)". */
static const char *root_label(const struct report_context *ctx, const struct wake_root *r,
			      char *buf, size_t len)
{
	if (strcmp(r->kind, "running") == 0)
		snprintf(buf, len, "running %u %s", r->tid, comm_of(ctx, r->pid, r->tid));
	else if (strcmp(r->kind, "depth") == 0)
		snprintf(buf, len, "beyond %d hops", WAKE_CHAIN_HOPS);
	else
		snprintf(buf, len, "%s (%s of %u %s)", r->kind, r->wait_class, r->tid,
			 comm_of(ctx, r->pid, r->tid));
	return buf;
}

static void edge_json(const struct report_context *ctx, const struct wake_edge *e)
{
	struct json_writer *w = ctx->json;

	json_begin_object(w, NULL);
	json_int(w, "pid", e->pid);
	json_int(w, "tid", e->tid);
	json_string(w, "comm", comm_of(ctx, e->pid, e->tid));
	json_string(w, "wait_class", e->wait_class);
	json_string(w, "waker_kind", e->waker_kind);
	json_int(w, "waker_pid", e->waker_pid);
	json_int(w, "waker_tid", e->waker_tid);
	if (e->waker_tid)
		json_string(w, "waker_comm", comm_of(ctx, e->waker_pid, e->waker_tid));
	else
		json_null(w, "waker_comm");
	json_uint(w, "waits", e->waits);
	json_uint(w, "total_ns", e->total_ns);
	json_uint(w, "max_ns", e->max_ns);
	json_uint(w, "hops", e->hops);
	json_begin_array(w, "roots");
	for (int k = 0; k < e->nroots; k++) {
		const struct wake_root *r = &e->roots[k];
		json_begin_object(w, NULL);
		json_string(w, "kind", r->kind);
		json_int(w, "pid", r->pid);
		json_int(w, "tid", r->tid);
		json_string(w, "comm", comm_of(ctx, r->pid, r->tid));
		if (r->wait_class[0])
			json_string(w, "wait_class", r->wait_class);
		else
			json_null(w, "wait_class");
		json_uint(w, "waits", r->waits);
		json_uint(w, "ns", r->ns);
		json_end_object(w);
	}
	json_end_array(w);
	json_uint(w, "other_roots_ns", e->other_roots_ns);
	json_end_object(w);
}

static void edge_text(const struct report_context *ctx, const struct wake_edge *e)
{
	char waker[96], a[FMT_BUF], b[FMT_BUF], root[96];
	uint64_t sum = e->other_roots_ns;

	fprintf(ctx->out, "  %7u %7u %-16.16s %-10s %-34.34s %7llu %10s %10s\n", e->pid, e->tid,
		comm_of(ctx, e->pid, e->tid), e->wait_class,
		waker_label(ctx, e, waker, sizeof(waker)), (unsigned long long)e->waits,
		fmt_duration_ns(a, sizeof(a), e->total_ns),
		fmt_duration_ns(b, sizeof(b), e->max_ns));
	if (strcmp(e->waker_kind, "thread") != 0 && strcmp(e->waker_kind, "process") != 0)
		return;               /* no thread to follow: the edge is its own root */
	for (int k = 0; k < e->nroots; k++)
		sum += e->roots[k].ns;
	fprintf(ctx->out, "  %15s root:", "");
	for (int k = 0; k < e->nroots; k++)
		fprintf(ctx->out, "%s %s %.0f%%", k ? "," : "",
			root_label(ctx, &e->roots[k], root, sizeof(root)),
			sum ? 100.0 * (double)e->roots[k].ns / (double)sum : 0.0);
	if (e->nroots == 0)
		fprintf(ctx->out, " -");
	fputc('\n', ctx->out);
}

int report_section_wakeups(const struct report_context *ctx)
{
	struct json_writer *w = ctx->json;
	struct wake_graph g;
	int have = report_has_object(ctx->db, "wakeup_edges");
	int top = ctx->opts->top < WAKEUP_EDGES ? ctx->opts->top : WAKEUP_EDGES;

	memset(&g, 0, sizeof(g));
	if (have && wake_graph_load(ctx->db, ctx->scope, top, &g) < 0)
		return -1;
	if (w) {
		json_begin_object(w, "wakeup_graph");
		json_int(w, "max_hops", WAKE_CHAIN_HOPS);
		json_uint(w, "blocked_ns", g.blocked_ns);
		json_uint(w, "blocked_waits", g.blocked_waits);
		json_begin_array(w, "edges");
		for (size_t i = 0; i < g.len; i++)
			edge_json(ctx, &g.edges[i]);
		json_end_array(w);
		json_end_object(w);
	} else {
		fprintf(ctx->out, "\nWakeup graph (blocked waits by what ended them; root: where the"
			" chain of wakers ends, up to %d hops)\n", WAKE_CHAIN_HOPS);
		if (!have)
			fprintf(ctx->out, "  no wakeup_edges view in this database (imported by an"
				" older perfcap-analyze: import the capture again)\n");
		else if (g.len == 0)
			report_none(ctx, "blocked waits", "sched");
		else
			fprintf(ctx->out, "  %7s %7s %-16s %-10s %-34s %7s %10s %10s\n", "pid", "tid",
				"comm", "wait", "woken by", "waits", "total", "longest");
		for (size_t i = 0; i < g.len; i++)
			edge_text(ctx, &g.edges[i]);
	}
	wake_graph_free(&g);
	return 0;
}
