/* diff_warnings.c - whether the two sides were recorded alike: kernel,
 * eBPF programs, filters, sampling, data quality, host steal, missed
 * sampling ticks, request load, damage. A difference is
 * a warning and makes the comparison conditional. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "query/host_cpu.h"

void warn(struct builder *b, int conditional, const char *fmt, ...)
{
	struct diff_result *res = b->res;
	char **w = realloc(res->warnings, (res->nwarnings + 1) * sizeof(*w));
	char text[1024];
	va_list ap;

	if (!w) {
		b->oom = 1;
		return;
	}
	res->warnings = w;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	res->warnings[res->nwarnings] = strdup(text);
	if (!res->warnings[res->nwarnings]) {
		b->oom = 1;
		return;
	}
	res->nwarnings++;
	if (conditional)
		res->conditional = 1;
}

/* A META-derived setting that should be equal on every run. */
static void check_same(struct builder *b, const char *what, size_t field_offset)
{
	const struct diff_run *ref = &b->s[0].runs[0];
	const char *a = *(char *const *)((const char *)ref + field_offset);

	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct diff_run *r = &b->s[side].runs[i];
			const char *v = *(char *const *)((const char *)r + field_offset);

			if (strcmp(a, v) != 0) {
				warn(b, 1, "%s differ: %s has '%s', %s has '%s'; the comparison is "
				     "conditional", what, ref->path, a, r->path, v);
				return;
			}
		}
}

static double side_max(const struct side *s, size_t field_offset)
{
	double m = 0;

	for (size_t i = 0; i < s->n; i++) {
		double v = *(const double *)((const char *)&s->runs[i] + field_offset);

		if (v > m)
			m = v;
	}
	return m;
}

/* Two shares differ materially: hi above floor, more than gap above lo
 * (all fractions), and more than twice lo. */
static int materially_above(double hi, double lo, double floor, double gap)
{
	return hi > floor && hi - lo > gap && hi > 2 * lo;
}

/* Data quality differs materially (materially_above) between the sides'
 * worst runs. */
static void check_quality(struct builder *b, const char *what, size_t field_offset,
			  double floor, double gap)
{
	double a = side_max(&b->s[0], field_offset), c = side_max(&b->s[1], field_offset);
	double hi = a > c ? a : c, lo = a > c ? c : a;

	if (materially_above(hi, lo, floor, gap))
		warn(b, 1, "%s differs: %.2f%% (base) vs %.2f%% (new); the comparison is "
		     "conditional", what, 100 * a, 100 * c);
}

/* Each side's highest and lowest share (a double of struct diff_run at
 * field_offset, NAN when not recorded): 0 when a run has none. */
static int share_ranges(const struct builder *b, size_t field_offset, double hi[2], double lo[2])
{
	for (int side = 0; side < 2; side++) {
		hi[side] = 0;
		lo[side] = 1;
		for (size_t i = 0; i < b->s[side].n; i++) {
			double v = *(const double *)((const char *)&b->s[side].runs[i] + field_offset);

			if (isnan(v))
				return 0;
			hi[side] = fmax(hi[side], v);
			lo[side] = fmin(lo[side], v);
		}
	}
	return 1;
}

/* The host gave a materially different share of its CPU time to other
 * guests (steal) on one side: identical code then takes more CPU time
 * per request there, which no test of this diff can tell from a slower
 * program. Compared only when every run has it measured: one side's
 * highest materially above the other's lowest, from the share the
 * diagnosis notes (HOST_CPU_STEAL_NOTABLE), that far apart. */
static void check_steal(struct builder *b)
{
	double hi[2], lo[2];

	if (!share_ranges(b, offsetof(struct diff_run, stolen_share), hi, lo))
		return;
	for (int side = 0; side < 2; side++) {
		double top = hi[side], other = lo[!side];

		if (materially_above(top, other, HOST_CPU_STEAL_NOTABLE, HOST_CPU_STEAL_NOTABLE)) {
			warn(b, 1, "the hypervisor took %.0f%% of the CPU time the host had work for"
			     " on the %s side against %.0f%% on the %s (steal): CPU time per unit"
			     " there includes it, and a slower host looks like a slower program;"
			     " the comparison is conditional", 100 * top, side ? "new" : "base",
			     100 * other, side ? "base" : "new");
			return;
		}
	}
}

/* CPU time comes from samples, one per tick of each CPU's sampling
 * clock; a tick the kernel did not run the sampler at takes no sample of
 * what ran (on a virtual machine, most likely the host not running the
 * virtual CPU when the timer was due: its clock goes on). With a share m
 * of the busy ticks missed, CPU times there are short by m on average
 * (the misses need not fall evenly: a redis run that missed 22% of them
 * lost 58% of redis's samples). When the sides' shares move CPU times
 * apart by more than the smallest effect the diff counts (--min-effect),
 * a CPU change of that size may be the sampling's: said, and the
 * comparison is conditional. Compared only when every run has the counts
 * (older captures have none). */
static void check_missed_ticks(struct builder *b)
{
	double worst[2], best[2];

	if (!share_ranges(b, offsetof(struct diff_run, missed_ticks), worst, best))
		return;
	for (int side = 0; side < 2; side++) {
		double hi = worst[side], lo = best[!side];

		if (hi < 1 && (1 - lo) / (1 - hi) - 1 > b->res->opts.min_effect) {
			warn(b, 1, "%.0f%% of the CPU sampling ticks did not run on the %s side against"
			     " %.0f%% on the %s (STATS cpu.ticks.missed: a virtual CPU the host did not"
			     " run, most likely): CPU times there are short, and a host that ran it"
			     " less looks like a faster program; the comparison is conditional",
			     100 * hi, side ? "new" : "base", 100 * lo, side ? "base" : "new");
			return;
		}
	}
}

/* Per request, a program's costs depend on its load: an event loop
 * serving fewer requests at a time makes more epoll calls, wakeups and
 * context switches for each. When the sides served requests at rates that
 * differ by more than the smallest effect the diff counts (--min-effect),
 * a per-request change of that size may be the load's, not the program's:
 * said, and the comparison is conditional. */
static void check_load(struct builder *b)
{
	const struct diff_result *res = b->res;
	double rate[2], hi, lo;

	if (res->norm != DIFF_PER_REQUEST || res->seconds[0] <= 0 || res->seconds[1] <= 0)
		return;
	for (int side = 0; side < 2; side++)
		rate[side] = (double)res->requests[side] / res->seconds[side];
	hi = fmax(rate[0], rate[1]);
	lo = fmin(rate[0], rate[1]);
	if (lo > 0 && hi / lo - 1 > res->opts.min_effect)
		warn(b, 1, "the sides served requests at different rates: %.0f/s (base) vs %.0f/s"
		     " (new), %.0f%% apart; costs per request depend on the load (batching,"
		     " polling), so changes per request may be the load's, not the program's;"
		     " the comparison is conditional", rate[0], rate[1], 100 * (hi / lo - 1));
}

void check_sides(struct builder *b)
{
	check_same(b, "kernels", offsetof(struct diff_run, kernel));
	check_same(b, "eBPF program hashes", offsetof(struct diff_run, hashes));
	check_same(b, "filters or sources", offsetof(struct diff_run, filters));
	check_same(b, "sampling settings", offsetof(struct diff_run, sampling));
	/* losses matter from 0.1%; unmatched events and unresolved frames are
	 * normal at a few tenths of a percent and matter from 1% */
	check_quality(b, "event loss rate", offsetof(struct diff_run, loss_rate), 0.001, 0.005);
	check_quality(b, "unmatched event rate", offsetof(struct diff_run, unmatched_rate),
		      0.01, 0.01);
	check_quality(b, "symbol-miss rate", offsetof(struct diff_run, symbol_miss_rate),
		      0.01, 0.01);
	check_steal(b);
	check_missed_ticks(b);
	check_load(b);
	if (strcmp(b->s[0].runs[0].command, b->s[1].runs[0].command) != 0)
		warn(b, 0, "the recorded commands differ: '%s' vs '%s'",
		     b->s[0].runs[0].command, b->s[1].runs[0].command);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			if (b->s[side].runs[i].damage[0])
				warn(b, 1, "%s is damaged (%s): only its intact chunks were compared",
				     b->s[side].runs[i].path, b->s[side].runs[i].damage);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			if (b->s[side].runs[i].seconds <= 0)
				warn(b, 1, "%s: duration unknown; per-second values are not "
				     "meaningful", b->s[side].runs[i].path);
}

