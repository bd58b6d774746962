/* report_functions.c - "Top functions": per function (name and module),
 * self samples (the function is the innermost frame of the combined stack,
 * kernel frames being on top of user frames) and total samples (the
 * function is anywhere in the stack, counted once per sample), as shares of
 * the selected samples and as estimated CPU time (samples / frequency).
 *
 * Computed in one pass over the selected sample groups using the call
 * chains; docs/schema.md shows the equivalent SQL. */
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "report_sections.h"
#include "text.h"

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

static void print_top(const struct report_context *ctx, struct ranking *r)
{
	uint32_t *order = malloc(((size_t)ctx->cc->nfunctions + 1) * sizeof(uint32_t));
	uint32_t n = 0;

	if (!order)
		return;
	for (uint32_t fn = 0; fn < ctx->cc->nfunctions; fn++)
		if (r->counts[fn].total > 0)
			order[n++] = fn;
	sort_ranking = r;
	qsort(order, n, sizeof(*order), compare_functions);
	sort_ranking = NULL;
	for (uint32_t i = 0; i < n && i < (uint32_t)ctx->opts->top; i++)
		print_row(ctx, &ctx->cc->functions[order[i]], &r->counts[order[i]]);
	free(order);
}

int report_section_functions(const struct report_context *ctx)
{
	struct ranking r = { .cc = ctx->cc };

	fprintf(ctx->out, "\nTop functions (by self samples, top %d)\n", ctx->opts->top);
	fprintf(ctx->out, "  %6s %6s %10s %10s %10s %10s  %s\n", "Self", "Total",
		"Self", "Total", "Self CPU", "Total CPU", "Function  [module]");
	r.counts = calloc((size_t)ctx->cc->nfunctions + 1, sizeof(*r.counts));
	if (!r.counts)
		return -1;
	count_functions(ctx, r.counts);
	print_top(ctx, &r);
	if (ctx->samples == 0)
		fprintf(ctx->out, "  (no samples)\n");
	free(r.counts);
	return 0;
}
