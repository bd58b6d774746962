/* diff_compare.c - turns two sides (lists of runs) into findings: for
 * every series a test fit for its data, an effect size with a 95%
 * interval, a noise floor and an impact (time added per request or per
 * second), Benjamini-Hochberg across all tests, then ranking. Warnings
 * say when the sides were not recorded alike (see docs/perfcap-analyze.md,
 * DIFF). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "fmt.h"
#include "stats.h"

#define MIN_REQUESTS 20      /* per run, to normalize per request */

struct side {
	const struct diff_run *runs;
	size_t n;
	double exposure;          /* requests or seconds */
	double cpu_exposure;      /* sum of exposure * freq: samples per unit */
};

struct builder {
	struct diff_result *res;
	struct side s[2];
	size_t cap;
	int oom;
};

static double run_exposure(const struct diff_run *r, enum diff_norm norm)
{
	return norm == DIFF_PER_REQUEST ? (double)r->requests : r->seconds;
}

static double run_freq(const struct diff_run *r)
{
	return r->freq_hz > 0 ? r->freq_hz : 1.0;
}

static struct diff_finding *new_finding(struct builder *b, const char *kind,
					const char *name, int tier, const char *unit)
{
	struct diff_result *res = b->res;
	struct diff_finding *f;

	if (res->nfindings == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct diff_finding *fs = realloc(res->findings, cap * sizeof(*fs));

		if (!fs) {
			b->oom = 1;
			return NULL;
		}
		res->findings = fs;
		b->cap = cap;
	}
	f = &res->findings[res->nfindings];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name) {
		b->oom = 1;
		return NULL;
	}
	res->nfindings++;
	f->kind = kind;
	f->tier = tier;
	f->unit = unit;
	f->effect = f->ci_low = f->ci_high = NAN;
	f->p_value = 1.0;
	return f;
}

/* Relative effect and interval from a difference of means with its
 * interval, relative to the base mean. */
static void relative(struct diff_finding *f, double base, double diff, double lo, double hi)
{
	if (base > 0) {
		f->effect = diff / base;
		f->ci_low = lo / base;
		f->ci_high = hi / base;
	}
}

/* ---- counts: CPU samples per function or stack ------------------------ */

/* Compares the series named keys[0] on the base side with keys[1] on the
 * new side (the same name, or a function with and without its source
 * file), reported under the name display. */
static void compare_counts(struct builder *b, const char *kind, int tier,
			   size_t table_offset, const char *const keys[2], const char *display)
{
	enum diff_norm norm = b->res->norm;
	uint64_t c[2] = { 0, 0 };
	double perrun[2][64];
	size_t nper[2] = { 0, 0 };
	struct diff_finding *f;

	for (int side = 0; side < 2; side++) {
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct diff_run *r = &b->s[side].runs[i];
			const struct dtable *t = (const struct dtable *)((const char *)r + table_offset);
			const struct dseries *row = diff_table_find(t, keys[side]);
			uint64_t n = row ? row->count : 0;
			double e = run_exposure(r, norm) * run_freq(r);

			c[side] += n;
			if (nper[side] < 64 && e > 0)
				perrun[side][nper[side]++] = (double)n / e * 1e9;
		}
	}
	f = new_finding(b, kind, display, tier, norm == DIFF_PER_REQUEST ? "ns/request" : "ns/s");
	if (!f)
		return;
	f->base = b->s[0].cpu_exposure > 0 ? (double)c[0] / b->s[0].cpu_exposure * 1e9 : 0;
	f->new_ = b->s[1].cpu_exposure > 0 ? (double)c[1] / b->s[1].cpu_exposure * 1e9 : 0;
	f->delta = f->new_ - f->base;
	f->impact = f->delta;
	f->count_base = c[0];
	f->count_new = c[1];
	f->appeared = c[0] == 0 && c[1] > 0;
	f->disappeared = c[0] > 0 && c[1] == 0;
	if (nper[0] >= 2 && nper[1] >= 2) {
		double diff, lo, hi, mean = 0;

		for (size_t i = 0; i < nper[0]; i++)
			mean += perrun[0][i] / (double)nper[0];
		f->p_value = stats_welch(perrun[0], nper[0], perrun[1], nper[1], &diff, &lo, &hi);
		relative(f, mean, diff, lo, hi);
		f->noise_floor = mean > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / mean : INFINITY;
		f->test = "Welch t on per-run rates";
	} else {
		double ratio, lo, hi;

		f->p_value = stats_rate_ratio(c[0], b->s[0].cpu_exposure, c[1],
					      b->s[1].cpu_exposure, &ratio, &lo, &hi);
		if (c[0] > 0) {
			f->effect = ratio - 1;
			f->ci_low = lo - 1;
			f->ci_high = hi - 1;
		}
		f->noise_floor = stats_rate_noise_floor(c[0], c[1]);
		f->test = "Poisson rate ratio (conditional binomial z)";
	}
}

/* The keys of a table over a side's runs. */
static void side_keys(struct builder *b, int side, size_t table_offset, struct dtable *keys)
{
	for (size_t i = 0; i < b->s[side].n; i++) {
		const struct dtable *t = (const struct dtable *)
			((const char *)&b->s[side].runs[i] + table_offset);

		for (size_t k = 0; k < t->len; k++)
			if (!diff_table_get(keys, t->rows[k].key))
				b->oom = 1;
	}
}

/* Keys of t that are name with a source file: "name (file.c)". Sets
 * *first to one of them. */
static int keys_with_file(const struct dtable *t, const char *name, size_t len,
			  const char **first)
{
	int n = 0;

	for (size_t k = 0; k < t->len; k++) {
		const char *o = t->rows[k].key;

		if (strncmp(o, name, len) == 0 && strncmp(o + len, " (", 2) == 0 &&
		    o[strlen(o) - 1] == ')') {
			*first = o;
			n++;
		}
	}
	return n;
}

/* A function known with its source file on one side only ("f (a.c)"
 * against "f": one build had debug info, the other not) is the same
 * function when the name is unambiguous: one "f (file)" on the side with
 * files, and the bare "f" absent from it. Returns the matching key of
 * other, or NULL. */
static const char *same_function(const char *key, const struct dtable *mine,
				 const struct dtable *other)
{
	const char *paren = strstr(key, " ("), *match = NULL;
	size_t len = strlen(key);

	if (len >= 4 && strcmp(key + len - 4, " [k]") == 0)
		return NULL;   /* kernel functions have no file */
	if (paren && key[len - 1] == ')') {
		size_t n = (size_t)(paren - key);
		const struct dseries *bare;
		char name[512];

		if (n >= sizeof(name))
			return NULL;
		memcpy(name, key, n);
		name[n] = '\0';
		bare = diff_table_find(other, name);
		if (!bare || diff_table_find(mine, name) ||
		    keys_with_file(mine, name, n, &match) != 1 ||
		    keys_with_file(other, name, n, &match) != 0)
			return NULL;
		return bare->key;
	}
	if (diff_table_find(other, key) || keys_with_file(mine, key, len, &match) != 0 ||
	    keys_with_file(other, key, len, &match) != 1)
		return NULL;
	return match;
}

static void compare_count_table(struct builder *b, const char *kind, int tier,
				size_t table_offset, int by_function)
{
	struct dtable keys[2], done;

	diff_table_init(&keys[0]);
	diff_table_init(&keys[1]);
	diff_table_init(&done);
	side_keys(b, 0, table_offset, &keys[0]);
	side_keys(b, 1, table_offset, &keys[1]);
	for (int side = 0; side < 2 && !b->oom; side++)
		for (size_t k = 0; k < keys[side].len && !b->oom; k++) {
			const char *key = keys[side].rows[k].key, *pair[2], *alias = NULL;

			if (diff_table_find(&done, key))
				continue;
			if (by_function && !diff_table_find(&keys[!side], key))
				alias = same_function(key, &keys[side], &keys[!side]);
			pair[side] = key;
			pair[!side] = alias ? alias : key;
			/* report under the name that has the file */
			compare_counts(b, kind, tier, table_offset, pair,
				       alias && strlen(alias) > strlen(key) ? alias : key);
			if (!diff_table_get(&done, key) || (alias && !diff_table_get(&done, alias)))
				b->oom = 1;
		}
	diff_table_free(&keys[0]);
	diff_table_free(&keys[1]);
	diff_table_free(&done);
}

/* ---- latency distributions ------------------------------------------ */

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Pools a series over a side's runs into hist (sorted). Per-run medians
 * into medians, the sum of all values into total_ns. */
static struct dseries *pool_side(struct builder *b, int side, const char *key,
				 double *medians, size_t *nmedians, double *total_ns)
{
	struct dseries *pool = diff_table_get(&b->res->hist[side], key);

	*nmedians = 0;
	*total_ns = 0;
	if (!pool) {
		b->oom = 1;
		return NULL;
	}
	for (size_t i = 0; i < b->s[side].n; i++) {
		const struct dseries *row = diff_table_find(&b->s[side].runs[i].latency, key);

		if (!row)
			continue;
		for (size_t k = 0; k < row->n; k++)
			if (diff_series_push(pool, row->vals[k]) < 0) {
				b->oom = 1;
				return NULL;
			}
		*total_ns += row->sum;
		if (row->n && *nmedians < 64)
			medians[(*nmedians)++] = (double)stats_quantile(row->vals, row->n, 0.5);
	}
	if (pool->n > 1)
		qsort(pool->vals, pool->n, sizeof(uint64_t), by_u64);
	pool->count = pool->n;
	return pool;
}

static const char *latency_kind(const char *key)
{
	if (strncmp(key, DIFF_SYSCALL, strlen(DIFF_SYSCALL)) == 0)
		return "syscall";
	if (strncmp(key, DIFF_REQUEST, strlen(DIFF_REQUEST)) == 0)
		return "request";
	if (strncmp(key, DIFF_LOCK, strlen(DIFF_LOCK)) == 0)
		return "lock";
	if (strncmp(key, DIFF_PEER_WAIT, strlen(DIFF_PEER_WAIT)) == 0)
		return "wait";
	return "device";
}

static void compare_latency(struct builder *b, const char *key)
{
	const char *kind = latency_kind(key);
	int tier = strcmp(kind, "syscall") == 0 || strcmp(kind, "lock") == 0 ? 1 : 2;
	double medians[2][64], total[2], se[2];
	size_t nmedians[2];
	struct dseries *pool[2];
	struct diff_finding *f;

	for (int side = 0; side < 2; side++) {
		pool[side] = pool_side(b, side, key, medians[side], &nmedians[side],
				       &total[side]);
		if (!pool[side])
			return;
	}
	f = new_finding(b, kind, strchr(key, ':') + 1, tier, "ns");
	if (!f)
		return;
	f->is_latency = 1;
	f->count_base = pool[0]->n;
	f->count_new = pool[1]->n;
	for (int side = 0; side < 2; side++) {
		const uint64_t *v = pool[side]->vals;
		size_t n = pool[side]->n;

		stats_mean_se(v, n, &f->mean[side], &se[side]);
		f->p50[side] = stats_quantile(v, n, 0.50);
		f->p90[side] = stats_quantile(v, n, 0.90);
		f->p99[side] = stats_quantile(v, n, 0.99);
	}
	f->base = (double)f->p50[0];
	f->new_ = (double)f->p50[1];
	f->delta = f->new_ - f->base;
	/* time added per unit of exposure: calls per unit times time per call */
	f->impact = (b->s[1].exposure > 0 ? total[1] / b->s[1].exposure : 0) -
		    (b->s[0].exposure > 0 ? total[0] / b->s[0].exposure : 0);
	f->appeared = pool[0]->n == 0 && pool[1]->n > 0;
	f->disappeared = pool[0]->n > 0 && pool[1]->n == 0;
	stats_quantile_ratio_ci(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, 0.99,
				&f->p99_ratio, &f->p99_lo, &f->p99_hi);
	f->ks_d = stats_ks(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, NULL);
	stats_mann_whitney(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n, &f->auc);
	if (f->appeared || f->disappeared) {
		double r, lo, hi;

		f->p_value = stats_rate_ratio(pool[0]->n, b->s[0].exposure, pool[1]->n,
					      b->s[1].exposure, &r, &lo, &hi);
		f->noise_floor = NAN;   /* present on one side only: no floor to clear */
		f->test = "Poisson rate ratio of calls";
		if (f->disappeared)
			relative(f, f->base, -f->base, -f->base, -f->base);
	} else if (nmedians[0] >= 2 && nmedians[1] >= 2) {
		double diff, lo, hi, mb = 0;

		for (size_t i = 0; i < nmedians[0]; i++)
			mb += medians[0][i] / (double)nmedians[0];
		f->p_value = stats_welch(medians[0], nmedians[0], medians[1], nmedians[1], &diff,
					 &lo, &hi);
		relative(f, mb, diff, lo, hi);
		f->noise_floor = mb > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / mb : INFINITY;
		f->test = "Welch t on per-run medians";
	} else {
		double ratio, lo, hi;

		f->p_value = stats_mann_whitney(pool[0]->vals, pool[0]->n, pool[1]->vals,
						pool[1]->n, &f->auc);
		stats_quantile_ratio_ci(pool[0]->vals, pool[0]->n, pool[1]->vals, pool[1]->n,
					0.5, &ratio, &lo, &hi);
		f->effect = ratio - 1;
		f->ci_low = lo - 1;
		f->ci_high = isinf(hi) ? INFINITY : hi - 1;
		f->noise_floor = (hi - lo) / 2 / STATS_Z95 * 2.8016;
		f->test = "Mann-Whitney U; median ratio with rank interval";
	}
}

static void compare_latencies(struct builder *b)
{
	struct dtable keys;

	diff_table_init(&keys);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct dtable *t = &b->s[side].runs[i].latency;

			for (size_t k = 0; k < t->len; k++)
				if (!diff_table_get(&keys, t->rows[k].key))
					b->oom = 1;
		}
	for (size_t k = 0; k < keys.len && !b->oom; k++)
		compare_latency(b, keys.rows[k].key);
	diff_table_free(&keys);
}

/* ---- per-thread time shares (by comm) -------------------------------- */

static void collect_windows(const struct side *s, const char *key, double *vals,
			    size_t *n, double *means, size_t *nmeans)
{
	*n = *nmeans = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct dseries *row = diff_table_find(&s->runs[i].threads, key);
		double sum = 0;

		if (!row)
			continue;
		for (size_t k = 0; k < row->n && *n < 4096; k++) {
			vals[(*n)++] = (double)row->vals[k] / 1e6;
			sum += (double)row->vals[k] / 1e6;
		}
		if (row->n && *nmeans < 64)
			means[(*nmeans)++] = sum / (double)row->n;
	}
}

static void compare_thread(struct builder *b, const char *key, double *va, double *vb)
{
	double ma[64], mb[64], diff, lo, hi, base = 0, newv = 0, per_unit;
	size_t na, nb, nma, nmb;
	struct diff_finding *f;
	int per_run;

	collect_windows(&b->s[0], key, va, &na, ma, &nma);
	collect_windows(&b->s[1], key, vb, &nb, mb, &nmb);
	for (size_t i = 0; i < na; i++)
		base += va[i] / (double)na;
	for (size_t i = 0; i < nb; i++)
		newv += vb[i] / (double)nb;
	if (base == 0 && newv == 0)
		return;
	f = new_finding(b, "thread", key, 2, "share");
	if (!f)
		return;
	f->base = base;
	f->new_ = newv;
	f->delta = newv - base;
	/* ns per second, expressed per unit of exposure */
	per_unit = b->s[1].exposure > 0 ? b->res->seconds[1] / b->s[1].exposure : 1;
	f->impact = f->delta * 1e9 * per_unit;
	f->count_base = na;
	f->count_new = nb;
	per_run = nma >= 2 && nmb >= 2;
	f->p_value = per_run ? stats_welch(ma, nma, mb, nmb, &diff, &lo, &hi)
			     : stats_welch(va, na, vb, nb, &diff, &lo, &hi);
	f->test = per_run ? "Welch t on per-run shares" : "Welch t on per-window shares";
	f->appeared = base == 0;
	f->disappeared = newv == 0;
	relative(f, base, diff, lo, hi);
	f->noise_floor = base > 0 ? (hi - lo) / 2 / STATS_Z95 * 2.8016 / base : INFINITY;
}

static void compare_threads(struct builder *b)
{
	struct dtable keys;
	double *va = malloc(4096 * sizeof(double)), *vb = malloc(4096 * sizeof(double));

	diff_table_init(&keys);
	if (!va || !vb)
		b->oom = 1;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct dtable *t = &b->s[side].runs[i].threads;

			for (size_t k = 0; k < t->len; k++)
				if (!diff_table_get(&keys, t->rows[k].key))
					b->oom = 1;
		}
	for (size_t k = 0; k < keys.len && !b->oom; k++)
		compare_thread(b, keys.rows[k].key, va, vb);
	diff_table_free(&keys);
	free(va);
	free(vb);
}

/* ---- event rates ----------------------------------------------------- */

static void compare_rates(struct builder *b)
{
	struct dtable keys;

	diff_table_init(&keys);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			for (size_t k = 0; k < b->s[side].runs[i].rates.len; k++)
				if (!diff_table_get(&keys, b->s[side].runs[i].rates.rows[k].key))
					b->oom = 1;
	for (size_t k = 0; k < keys.len && !b->oom; k++) {
		uint64_t c[2] = { 0, 0 };
		double ratio, lo, hi;
		struct diff_finding *f;

		for (int side = 0; side < 2; side++)
			for (size_t i = 0; i < b->s[side].n; i++) {
				const struct dseries *row =
					diff_table_find(&b->s[side].runs[i].rates, keys.rows[k].key);
				c[side] += row ? row->count : 0;
			}
		f = new_finding(b, "rate", keys.rows[k].key, 2,
				b->res->norm == DIFF_PER_REQUEST ? "events/request" : "events/s");
		if (!f)
			break;
		f->count_base = c[0];
		f->count_new = c[1];
		f->base = b->s[0].exposure > 0 ? (double)c[0] / b->s[0].exposure : 0;
		f->new_ = b->s[1].exposure > 0 ? (double)c[1] / b->s[1].exposure : 0;
		f->delta = f->new_ - f->base;
		f->p_value = stats_rate_ratio(c[0], b->s[0].exposure, c[1], b->s[1].exposure,
					      &ratio, &lo, &hi);
		if (c[0] > 0) {
			f->effect = ratio - 1;
			f->ci_low = lo - 1;
			f->ci_high = hi - 1;
		}
		f->appeared = c[0] == 0 && c[1] > 0;
		f->disappeared = c[0] > 0 && c[1] == 0;
		f->noise_floor = stats_rate_noise_floor(c[0], c[1]);
		f->test = "Poisson rate ratio";
	}
	diff_table_free(&keys);
}

/* ---- warnings -------------------------------------------------------- */

static void warn(struct builder *b, int conditional, const char *fmt, ...)
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

/* Data quality differs materially: above floor somewhere, more than gap
 * apart (both as fractions), and more than twice as high on one side. */
static void check_quality(struct builder *b, const char *what, size_t field_offset,
			  double floor, double gap)
{
	double a = side_max(&b->s[0], field_offset), c = side_max(&b->s[1], field_offset);
	double hi = a > c ? a : c, lo = a > c ? c : a;

	if (hi > floor && hi - lo > gap && hi > 2 * lo)
		warn(b, 1, "%s differs: %.2f%% (base) vs %.2f%% (new); the comparison is "
		     "conditional", what, 100 * a, 100 * c);
}

static void check_sides(struct builder *b)
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

/* ---- significance, ranking, verdict --------------------------------- */

/* The smallest impact worth reporting (--min-impact, default 1%): that
 * share of the exposure unit (10 ms per second), or per request that share
 * of the base's mean request latency (at least 1 us). */
static double min_impact(const struct builder *b)
{
	const struct diff_result *res = b->res;
	double mean = 0;
	uint64_t n = 0;

	if (res->norm == DIFF_PER_SECOND)
		return res->opts.min_impact_share * 1e9;
	for (size_t i = 0; i < res->hist[0].len; i++) {
		const struct dseries *s = &res->hist[0].rows[i];

		if (strncmp(s->key, DIFF_REQUEST, strlen(DIFF_REQUEST)) == 0)
			for (size_t k = 0; k < s->n; k++, n++)
				mean += (double)s->vals[k];
	}
	mean = n ? mean / (double)n : 0;
	return fmax(1000.0, res->opts.min_impact_share * mean);
}

static void decide(struct builder *b)
{
	struct diff_result *res = b->res;
	double *p = malloc((res->nfindings + 1) * sizeof(double));
	double *q = malloc((res->nfindings + 1) * sizeof(double));
	double floor_impact = min_impact(b), events_base = 0;

	if (!p || !q) {
		b->oom = 1;
		free(p);
		free(q);
		return;
	}
	for (size_t i = 0; i < res->nfindings; i++) {
		p[i] = res->findings[i].p_value;
		if (strcmp(res->findings[i].kind, "rate") == 0)
			events_base += res->findings[i].base;
	}
	stats_bh_adjust(p, q, res->nfindings);
	for (size_t i = 0; i < res->nfindings; i++) {
		struct diff_finding *f = &res->findings[i];
		int big_enough, ci_clear, impact_ok;

		f->q_value = q[i];
		if (f->appeared || f->disappeared) {
			big_enough = ci_clear = 1;
		} else {
			big_enough = fabs(f->effect) >= res->opts.min_effect &&
				     (isnan(f->noise_floor) || fabs(f->effect) >= f->noise_floor);
			ci_clear = f->ci_low > 0 || f->ci_high < 0;
		}
		/* event rates add no time: their practical minimum is a change of
		 * min_impact_share of all the events per unit of exposure */
		if (strcmp(f->kind, "rate") == 0)
			impact_ok = fabs(f->delta) >= res->opts.min_impact_share * events_base;
		else
			impact_ok = fabs(f->impact) >= floor_impact;
		f->significant = f->q_value < res->opts.alpha && big_enough && ci_clear &&
				 impact_ok;
	}
	free(p);
	free(q);
}

static int by_rank(const void *x, const void *y)
{
	const struct diff_finding *a = x, *b = y;
	double ia = fabs(a->impact), ib = fabs(b->impact);

	if (a->significant != b->significant)
		return b->significant - a->significant;
	if (!a->significant) {
		if (a->q_value != b->q_value)
			return a->q_value < b->q_value ? -1 : 1;
	} else {
		if (a->tier != b->tier)
			return a->tier - b->tier;
		if (ia != ib)
			return ia > ib ? -1 : 1;
		if (fabs(a->effect) != fabs(b->effect))
			return fabs(a->effect) > fabs(b->effect) ? -1 : 1;
	}
	if (strcmp(a->kind, b->kind) != 0)
		return strcmp(a->kind, b->kind);
	return strcmp(a->name, b->name);
}

int diff_finding_adds_time(const struct diff_finding *f)
{
	return f->appeared || (!f->disappeared && f->effect > 0);
}

static void rank_and_verdict(struct builder *b)
{
	struct diff_result *res = b->res;
	int up = 0, down = 0;
	char unit[32], buf[FMT_BUF];

	qsort(res->findings, res->nfindings, sizeof(*res->findings), by_rank);
	for (size_t i = 0; i < res->nfindings; i++) {
		struct diff_finding *f = &res->findings[i];

		if (!f->significant)
			continue;
		f->rank = (int)++res->nsignificant;
		if (strcmp(f->kind, "rate") == 0)
			continue;
		if (diff_finding_adds_time(f))
			up++;
		else
			down++;
	}
	res->verdict = up && down ? "mixed" : up ? "regression" : down ? "improvement"
		       : "no significant change";
	snprintf(unit, sizeof(unit), "%s", res->norm == DIFF_PER_REQUEST ? "request" : "second");
	if (res->nsignificant == 0) {
		snprintf(res->summary, sizeof(res->summary),
			 "No significant change between base (%zu run%s, %.1f s) and new (%zu "
			 "run%s, %.1f s), normalized per %s.", res->nruns[0],
			 res->nruns[0] > 1 ? "s" : "", res->seconds[0], res->nruns[1],
			 res->nruns[1] > 1 ? "s" : "", res->seconds[1], unit);
	} else {
		const struct diff_finding *top = &res->findings[0];
		char effect[64];

		if (isnan(top->effect))
			snprintf(effect, sizeof(effect), "%s", top->appeared ? "appeared" : "gone");
		else
			snprintf(effect, sizeof(effect), "%+.0f%%", 100 * top->effect);
		snprintf(res->summary, sizeof(res->summary),
			 "%s: %zu significant finding%s (%d adding time, %d removing time), "
			 "normalized per %s. Top: %s %s %s, %s%s per %s.",
			 res->verdict, res->nsignificant, res->nsignificant > 1 ? "s" : "", up,
			 down, unit, top->kind, top->name, effect, top->impact < 0 ? "-" : "+",
			 fmt_duration_ns(buf, sizeof(buf), (uint64_t)fabs(top->impact)), unit);
	}
	if (res->conditional) {
		size_t len = strlen(res->summary);

		snprintf(res->summary + len, sizeof(res->summary) - len,
			 " Conditional: the sides were not recorded alike (see warnings).");
	}
}

static void setup_sides(struct builder *b, const struct diff_run *base, size_t nbase,
			const struct diff_run *new_, size_t nnew)
{
	struct diff_result *res = b->res;
	int per_request = 1;

	b->s[0] = (struct side){ .runs = base, .n = nbase };
	b->s[1] = (struct side){ .runs = new_, .n = nnew };
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b->s[side].n; i++)
			if (b->s[side].runs[i].requests < MIN_REQUESTS)
				per_request = 0;
	res->norm = per_request ? DIFF_PER_REQUEST : DIFF_PER_SECOND;
	for (int side = 0; side < 2; side++) {
		res->nruns[side] = b->s[side].n;
		for (size_t i = 0; i < b->s[side].n; i++) {
			const struct diff_run *r = &b->s[side].runs[i];

			res->seconds[side] += r->seconds;
			res->requests[side] += r->requests;
			b->s[side].exposure += run_exposure(r, res->norm);
			b->s[side].cpu_exposure += run_exposure(r, res->norm) * run_freq(r);
		}
		res->exposure[side] = b->s[side].exposure;
	}
}

int diff_compare(const struct diff_run *base, size_t nbase, const struct diff_run *new_,
		 size_t nnew, const struct diff_options *opts, struct diff_result *res)
{
	struct builder b = { .res = res };

	memset(res, 0, sizeof(*res));
	res->opts = *opts;
	diff_table_init(&res->folded[0]);
	diff_table_init(&res->folded[1]);
	diff_table_init(&res->hist[0]);
	diff_table_init(&res->hist[1]);
	setup_sides(&b, base, nbase, new_, nnew);
	check_sides(&b);
	if (res->norm == DIFF_PER_SECOND)
		warn(&b, 0, "normalized per second of capture: a side has fewer than %d "
		     "requests per run (request_spans)", MIN_REQUESTS);
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < b.s[side].n; i++) {
			const struct dtable *t = &b.s[side].runs[i].stacks;

			for (size_t k = 0; k < t->len; k++) {
				struct dseries *s = diff_table_get(&res->folded[side], t->rows[k].key);

				if (!s)
					b.oom = 1;
				else
					s->count += t->rows[k].count;
			}
		}
	compare_count_table(&b, "function", 1, offsetof(struct diff_run, self), 1);
	compare_count_table(&b, "function_total", 2, offsetof(struct diff_run, total), 1);
	compare_count_table(&b, "stack", 2, offsetof(struct diff_run, stacks), 0);
	compare_latencies(&b);
	compare_threads(&b);
	compare_rates(&b);
	if (!b.oom)
		decide(&b);
	if (!b.oom)
		rank_and_verdict(&b);
	if (b.oom)
		fprintf(stderr, "perfcap-analyze: diff: out of memory\n");
	return b.oom ? -1 : 0;
}

void diff_result_free(struct diff_result *res)
{
	for (size_t i = 0; i < res->nfindings; i++)
		free(res->findings[i].name);
	free(res->findings);
	for (size_t i = 0; i < res->nwarnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	for (int side = 0; side < 2; side++) {
		diff_table_free(&res->folded[side]);
		diff_table_free(&res->hist[side]);
	}
	memset(res, 0, sizeof(*res));
}
