/* diagnose_cpu.c - "cpu_bound" (book 12.3): the function that is the
 * innermost frame (kernel frames above user frames) of the largest share
 * of the scope's CPU samples. Its key number is that share; its score is
 * the CPU time it accounts for (samples / frequency) over the observed
 * time of the threads it ran in, so a thread spinning in one function
 * scores close to 1 and a function run one thread at a time by a convoy
 * of workers scores less than the lock they queue on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"
#include "util/fmt.h"
#include "util/text.h"

#define MIN_SAMPLES 20        /* fewer: no claim (and a caveat) */
#define MIN_SCORE   0.05

static int64_t leaf_of(const struct diag_input *in, const struct selected_group *g)
{
	uint32_t klen, ulen;
	const uint32_t *k = callchains_get(in->cc, g->kstack, &klen);
	const uint32_t *u = callchains_get(in->cc, g->ustack, &ulen);

	if (klen > 0)
		return k[0];
	return ulen > 0 ? (int64_t)u[0] : -1;
}

static int64_t top_function(const struct diag_input *in, uint64_t *counts, uint64_t *self)
{
	int64_t best = -1;

	for (size_t i = 0; i < in->sel->len; i++) {
		int64_t fn = leaf_of(in, &in->sel->groups[i]);
		if (fn >= 0)
			counts[fn] += in->sel->groups[i].count;
	}
	for (uint32_t fn = 0; fn < in->cc->nfunctions; fn++)
		if (counts[fn] > 0 && (best < 0 || counts[fn] > counts[best]))
			best = fn;
	*self = best >= 0 ? counts[best] : 0;
	return best;
}

/* The threads whose samples were in fn: their observed time, and the
 * thread with most of those samples. */
static uint64_t threads_of(const struct diag_input *in, int64_t fn, uint32_t *top_pid,
			   uint32_t *top_tid, int *nthreads)
{
	uint64_t *per_thread = calloc(in->nthreads + 1, sizeof(*per_thread));
	uint64_t observed = 0, best = 0;

	*nthreads = 0;
	if (!per_thread)
		return 0;
	for (size_t i = 0; i < in->sel->len; i++) {
		const struct selected_group *g = &in->sel->groups[i];
		uint64_t *slot = hmap_find(&in->thread_by_tid, g->tid, 0);
		if (slot && leaf_of(in, g) == fn)
			per_thread[*slot] += g->count;
	}
	for (size_t t = 0; t < in->nthreads; t++) {
		if (per_thread[t] == 0)
			continue;
		observed += in->threads[t].observed;
		(*nthreads)++;
		if (per_thread[t] > best) {
			best = per_thread[t];
			*top_pid = in->threads[t].pid;
			*top_tid = in->threads[t].tid;
		}
	}
	free(per_thread);
	return observed;
}

/* The callers of fn in its most frequent stack, innermost first. */
static void add_call_path(const struct diag_input *in, struct diag_cause *c, int64_t fn)
{
	const struct selected_group *best = NULL;
	char path[DIAG_TEXT] = "";
	size_t used = 0;

	for (size_t i = 0; i < in->sel->len; i++)
		if (leaf_of(in, &in->sel->groups[i]) == fn &&
		    (!best || in->sel->groups[i].count > best->count))
			best = &in->sel->groups[i];
	if (!best)
		return;
	for (int part = 0; part < 2; part++) {
		uint32_t len;
		const uint32_t *fns = callchains_get(in->cc, part ? best->ustack : best->kstack, &len);
		for (uint32_t i = 0; i < len && used < sizeof(path) - 1; i++) {
			if (fns[i] == (uint32_t)fn)
				continue;
			used += (size_t)snprintf(path + used, sizeof(path) - used, "%s%s",
						 used ? " <- " : "", in->cc->functions[fns[i]].name);
		}
	}
	if (used > 0)
		diag_evidence(c, "its most frequent stack (%llu samples): %s <- %s",
			      (unsigned long long)best->count, in->cc->functions[fn].name, path);
}

static void add_runners_up(const struct diag_input *in, struct diag_cause *c,
			   uint64_t *counts, int64_t best)
{
	int64_t second = -1;
	char pct[FMT_BUF];

	for (uint32_t fn = 0; fn < in->cc->nfunctions; fn++)
		if (fn != best && counts[fn] > 0 && (second < 0 || counts[fn] > counts[second]))
			second = fn;
	if (second >= 0)
		diag_evidence(c, "next function: %s with %s of the samples",
			      in->cc->functions[second].name,
			      fmt_percent(pct, sizeof(pct), counts[second], in->samples));
}

static void describe(const struct diag_input *in, struct diag_cause *c, int64_t fn,
		     uint64_t self, uint64_t observed, int nthreads, uint32_t pid, uint32_t tid)
{
	const struct function *f = &in->cc->functions[fn];
	char pct[FMT_BUF], n[FMT_BUF], all[FMT_BUF], cpu[FMT_BUF], obs[FMT_BUF];
	char comm[64], label[256];

	snprintf(c->title, sizeof(c->title), "compute-bound in %s: %s of CPU samples",
		 f->name, fmt_percent(pct, sizeof(pct), self, in->samples));
	diag_text(&c->subject, "function", f->name);
	diag_text(&c->subject, "module", f->module);
	diag_int(&c->subject, "pid", pid);
	diag_int(&c->subject, "tid", tid);
	diag_text(&c->subject, "comm", diag_comm(in, pid, tid, comm, sizeof(comm)));
	diag_int(&c->subject, "samples", (int64_t)self);
	diag_int(&c->subject, "threads", nthreads);
	diag_evidence(c, "%s %s: innermost frame of %s of %s CPU samples (%s)", f->name,
		      text_module_label(label, sizeof(label), f->module),
		      fmt_count(n, sizeof(n), self), fmt_count(all, sizeof(all), in->samples),
		      pct);
	if (in->freq_hz > 0)
		diag_evidence(c, "about %s of CPU at %g Hz, over %s observed in %d thread(s);"
			      " most in tid %u (%s)",
			      fmt_seconds(cpu, sizeof(cpu), (double)self / in->freq_hz),
			      in->freq_hz, fmt_duration_ns(obs, sizeof(obs), observed), nthreads,
			      tid, comm);
}

int diagnose_cpu_bound(const struct diag_input *in, struct diagnosis *d)
{
	uint64_t *counts, self = 0, observed;
	uint32_t pid = 0, tid = 0;
	int64_t fn;
	int nthreads;
	struct diag_cause *c;
	double score;

	if (in->samples == 0)
		return 0;
	if (in->samples < MIN_SAMPLES) {
		diag_caveat(d, "only %llu CPU samples in scope: no CPU verdict",
			    (unsigned long long)in->samples);
		return 0;
	}
	counts = calloc((size_t)in->cc->nfunctions + 1, sizeof(*counts));
	if (!counts)
		return -1;
	fn = top_function(in, counts, &self);
	observed = fn >= 0 ? threads_of(in, fn, &pid, &tid, &nthreads) : 0;
	score = (double)self / (double)in->samples;
	if (in->freq_hz > 0 && observed > 0)
		score = (double)self / in->freq_hz * 1e9 / (double)observed;
	if (score > 1)
		score = 1;
	if (in->freq_hz > 0 && !diag_material(in, (uint64_t)((double)self / in->freq_hz * 1e9)))
		score = 0;
	if (fn >= 0 && score >= MIN_SCORE && (c = diag_add_cause(d, "cpu_bound"))) {
		c->score = score;
		c->key_name = "self_share";
		c->key_value = 100.0 * (double)self / (double)in->samples;
		c->key_unit = "percent";
		c->sources = "cpu";
		describe(in, c, fn, self, observed, nthreads, pid, tid);
		add_call_path(in, c, fn);
		add_runners_up(in, c, counts, fn);
	}
	free(counts);
	return 0;
}
