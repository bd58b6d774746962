/* report_functions.c - "CPU hot paths" and its "Top functions": per function (name and module),
 * self samples (the function is the innermost frame of the combined stack,
 * kernel frames being on top of user frames) and total samples (the
 * function is anywhere in the stack, counted once per sample), as shares of
 * the selected samples and as estimated CPU time (samples / frequency).
 *
 * Computed in one pass over the selected sample groups using the call
 * chains; docs/schema.md shows the equivalent SQL. The section opens with
 * the truncation and symbol-miss rates that bound how far to trust it.
 * In JSON: "cpu" (functions, top stacks, folded stacks, rates). */
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "util/fmt.h"
#include "report_sections.h"
#include "util/text.h"

struct function_count {
	uint64_t self;
	uint64_t total;
	uint64_t last_row;        /* row that last counted it in total (1-based) */
};

struct ranking {
	const struct callchains *cc;
	struct function_count *counts;
};

static void count_chain(struct function_count *counts, const uint32_t *fns, uint32_t len,
			uint64_t row, uint64_t n)
{
	for (uint32_t i = 0; i < len; i++) {
		struct function_count *c = &counts[fns[i]];
		if (c->last_row != row) {
			c->last_row = row;
			c->total += n;
		}
	}
}

static void count_functions(const struct report_context *ctx, struct function_count *counts)
{
	for (size_t i = 0; i < ctx->sel->len; i++) {
		const struct selected_group *g = &ctx->sel->groups[i];
		uint32_t ulen, klen;
		const uint32_t *u = callchains_get(ctx->cc, g->ustack, &ulen);
		const uint32_t *k = callchains_get(ctx->cc, g->kstack, &klen);

		if (klen > 0)
			counts[k[0]].self += g->count;
		else if (ulen > 0)
			counts[u[0]].self += g->count;
		count_chain(counts, k, klen, i + 1, g->count);
		count_chain(counts, u, ulen, i + 1, g->count);
	}
}

static const struct ranking *sort_ranking;

/* Most self samples first, then most total, then by name and module. */
static int compare_functions(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct function_count *ca = &sort_ranking->counts[a];
	const struct function_count *cb = &sort_ranking->counts[b];
	const struct function *fa = &sort_ranking->cc->functions[a];
	const struct function *fb = &sort_ranking->cc->functions[b];
	int by_name;

	if (ca->self != cb->self)
		return ca->self > cb->self ? -1 : 1;
	if (ca->total != cb->total)
		return ca->total > cb->total ? -1 : 1;
	by_name = strcmp(fa->name, fb->name);
	return by_name ? by_name : strcmp(fa->module, fb->module);
}

static void print_row(const struct report_context *ctx, const struct function *f,
		      const struct function_count *c)
{
	char self_pct[FMT_BUF], total_pct[FMT_BUF], self_n[FMT_BUF], total_n[FMT_BUF];
	char self_t[FMT_BUF], total_t[FMT_BUF], label[256];

	fprintf(ctx->out, "  %6s %6s %10s %10s %10s %10s  %s  %s\n",
		fmt_percent(self_pct, sizeof(self_pct), c->self, ctx->samples),
		fmt_percent(total_pct, sizeof(total_pct), c->total, ctx->samples),
		fmt_count(self_n, sizeof(self_n), c->self),
		fmt_count(total_n, sizeof(total_n), c->total),
		report_cpu_time(ctx, self_t, sizeof(self_t), c->self),
		report_cpu_time(ctx, total_t, sizeof(total_t), c->total),
		f->name, text_module_label(label, sizeof(label), f->module));
}

/* The functions with samples, ranked; *n of them. NULL on out-of-memory. */
static uint32_t *rank_functions(const struct report_context *ctx, struct ranking *r,
				uint32_t *n)
{
	uint32_t *order = malloc(((size_t)ctx->cc->nfunctions + 1) * sizeof(uint32_t));

	*n = 0;
	if (!order)
		return NULL;
	for (uint32_t fn = 0; fn < ctx->cc->nfunctions; fn++)
		if (r->counts[fn].total > 0)
			order[(*n)++] = fn;
	sort_ranking = r;
	qsort(order, *n, sizeof(*order), compare_functions);
	sort_ranking = NULL;
	return order;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static uint64_t quality(const struct report_context *ctx, const char *source, const char *key)
{
	int64_t v = db_lookup_int(ctx->db, "SELECT value FROM quality WHERE source = ?1"
				  " AND key = ?2", source, key, 0);

	return v > 0 ? (uint64_t)v : 0;
}

static double truncated_pct(const struct report_context *ctx)
{
	return pct(quality(ctx, "stacks", "samples.truncated") +
		   quality(ctx, "stacks", "samples.probably_truncated"),
		   quality(ctx, "cpu", "samples"));
}

static double unresolved_pct(const struct report_context *ctx)
{
	return pct(quality(ctx, "frames", "sampled.unresolved"), quality(ctx, "frames", "sampled"));
}

static void function_json(const struct report_context *ctx, const struct function *f,
			  const struct function_count *c)
{
	struct json_writer *w = ctx->json;

	json_begin_object(w, NULL);
	json_string(w, "name", f->name);
	json_string(w, "module", f->module);
	json_uint(w, "self", c->self);
	json_uint(w, "total", c->total);
	json_double(w, "self_pct", pct(c->self, ctx->samples));
	json_double(w, "total_pct", pct(c->total, ctx->samples));
	json_end_object(w);
}

static int folded_json(const struct report_context *ctx)
{
	struct folded_stack *lines = NULL;
	size_t n = 0;

	if (folded_stacks_build(ctx->sel, ctx->cc, ctx->names, &lines, &n) < 0)
		return -1;
	json_begin_array(ctx->json, "folded");
	for (size_t i = 0; i < n; i++) {
		json_begin_object(ctx->json, NULL);
		json_string(ctx->json, "stack", lines[i].text);
		json_uint(ctx->json, "count", lines[i].count);
		json_end_object(ctx->json);
	}
	json_end_array(ctx->json);
	folded_stacks_free(lines, n);
	return 0;
}

static int write_json(const struct report_context *ctx, struct ranking *r, const uint32_t *order,
		      uint32_t n)
{
	struct json_writer *w = ctx->json;
	int rc;

	json_begin_object(w, "cpu");
	json_uint(w, "samples", ctx->samples);
	json_double(w, "freq_hz", ctx->freq_hz);
	json_double(w, "truncated_pct", truncated_pct(ctx));
	json_double(w, "unresolved_pct", unresolved_pct(ctx));
	json_begin_array(w, "functions");
	for (uint32_t i = 0; i < n && i < (uint32_t)ctx->opts->top; i++)
		function_json(ctx, &ctx->cc->functions[order[i]], &r->counts[order[i]]);
	json_end_array(w);
	rc = report_stacks_json(ctx);
	if (rc == 0)
		rc = folded_json(ctx);
	json_end_object(w);
	return rc;
}

static void print_rates(const struct report_context *ctx)
{
	fprintf(ctx->out, "  stacks truncated or probably truncated: %.1f%% of samples;"
		" unresolved frames: %.1f%% (see Data quality)\n",
		truncated_pct(ctx), unresolved_pct(ctx));
}

int report_section_cpu(const struct report_context *ctx)
{
	struct ranking r = { .cc = ctx->cc };
	uint32_t *order, n;
	int rc = 0;

	r.counts = calloc((size_t)ctx->cc->nfunctions + 1, sizeof(*r.counts));
	if (!r.counts)
		return -1;
	count_functions(ctx, r.counts);
	order = rank_functions(ctx, &r, &n);
	if (!order) {
		free(r.counts);
		return -1;
	}
	if (ctx->json) {
		rc = write_json(ctx, &r, order, n);
	} else {
		fprintf(ctx->out, "\nCPU hot paths\n");
		if (ctx->samples == 0)
			report_none(ctx, "CPU samples", "cpu");
		else
			print_rates(ctx);
		fprintf(ctx->out, "\nTop functions (by self samples, top %d)\n", ctx->opts->top);
		fprintf(ctx->out, "  %6s %6s %10s %10s %10s %10s  %s\n", "Self", "Total",
			"Self", "Total", "Self CPU", "Total CPU", "Function  [module]");
		for (uint32_t i = 0; i < n && i < (uint32_t)ctx->opts->top; i++)
			print_row(ctx, &ctx->cc->functions[order[i]], &r.counts[order[i]]);
		if (ctx->samples == 0)
			fprintf(ctx->out, "  (no samples)\n");
	}
	free(order);
	free(r.counts);
	return rc;
}
