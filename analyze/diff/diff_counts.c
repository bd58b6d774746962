/* diff_counts.c - CPU samples compared per function (self and total)
 * and per folded stack: CPU time per request or second on each side, a
 * Poisson rate-ratio test (Welch on per-run rates with several runs per
 * side), and the matching of a function known with its source file on one
 * side only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "statistics.h"

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

void compare_count_table(struct builder *b, const char *kind, int tier,
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

