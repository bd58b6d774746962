/* report_stacks.c - "Top stacks" (part of CPU hot paths): for the processes with the most samples,
 * their most frequent stacks, printed innermost frame first (kernel frames
 * above user frames). Stacks that name the same functions are merged (two
 * stack ids can differ only by addresses inside the same functions). */
#include <stdlib.h>
#include <string.h>

#include "util/fmt.h"
#include "util/hashmap.h"
#include "report_sections.h"
#include "util/text.h"

#define TOP_PROCESSES       5
#define TOP_STACKS          5
#define MAX_PRINTED_FRAMES 24

/* A distinct function chain of one process: its kernel and user parts. */
struct chain {
	const uint32_t *kfns;
	uint32_t klen;
	const uint32_t *ufns;
	uint32_t ulen;
	uint64_t count;
	int64_t next;             /* next chain with the same hash, or -1 */
};

struct chain_set {
	struct chain *chains;
	size_t len;
	size_t cap;
	struct hmap by_hash;      /* (hash, 0) -> first chain index */
};

struct process_total {
	uint32_t pid;
	uint64_t samples;
};

static uint64_t hash_fns(uint64_t h, const uint32_t *fns, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++) {
		h ^= fns[i] + 1;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int same_chain(const struct chain *c, const uint32_t *k, uint32_t klen,
		      const uint32_t *u, uint32_t ulen)
{
	return c->klen == klen && c->ulen == ulen &&
	       (klen == 0 || memcmp(c->kfns, k, klen * sizeof(*k)) == 0) &&
	       (ulen == 0 || memcmp(c->ufns, u, ulen * sizeof(*u)) == 0);
}

static int chain_set_add(struct chain_set *set, const uint32_t *k, uint32_t klen,
			 const uint32_t *u, uint32_t ulen, uint64_t count)
{
	uint64_t hash = hash_fns(hash_fns(0xcbf29ce484222325ull, k, klen) ^ 0xff, u, ulen);
	int created = 0;
	uint64_t *first = hmap_upsert(&set->by_hash, hash, 0, set->len, &created);
	int64_t i;

	if (!first)
		return -1;
	for (i = created ? -1 : (int64_t)*first; i >= 0; i = set->chains[i].next) {
		if (same_chain(&set->chains[i], k, klen, u, ulen)) {
			set->chains[i].count += count;
			return 0;
		}
	}
	if (set->len == set->cap) {
		size_t new_cap = set->cap ? set->cap * 2 : 256;
		struct chain *grown = realloc(set->chains, new_cap * sizeof(*grown));
		if (!grown)
			return -1;
		set->chains = grown;
		set->cap = new_cap;
	}
	set->chains[set->len] = (struct chain){ .kfns = k, .klen = klen, .ufns = u,
						.ulen = ulen, .count = count,
						.next = created ? -1 : (int64_t)*first };
	*first = set->len++;
	return 0;
}

/* The function at position i of the combined chain (kernel part first). */
static uint32_t chain_fn(const struct chain *c, uint32_t i)
{
	return i < c->klen ? c->kfns[i] : c->ufns[i - c->klen];
}

/* Most samples first; equal counts in a fixed order of their functions. */
static int compare_chains(const void *pa, const void *pb)
{
	const struct chain *a = pa, *b = pb;
	uint32_t alen = a->klen + a->ulen, blen = b->klen + b->ulen;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	for (uint32_t i = 0; i < alen && i < blen; i++) {
		uint32_t fa = chain_fn(a, i), fb = chain_fn(b, i);
		if (fa != fb)
			return fa < fb ? -1 : 1;
	}
	return alen == blen ? 0 : (alen < blen ? -1 : 1);
}

static void chain_json(const struct report_context *ctx, const struct chain *c)
{
	struct json_writer *w = ctx->json;
	uint32_t len = c->klen + c->ulen;

	json_begin_object(w, NULL);
	json_uint(w, "count", c->count);
	json_begin_array(w, "frames");
	for (uint32_t i = 0; i < len && i < MAX_PRINTED_FRAMES; i++) {
		const struct function *f = &ctx->cc->functions[chain_fn(c, i)];
		json_begin_object(w, NULL);
		json_string(w, "name", f->name);
		json_string(w, "module", f->module);
		json_end_object(w);
	}
	json_end_array(w);
	json_int(w, "frames_omitted", len > MAX_PRINTED_FRAMES ? len - MAX_PRINTED_FRAMES : 0);
	json_end_object(w);
}

static void process_json(const struct report_context *ctx, const struct process_total *p,
			 const struct chain_set *set, const char *comm)
{
	struct json_writer *w = ctx->json;

	json_begin_object(w, NULL);
	json_int(w, "pid", p->pid);
	json_string(w, "comm", comm);
	json_uint(w, "samples", p->samples);
	json_begin_array(w, "stacks");
	for (size_t i = 0; i < set->len && i < TOP_STACKS; i++)
		chain_json(ctx, &set->chains[i]);
	json_end_array(w);
	json_end_object(w);
}

static void print_chain(const struct report_context *ctx, const struct chain *c,
			uint64_t process_samples)
{
	char n[FMT_BUF], pct[FMT_BUF], total_pct[FMT_BUF], t[FMT_BUF], label[256];
	uint32_t len = c->klen + c->ulen;

	fprintf(ctx->out, "    %s samples (%s of process, %s of all, %s)\n",
		fmt_count(n, sizeof(n), c->count),
		fmt_percent(pct, sizeof(pct), c->count, process_samples),
		fmt_percent(total_pct, sizeof(total_pct), c->count, ctx->samples),
		report_cpu_time(ctx, t, sizeof(t), c->count));
	if (len == 0)
		fprintf(ctx->out, "        [no stack]\n");
	for (uint32_t i = 0; i < len && i < MAX_PRINTED_FRAMES; i++) {
		const struct function *f = &ctx->cc->functions[chain_fn(c, i)];
		fprintf(ctx->out, "        %s  %s\n", f->name,
			text_module_label(label, sizeof(label), f->module));
	}
	if (len > MAX_PRINTED_FRAMES)
		fprintf(ctx->out, "        ... %u more outer frames\n", len - MAX_PRINTED_FRAMES);
}

static int print_process(const struct report_context *ctx, const struct process_total *p)
{
	struct chain_set set = { 0 };
	const char *comm = names_process(ctx->names, p->pid);
	char n[FMT_BUF], pct[FMT_BUF];
	int rc = 0;

	hmap_init(&set.by_hash);
	for (size_t i = 0; rc == 0 && i < ctx->sel->len; i++) {
		const struct selected_group *g = &ctx->sel->groups[i];
		uint32_t ulen, klen;
		const uint32_t *u, *k;

		if (g->pid != p->pid)
			continue;
		u = callchains_get(ctx->cc, g->ustack, &ulen);
		k = callchains_get(ctx->cc, g->kstack, &klen);
		rc = chain_set_add(&set, k, klen, u, ulen, g->count);
	}
	if (rc == 0) {
		qsort(set.chains, set.len, sizeof(*set.chains), compare_chains);
		if (ctx->json) {
			process_json(ctx, p, &set, comm);
			goto done;
		}
		fprintf(ctx->out, "  pid %u %s: %s samples (%s)\n", p->pid, comm ? comm : "?",
			fmt_count(n, sizeof(n), p->samples),
			fmt_percent(pct, sizeof(pct), p->samples, ctx->samples));
		for (size_t i = 0; i < set.len && i < TOP_STACKS; i++)
			print_chain(ctx, &set.chains[i], p->samples);
	}
done:
	free(set.chains);
	hmap_free(&set.by_hash);
	return rc;
}

static int compare_processes(const void *pa, const void *pb)
{
	const struct process_total *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Samples per process, most first. NULL on out-of-memory. */
static struct process_total *process_totals(const struct selection *sel, size_t *count)
{
	struct hmap index;
	struct process_total *totals = malloc((sel->len + 1) * sizeof(*totals));
	size_t n = 0;

	hmap_init(&index);
	for (size_t i = 0; totals && i < sel->len; i++) {
		int created = 0;
		uint64_t *slot = hmap_upsert(&index, sel->groups[i].pid, 0, n, &created);
		if (!slot) {
			free(totals);
			totals = NULL;
			break;
		}
		if (created)
			totals[n++] = (struct process_total){ .pid = sel->groups[i].pid };
		totals[*slot].samples += sel->groups[i].count;
	}
	hmap_free(&index);
	if (totals)
		qsort(totals, n, sizeof(*totals), compare_processes);
	*count = n;
	return totals;
}

/* JSON: the "stacks" member of "cpu", written by report_section_cpu. */
int report_stacks_json(const struct report_context *ctx)
{
	size_t nprocesses = 0;
	struct process_total *totals = process_totals(ctx->sel, &nprocesses);
	int rc = totals ? 0 : -1;

	json_begin_array(ctx->json, "stacks");
	for (size_t i = 0; rc == 0 && i < nprocesses && i < TOP_PROCESSES; i++)
		rc = print_process(ctx, &totals[i]);
	json_end_array(ctx->json);
	free(totals);
	return rc;
}

int report_section_stacks(const struct report_context *ctx)
{
	size_t nprocesses = 0;
	struct process_total *totals;
	int rc;

	if (ctx->json)
		return 0;             /* part of "cpu" */
	totals = process_totals(ctx->sel, &nprocesses);
	rc = totals ? 0 : -1;
	fprintf(ctx->out, "\nTop stacks (top %d processes, %d stacks each, innermost frame first)\n",
		TOP_PROCESSES, TOP_STACKS);
	if (ctx->samples == 0)
		fprintf(ctx->out, "  (no samples)\n");
	for (size_t i = 0; rc == 0 && i < nprocesses && i < TOP_PROCESSES; i++)
		rc = print_process(ctx, &totals[i]);
	free(totals);
	return rc;
}
