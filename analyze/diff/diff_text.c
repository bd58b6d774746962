/* diff_text.c - diff's text output, for people: how values were
 * normalized and judged, warnings, the verdict, the ranked significant
 * findings with their evidence, appeared and disappeared functions.
 * diff_json.c prints the same diff_result for machines. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/fmt.h"

static const char *per_unit(const struct diff_result *res)
{
	return res->norm == DIFF_PER_REQUEST ? "request" : "second";
}

/* A metric value in its unit, for text. */
static const char *fmt_value(char *buf, size_t len, const char *unit, double v)
{
	char tmp[FMT_BUF];

	if (isnan(v)) {
		snprintf(buf, len, "-");
	} else if (strcmp(unit, "share") == 0) {
		snprintf(buf, len, "%.1f%%", 100 * v);
	} else if (strcmp(unit, "events/s") == 0) {
		snprintf(buf, len, "%.1f/s", v);
	} else if (strcmp(unit, "events/request") == 0) {
		snprintf(buf, len, "%.2f/request", v);
	} else {
		snprintf(buf, len, "%s%s", v < 0 ? "-" : "",
			 fmt_duration_ns(tmp, sizeof(tmp), (uint64_t)fabs(v)));
	}
	return buf;
}

static const char *fmt_effect(char *buf, size_t len, const struct diff_finding *f)
{
	if (f->appeared)
		snprintf(buf, len, "appeared");
	else if (isnan(f->effect))
		snprintf(buf, len, "-");
	else if (isnan(f->ci_low) || isinf(f->ci_high))
		snprintf(buf, len, "%+.1f%%", 100 * f->effect);
	else
		snprintf(buf, len, "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * f->effect,
			 100 * f->ci_low, 100 * f->ci_high);
	return buf;
}

static void text_header(const struct diff_result *res, FILE *out)
{
	char a[FMT_BUF], b[FMT_BUF];

	fprintf(out, "perfcap-analyze diff: base %zu run%s (%.2f s, %s requests) vs new %zu "
		"run%s (%.2f s, %s requests)\n", res->nruns[0], res->nruns[0] > 1 ? "s" : "",
		res->seconds[0], fmt_count(a, sizeof(a), res->requests[0]), res->nruns[1],
		res->nruns[1] > 1 ? "s" : "", res->seconds[1],
		fmt_count(b, sizeof(b), res->requests[1]));
	fprintf(out, "Normalized per %s: CPU time = samples / sampling frequency, divided by "
		"%s; latencies per call; thread time as shares of each second.\n",
		per_unit(res), res->norm == DIFF_PER_REQUEST ? "the requests of each side"
		: "the capture duration of each side");
	fprintf(out, "Significant = Benjamini-Hochberg q < %g, |effect| >= %.0f%% and above "
		"its noise floor, 95%% interval excluding 0, impact >= %.0f%% of %s.\n",
		res->opts.alpha, 100 * res->opts.min_effect, 100 * res->opts.min_impact_share,
		res->norm == DIFF_PER_REQUEST ? "the base's mean request latency" : "a second");
}

static void text_finding(const struct diff_result *res, const struct diff_finding *f,
			 FILE *out)
{
	char base[FMT_BUF], new_[FMT_BUF], impact[FMT_BUF], effect[96];

	size_t len = strlen(f->name);

	if (len > 110)   /* long stacks: the innermost end is what differs */
		fprintf(out, "%3d  %-14s ...%s\n", f->rank, f->kind, f->name + len - 107);
	else
		fprintf(out, "%3d  %-14s %s\n", f->rank, f->kind, f->name);
	fprintf(out, "     %s -> %s %s, effect %s, %s%s per %s, q %.2g (%s)\n",
		fmt_value(base, sizeof(base), f->unit, f->base),
		fmt_value(new_, sizeof(new_), f->unit, f->new_),
		f->is_latency ? "p50 per call" : strcmp(f->unit, "share") == 0 ? "of each second"
		: strncmp(f->unit, "events", 6) == 0 ? "events" : "CPU",
		fmt_effect(effect, sizeof(effect), f), f->impact < 0 ? "" : "+",
		fmt_value(impact, sizeof(impact), "ns", f->impact), per_unit(res),
		f->q_value, f->test);
	if (!isinf(f->noise_floor) && !isnan(f->noise_floor))
		fprintf(out, "     noise floor %.1f%% (smallest change these counts could show)\n",
			100 * f->noise_floor);
	if (f->is_latency) {
		char p[6][FMT_BUF];

		fprintf(out, "     calls %llu -> %llu; p50 %s -> %s, p90 %s -> %s, p99 %s -> %s",
			(unsigned long long)f->count_base, (unsigned long long)f->count_new,
			fmt_duration_ns(p[0], FMT_BUF, f->p50[0]),
			fmt_duration_ns(p[1], FMT_BUF, f->p50[1]),
			fmt_duration_ns(p[2], FMT_BUF, f->p90[0]),
			fmt_duration_ns(p[3], FMT_BUF, f->p90[1]),
			fmt_duration_ns(p[4], FMT_BUF, f->p99[0]),
			fmt_duration_ns(p[5], FMT_BUF, f->p99[1]));
		if (!isnan(f->p99_ratio))
			fprintf(out, " (x%.2f [%.2f, %.2f])", f->p99_ratio, f->p99_lo, f->p99_hi);
		fprintf(out, "; KS D %.2f\n", f->ks_d);
	}
}

static uint64_t side_count(const struct diff_finding *f)
{
	return f->appeared ? f->count_new : f->count_base;
}

static int by_count(const void *x, const void *y)
{
	const struct diff_finding *a = *(const struct diff_finding *const *)x;
	const struct diff_finding *b = *(const struct diff_finding *const *)y;

	if (side_count(a) != side_count(b))
		return side_count(a) > side_count(b) ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The functions found on one side only, most samples first. */
static void text_changed_functions(const struct diff_result *res, FILE *out, int appeared)
{
	const struct diff_finding **list = malloc((res->nfindings + 1) * sizeof(*list));
	size_t n = 0;

	if (!list)
		return;
	for (size_t i = 0; i < res->nfindings; i++) {
		const struct diff_finding *f = &res->findings[i];

		if (strcmp(f->kind, "function_total") == 0 &&
		    (appeared ? f->appeared : f->disappeared))
			list[n++] = f;
	}
	qsort(list, n, sizeof(*list), by_count);
	if (n)
		fprintf(out, "\n%s functions (on a stack of one side only), %zu:\n",
			appeared ? "APPEARED" : "DISAPPEARED", n);
	for (size_t i = 0; i < n && i < 20; i++)
		fprintf(out, "  %-50s %llu samples%s\n", list[i]->name,
			(unsigned long long)side_count(list[i]),
			list[i]->significant ? " (significant)" : "");
	if (n > 20)
		fprintf(out, "  ... and %zu more\n", n - 20);
	free(list);
}

int diff_text(const struct diff_result *res, FILE *out)
{
	size_t listed = 0;

	text_header(res, out);
	if (res->nwarnings) {
		fprintf(out, "\nWARNINGS%s\n", res->conditional ? " (comparison is conditional)" : "");
		for (size_t i = 0; i < res->nwarnings; i++)
			fprintf(out, "  - %s\n", res->warnings[i]);
	}
	fprintf(out, "\nVERDICT: %s\n%s\n", res->verdict, res->summary);
	if (res->nsignificant)
		fprintf(out, "\nSIGNIFICANT FINDINGS, ranked (tier 1: functions, system calls, "
			"locks by time added per %s; then context):\n", per_unit(res));
	for (size_t i = 0; i < res->nfindings && listed < (size_t)res->opts.top; i++) {
		const struct diff_finding *f = &res->findings[i];

		if (!f->significant && !res->opts.all)
			break;
		if (!f->significant && i == res->nsignificant)
			fprintf(out, "\nNOT SIGNIFICANT (smallest q first):\n");
		text_finding(res, f, out);
		listed++;
	}
	if (res->nfindings > res->nsignificant)
		fprintf(out, "\n%zu other comparison%s not significant%s.\n",
			res->nfindings - res->nsignificant,
			res->nfindings - res->nsignificant > 1 ? "s" : "",
			res->opts.all ? "" : " (--all lists them)");
	text_changed_functions(res, out, 1);
	text_changed_functions(res, out, 0);
	return ferror(out) ? -1 : 0;
}

