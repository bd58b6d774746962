/* test_diff_warnings.c - diff_compare's warnings that the sides were not
 * recorded alike, on runs built in memory (no capture needed): the
 * request-load check, whose threshold is --min-effect. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff.h"

static struct diff_run run(const char *path, double seconds, uint64_t requests)
{
	struct diff_run r = {
		.path = path, .seconds = seconds, .freq_hz = 100, .requests = requests,
		.kernel = strdup(""), .hashes = strdup(""), .filters = strdup(""),
		.sampling = strdup(""), .command = strdup(""), .damage = strdup(""),
		.stolen_share = NAN,
	};

	diff_table_init(&r.self);
	diff_table_init(&r.total);
	diff_table_init(&r.stacks);
	diff_table_init(&r.latency);
	diff_table_init(&r.threads);
	diff_table_init(&r.rates);
	return r;
}

/* Whether diff_compare of one run a side warns about the request load. */
static int load_warning(uint64_t base_requests, uint64_t new_requests, double min_effect,
			int *conditional)
{
	struct diff_run a = run("a", 2.0, base_requests), b = run("b", 2.0, new_requests);
	struct diff_options opts = { .alpha = 0.01, .min_effect = min_effect };
	struct diff_result res;
	int found = 0;

	cr_assert_eq(diff_compare(&a, 1, &b, 1, &opts, &res), 0);
	for (size_t i = 0; i < res.nwarnings; i++)
		found |= strstr(res.warnings[i], "served requests at different rates") != NULL;
	*conditional = res.conditional;
	diff_result_free(&res);
	diff_run_free(&a);
	diff_run_free(&b);
	return found;
}

Test(diff_warnings, request_rates_apart_by_more_than_min_effect)
{
	int conditional;

	cr_expect(!load_warning(10000, 10500, 0.10, &conditional), "5%% apart: same load");
	cr_expect(!conditional);
	cr_expect(load_warning(10000, 5800, 0.10, &conditional), "72%% apart");
	cr_expect(conditional, "a different load makes the comparison conditional");
	cr_expect(load_warning(10000, 11500, 0.10, &conditional), "15%% apart, min-effect 10%%");
	cr_expect(!load_warning(10000, 11500, 0.20, &conditional), "15%% apart, min-effect 20%%");
	/* too few requests to normalize per request: per second, no check */
	cr_expect(!load_warning(10, 5, 0.10, &conditional));
}
