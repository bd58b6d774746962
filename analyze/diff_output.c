/* diff_output.c - the three outputs of diff: a text report for people,
 * the JSON document of docs/diff-json.md (for the HTML page and for
 * scripts), and folded pairs ("stack base new") for differential flame
 * graphs. All three print the same diff_result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "fmt.h"
#include "json_writer.h"

#define HIST_MAX 12           /* latency histograms in the JSON */

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

static void text_changed_functions(const struct diff_result *res, FILE *out, int appeared)
{
	int shown = 0, total = 0;

	for (size_t i = 0; i < res->nfindings; i++) {
		const struct diff_finding *f = &res->findings[i];

		if (strcmp(f->kind, "function_total") != 0 ||
		    !(appeared ? f->appeared : f->disappeared))
			continue;
		if (total++ == 0)
			fprintf(out, "\n%s functions (on a stack of one side only):\n",
				appeared ? "APPEARED" : "DISAPPEARED");
		if (shown < 20) {
			fprintf(out, "  %-50s %llu samples%s\n", f->name,
				(unsigned long long)(appeared ? f->count_new : f->count_base),
				f->significant ? " (significant)" : "");
			shown++;
		}
	}
	if (total > shown)
		fprintf(out, "  ... and %d more\n", total - shown);
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

/* ---- JSON ------------------------------------------------------------ */

static void json_runs(struct json_writer *w, const char *key, const struct diff_result *res,
		      int side)
{
	json_begin_object(w, key);
	json_uint(w, "runs", res->nruns[side]);
	json_double(w, "seconds", res->seconds[side]);
	json_uint(w, "requests", res->requests[side]);
	json_double(w, "exposure", res->exposure[side]);
	json_end_object(w);
}

static void json_pair_u64(struct json_writer *w, const char *key, const uint64_t v[2])
{
	json_begin_array(w, key);
	json_uint(w, NULL, v[0]);
	json_uint(w, NULL, v[1]);
	json_end_array(w);
}

static void json_finding(struct json_writer *w, const struct diff_finding *f)
{
	json_begin_object(w, NULL);
	if (f->significant)
		json_int(w, "rank", f->rank);
	else
		json_null(w, "rank");
	json_string(w, "kind", f->kind);
	json_string(w, "name", f->name);
	json_int(w, "tier", f->tier);
	json_string(w, "direction", f->delta > 0 ? "up" : f->delta < 0 ? "down" : "none");
	json_double(w, "effect", f->effect);
	json_double(w, "ci_low", f->ci_low);
	json_double(w, "ci_high", f->ci_high);
	json_double(w, "p_value", f->p_value);
	json_double(w, "q_value", f->q_value);
	json_bool(w, "significant", f->significant);
	json_string(w, "unit", f->unit);
	json_double(w, "base", f->base);
	json_double(w, "new", f->new_);
	json_double(w, "delta", f->delta);
	json_double(w, "impact_ns", f->impact);
	json_double(w, "noise_floor", isinf(f->noise_floor) ? NAN : f->noise_floor);
	json_string(w, "test", f->test);
	json_bool(w, "appeared", f->appeared);
	json_bool(w, "disappeared", f->disappeared);
	json_uint(w, "count_base", f->count_base);
	json_uint(w, "count_new", f->count_new);
	if (f->is_latency) {
		json_pair_u64(w, "p50_ns", f->p50);
		json_pair_u64(w, "p90_ns", f->p90);
		json_pair_u64(w, "p99_ns", f->p99);
		json_double(w, "p99_ratio", f->p99_ratio);
		json_double(w, "p99_ratio_ci_low", f->p99_lo);
		json_double(w, "p99_ratio_ci_high", isinf(f->p99_hi) ? NAN : f->p99_hi);
		json_double(w, "ks_d", f->ks_d);
		json_double(w, "auc", f->auc);
	}
	json_end_object(w);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void json_folded(struct json_writer *w, const struct diff_result *res)
{
	size_t n = res->folded[0].len + res->folded[1].len, len = 0;
	const char **keys = malloc((n + 1) * sizeof(*keys));

	json_begin_array(w, "folded_pairs");
	if (keys) {
		for (int side = 0; side < 2; side++)
			for (size_t i = 0; i < res->folded[side].len; i++) {
				const char *k = res->folded[side].rows[i].key;

				if (side == 0 || !diff_table_find(&res->folded[0], k))
					keys[len++] = k;
			}
		qsort(keys, len, sizeof(*keys), by_key);
		for (size_t i = 0; i < len; i++) {
			const struct dseries *a = diff_table_find(&res->folded[0], keys[i]);
			const struct dseries *b = diff_table_find(&res->folded[1], keys[i]);

			json_begin_object(w, NULL);
			json_string(w, "stack", keys[i]);
			json_uint(w, "base", a ? a->count : 0);
			json_uint(w, "new", b ? b->count : 0);
			json_end_object(w);
		}
	}
	json_end_array(w);
	free(keys);
}

/* Power-of-two buckets covering both sides: le_ns 2^k, counts. */
static void json_histogram(struct json_writer *w, const char *name, const struct dseries *a,
			   const struct dseries *b)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t ia = 0, ib = 0;

	for (int s = 0; s < 2; s++) {
		const struct dseries *d = s ? b : a;

		if (d && d->n) {
			lo = d->vals[0] < lo ? d->vals[0] : lo;
			hi = d->vals[d->n - 1] > hi ? d->vals[d->n - 1] : hi;
		}
	}
	json_begin_object(w, NULL);
	json_string(w, "name", name);
	json_string(w, "unit", "ns");
	json_begin_array(w, "buckets");
	if (hi > 0 || lo == 0) {
		int k = 0;

		while (k < 63 && (1ull << (k + 1)) <= lo)
			k++;
		for (; k < 64; k++) {
			uint64_t le = k == 63 ? UINT64_MAX : (1ull << k);
			uint64_t ca = 0, cb = 0;

			while (a && ia < a->n && a->vals[ia] <= le) {
				ia++;
				ca++;
			}
			while (b && ib < b->n && b->vals[ib] <= le) {
				ib++;
				cb++;
			}
			json_begin_object(w, NULL);
			json_uint(w, "le_ns", le);
			json_uint(w, "base", ca);
			json_uint(w, "new", cb);
			json_end_object(w);
			if (le >= hi)
				break;
		}
	}
	json_end_array(w);
	json_end_object(w);
}

static void json_histograms(struct json_writer *w, const struct diff_result *res)
{
	int shown = 0;

	json_begin_array(w, "histograms");
	for (size_t i = 0; i < res->nfindings && shown < HIST_MAX; i++) {
		const struct diff_finding *f = &res->findings[i];
		char key[600];

		if (!f->is_latency || !(f->significant || strcmp(f->kind, "request") == 0))
			continue;
		snprintf(key, sizeof(key), "%s:%s", f->kind, f->name);
		json_histogram(w, key, diff_table_find(&res->hist[0], key),
			       diff_table_find(&res->hist[1], key));
		shown++;
	}
	json_end_array(w);
}

int diff_json(const struct diff_result *res, FILE *out, int pretty)
{
	struct json_writer w;
	size_t listed = 0;

	json_init(&w, out, pretty);
	json_begin_object(&w, NULL);
	json_string(&w, "kind", "diff");
	json_int(&w, "diff_version", 1);
	json_string(&w, "summary", res->summary);
	json_string(&w, "verdict", res->verdict);
	json_bool(&w, "conditional", res->conditional);
	json_begin_object(&w, "normalization");
	json_string(&w, "per", per_unit(res));
	json_string(&w, "cpu_time", "samples / sampling frequency, per unit of exposure");
	json_string(&w, "latency", "per call");
	json_string(&w, "threads", "share of each second, per comm");
	json_end_object(&w);
	json_begin_object(&w, "thresholds");
	json_double(&w, "alpha", res->opts.alpha);
	json_double(&w, "min_effect", res->opts.min_effect);
	json_double(&w, "min_impact_share", res->opts.min_impact_share);
	json_end_object(&w);
	json_runs(&w, "base", res, 0);
	json_runs(&w, "new", res, 1);
	json_uint(&w, "significant", res->nsignificant);
	json_begin_array(&w, "findings");
	for (size_t i = 0; i < res->nfindings; i++) {
		const struct diff_finding *f = &res->findings[i];

		if (!f->significant && !res->opts.all && listed >= res->nsignificant +
		    (size_t)res->opts.top)
			break;
		json_finding(&w, f);
		listed++;
	}
	json_end_array(&w);
	json_begin_array(&w, "appeared");
	for (size_t i = 0; i < res->nfindings; i++)
		if (res->findings[i].appeared && strcmp(res->findings[i].kind, "function_total") == 0)
			json_string(&w, NULL, res->findings[i].name);
	json_end_array(&w);
	json_begin_array(&w, "disappeared");
	for (size_t i = 0; i < res->nfindings; i++)
		if (res->findings[i].disappeared &&
		    strcmp(res->findings[i].kind, "function_total") == 0)
			json_string(&w, NULL, res->findings[i].name);
	json_end_array(&w);
	json_folded(&w, res);
	json_histograms(&w, res);
	json_begin_array(&w, "warnings");
	for (size_t i = 0; i < res->nwarnings; i++)
		json_string(&w, NULL, res->warnings[i]);
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
	return ferror(out) ? -1 : 0;
}

int diff_folded(const struct diff_result *res, FILE *out)
{
	size_t n = res->folded[0].len + res->folded[1].len, len = 0;
	const char **keys = malloc((n + 1) * sizeof(*keys));

	if (!keys)
		return -1;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < res->folded[side].len; i++) {
			const char *k = res->folded[side].rows[i].key;

			if (side == 0 || !diff_table_find(&res->folded[0], k))
				keys[len++] = k;
		}
	qsort(keys, len, sizeof(*keys), by_key);
	for (size_t i = 0; i < len; i++) {
		const struct dseries *a = diff_table_find(&res->folded[0], keys[i]);
		const struct dseries *b = diff_table_find(&res->folded[1], keys[i]);

		fprintf(out, "%s %llu %llu\n", keys[i], (unsigned long long)(a ? a->count : 0),
			(unsigned long long)(b ? b->count : 0));
	}
	free(keys);
	return ferror(out) ? -1 : 0;
}
