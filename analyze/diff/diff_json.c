/* diff_json.c - diff's machine outputs: the JSON document of
 * docs/diff-json.md (for scripts and the --html page) and folded pairs
 * ("stack base new") for differential flame graphs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/json_writer.h"

#define HIST_MAX 12           /* latency histograms in the JSON */

static const char *per_unit(const struct diff_result *res)
{
	return res->norm == DIFF_PER_REQUEST ? "request" : "second";
}

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

/* The stacks of either side, each once, sorted: a malloc'd array of
 * *len keys (owned by res), or NULL when out of memory. */
static const char **folded_union(const struct diff_result *res, size_t *len)
{
	size_t n = res->folded[0].len + res->folded[1].len;
	const char **keys = malloc((n + 1) * sizeof(*keys));

	*len = 0;
	if (!keys)
		return NULL;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < res->folded[side].len; i++) {
			const char *k = res->folded[side].rows[i].key;

			if (side == 0 || !diff_table_find(&res->folded[0], k))
				keys[(*len)++] = k;
		}
	if (*len > 1)
		qsort(keys, *len, sizeof(*keys), by_key);
	return keys;
}

static uint64_t folded_count(const struct diff_result *res, int side, const char *key)
{
	const struct dseries *s = diff_table_find(&res->folded[side], key);

	return s ? s->count : 0;
}

static void json_folded(struct json_writer *w, const struct diff_result *res)
{
	size_t len;
	const char **keys = folded_union(res, &len);

	json_begin_array(w, "folded_pairs");
	for (size_t i = 0; keys && i < len; i++) {
		json_begin_object(w, NULL);
		json_string(w, "stack", keys[i]);
		json_uint(w, "base", folded_count(res, 0, keys[i]));
		json_uint(w, "new", folded_count(res, 1, keys[i]));
		json_end_object(w);
	}
	json_end_array(w);
	free(keys);
}

/* Power-of-two buckets covering both sides: le_ns 2^k, counts. */
/* Log2 buckets from the smallest value's power of two to the largest's,
 * each counting the values above the previous bound up to its own. */
static void json_histogram(struct json_writer *w, const char *name,
			   const struct diff_finding *f)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int s = 0; s < 2; s++) {
		if (!(s ? f->count_new : f->count_base))
			continue;
		lo = f->hist_min[s] < lo ? f->hist_min[s] : lo;
		hi = f->hist_max[s] > hi ? f->hist_max[s] : hi;
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

			json_begin_object(w, NULL);
			json_uint(w, "le_ns", le);
			json_uint(w, "base", f->hist[0][k]);
			json_uint(w, "new", f->hist[1][k]);
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
		json_histogram(w, key, f);
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
	size_t len;
	const char **keys = folded_union(res, &len);

	if (!keys)
		return -1;
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%s %llu %llu\n", keys[i],
			(unsigned long long)folded_count(res, 0, keys[i]),
			(unsigned long long)folded_count(res, 1, keys[i]));
	free(keys);
	return ferror(out) ? -1 : 0;
}
