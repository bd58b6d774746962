/* report_unwind.c - the user stacks part of "Data quality": the share of
 * complete user stacks (reaching _start, __libc_start_main, clone,
 * start_thread) of CPU samples and of blocked off-CPU intervals, how they
 * were obtained (dwarf: unwound from a copy; partial: unwound, stopped
 * early; fp: frame-pointer walk, complete or not), why unwinds stopped,
 * and the same per process and per module of the innermost frame.
 * Computed by query/stack_quality.c, rendered here; printed only for
 * captures with user stack copies. In JSON: "user_stacks". */
#include <stdio.h>

#include "query/stack_quality.h"
#include "util/fmt.h"
#include "report_sections.h"

static void print_counts(FILE *out, const char *label, const char *unit,
			 const struct sq_counts *c)
{
	uint64_t all = sq_total(c);
	char n[FMT_BUF], p[SQ_METHOD_COUNT + 1][FMT_BUF], none[FMT_BUF];

	fprintf(out, "  %-20s %s of %s %s complete (dwarf %s, fp %s); partial %s, "
		"fp incomplete %s; %s without a user stack\n", label,
		fmt_percent(p[SQ_METHOD_COUNT], sizeof(p[0]), sq_complete(c), all),
		fmt_count(n, sizeof(n), all), unit,
		fmt_percent(p[SQ_DWARF], sizeof(p[0]), c->by_method[SQ_DWARF], all),
		fmt_percent(p[SQ_FP], sizeof(p[0]), c->by_method[SQ_FP], all),
		fmt_percent(p[SQ_PARTIAL], sizeof(p[0]), c->by_method[SQ_PARTIAL], all),
		fmt_percent(p[SQ_FP_INCOMPLETE], sizeof(p[0]), c->by_method[SQ_FP_INCOMPLETE], all),
		fmt_count(none, sizeof(none), c->none));
}

static void print_rows(FILE *out, const char *title, const struct sq_row *rows, int n,
		       uint64_t more)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF];

	if (n == 0)
		return;
	fprintf(out, "    %s:\n      %9s %9s %9s %9s  %s\n", title, "stacks", "complete",
		"dwarf", "partial", "name");
	for (int i = 0; i < n; i++) {
		const struct sq_counts *k = &rows[i].n;
		uint64_t all = sq_total(k);

		fprintf(out, "      %9s %9s %9s %9s  ", fmt_count(a, sizeof(a), all),
			fmt_percent(b, sizeof(b), sq_complete(k), all),
			fmt_percent(c, sizeof(c), k->by_method[SQ_DWARF], all),
			fmt_percent(d, sizeof(d), k->by_method[SQ_PARTIAL], all));
		if (rows[i].pid >= 0)
			fprintf(out, "%lld ", (long long)rows[i].pid);
		fprintf(out, "%s\n", rows[i].name);
	}
	if (more)
		fprintf(out, "      (%llu more)\n", (unsigned long long)more);
}

/* Off-CPU intervals that took an earlier copy of their thread, and what the
 * refresh copies said of such reuse. */
static void print_reuse(FILE *out, const struct sq_reuse *r)
{
	char a[FMT_BUF], b[FMT_BUF], c[FMT_BUF], d[FMT_BUF], e[FMT_BUF];

	if (r->kernel || r->kernel_agreed || r->kernel_differed)
		fprintf(out, "    %s blocked intervals took their thread's kept kernel stack (same "
			"place and call); walks taken again agreed with it %s times, differed %s%s\n",
			fmt_count(a, sizeof(a), r->kernel), fmt_count(b, sizeof(b), r->kernel_agreed),
			fmt_count(c, sizeof(c), r->kernel_differed),
			r->kernel_differed ? " (those intervals may show another kernel path)" : "");
	if (!r->same && !r->agreed && !r->differed && !r->unverified)
		return;
	fprintf(out, "    %s blocked intervals took their thread's earlier copy (same place: "
		"ip, sp, call, return addresses at the stack top), %s of them found; "
		"refresh copies agreed with it %s times, differed %s%s, unchecked %s\n",
		fmt_count(a, sizeof(a), r->same), fmt_count(b, sizeof(b), r->paired),
		fmt_count(c, sizeof(c), r->agreed), fmt_count(d, sizeof(d), r->differed),
		r->differed ? " (those intervals may show another call path)" : "",
		fmt_count(e, sizeof(e), r->unverified));
}

static void print_text(const struct report_context *ctx, const struct stack_quality *q)
{
	FILE *out = ctx->out;
	char n[FMT_BUF];

	print_counts(out, "User stacks:", "CPU samples", &q->cpu);
	if (sq_total(&q->offcpu) || q->offcpu.none)
		print_counts(out, "Off-CPU user stacks:", "blocked intervals", &q->offcpu);
	print_reuse(out, &q->reuse);
	if (q->nstops) {
		fprintf(out, "    unwinds stopped by (CPU samples):");
		for (int i = 0; i < q->nstops; i++)
			fprintf(out, "%s %s %s", i ? "," : "", q->stops[i],
				fmt_count(n, sizeof(n), q->stop_samples[i]));
		fprintf(out, "\n");
	}
	print_rows(out, "per process (CPU samples)", q->procs, q->nprocs, q->procs_more);
	print_rows(out, "per module of the innermost frame", q->mods, q->nmods, q->mods_more);
}

static void json_counts(struct json_writer *w, const char *key, const struct sq_counts *c)
{
	uint64_t all = sq_total(c);

	json_begin_object(w, key);
	json_uint(w, "stacks", all);
	json_uint(w, "complete", sq_complete(c));
	json_double(w, "complete_share", all ? (double)sq_complete(c) / (double)all : 0);
	for (int m = 0; m < SQ_METHOD_COUNT; m++)
		json_uint(w, sq_method_name((enum sq_method)m), c->by_method[m]);
	json_uint(w, "none", c->none);
	json_end_object(w);
}

static void json_rows(struct json_writer *w, const char *key, const struct sq_row *rows, int n)
{
	json_begin_array(w, key);
	for (int i = 0; i < n; i++) {
		json_begin_object(w, NULL);
		if (rows[i].pid >= 0) {
			json_int(w, "pid", rows[i].pid);
			json_string(w, "comm", rows[i].name);
		} else {
			json_string(w, "module", rows[i].name);
		}
		json_counts(w, "stacks", &rows[i].n);
		json_end_object(w);
	}
	json_end_array(w);
}

static void write_json(struct json_writer *w, const struct stack_quality *q)
{
	json_begin_object(w, "user_stacks");
	json_counts(w, "cpu", &q->cpu);
	json_counts(w, "offcpu", &q->offcpu);
	json_begin_object(w, "offcpu_reuse");
	json_uint(w, "intervals", q->reuse.same);
	json_uint(w, "found", q->reuse.paired);
	json_uint(w, "refresh_agreed", q->reuse.agreed);
	json_uint(w, "refresh_differed", q->reuse.differed);
	json_uint(w, "refresh_unchecked", q->reuse.unverified);
	json_uint(w, "kernel", q->reuse.kernel);
	json_uint(w, "kernel_refresh_agreed", q->reuse.kernel_agreed);
	json_uint(w, "kernel_refresh_differed", q->reuse.kernel_differed);
	json_end_object(w);
	json_begin_object(w, "stops");
	for (int i = 0; i < q->nstops; i++)
		json_uint(w, q->stops[i], q->stop_samples[i]);
	json_end_object(w);
	json_rows(w, "processes", q->procs, q->nprocs);
	json_rows(w, "modules", q->mods, q->nmods);
	json_end_object(w);
}

int report_quality_user_stacks(const struct report_context *ctx)
{
	struct stack_quality q;
	int rc = stack_quality_read(ctx->db, &q);

	if (rc == 0 && q.present) {
		if (ctx->json)
			write_json(ctx->json, &q);
		else
			print_text(ctx, &q);
	}
	stack_quality_free(&q);
	return rc;
}
