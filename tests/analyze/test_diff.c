/* test_diff.c - "perfcap-analyze diff" on synthetic captures with exact
 * answers: alignment by name across builds, appeared and disappeared
 * functions, normalization by duration and sampling frequency, latency
 * shifts, conditional warnings, groups of runs, --fail-on rules and exit
 * codes, and bad input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "run_tool.h"
#include "test_diff_capture.h"

static char *dir;

static void setup(void) { dir = scratch_dir(); }
static void teardown(void) { scratch_remove(dir); }

TestSuite(diff, .init = setup, .fini = teardown);

/* Writes capture name with spec; returns its path (malloc'd). */
static char *capture(const char *name, const struct diff_capture *spec)
{
	char *path = scratch_path(dir, name);

	cr_assert_eq(write_diff_capture(path, spec), 0, "writing %s", name);
	return path;
}

/* The number after "key": in the JSON object that contains the first
 * occurrence of anchor (e.g. "\"name\": \"hot\""); NAN if absent. */
static double json_number(const char *json, const char *anchor, const char *key)
{
	const char *at = strstr(json, anchor), *start, *end, *v;
	char pattern[64];

	if (!at)
		return NAN;
	for (start = at; start > json && *start != '{'; start--)
		;
	end = strchr(at, '}');
	snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
	v = strstr(start, pattern);
	if (!v || (end && v > end))
		return NAN;
	v += strlen(pattern);
	return strncmp(v, "null", 4) == 0 ? NAN : strtod(v, NULL);
}

/* Whether the object holding anchor has "key": text (a JSON literal). */
static int json_has(const char *json, const char *anchor, const char *key, const char *text)
{
	const char *at = strstr(json, anchor), *start, *end, *v;
	char pattern[128];

	if (!at)
		return 0;
	for (start = at; start > json && *start != '{'; start--)
		;
	end = strchr(at, '}');
	snprintf(pattern, sizeof(pattern), "\"%s\": %s", key, text);
	v = strstr(start, pattern);
	return v && (!end || v < end);
}

#define HOT "\"name\": \"hot\""

Test(diff, aligns_functions_by_name_across_builds)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb;

	b.shift = 0x2000;   /* every function at another address, another build-id */
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", "--json", "--all", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"verdict\": \"no significant change\""), "%s", r.out);
	cr_expect_eq(json_number(r.out, HOT, "count_base"), 300);
	cr_expect_eq(json_number(r.out, HOT, "count_new"), 300);
	cr_expect_eq(json_number(r.out, HOT, "effect"), 0);
	cr_expect(strstr(r.out, "\"appeared\": []"), "nothing appears across builds");
	cr_expect(strstr(r.out, "\"disappeared\": []"));
	cr_expect(strstr(r.out, "\"stack\": \"app;main;work;hot\""), "folded pairs by name");
	tool_result_free(&r);
	free(pa);
	free(pb);
}

/* Imports capture into a database and runs sql on it. */
static char *import_and_edit(const char *capture_path, const char *name, const char *sql)
{
	char *db_path = scratch_path(dir, name);
	struct tool_result r;
	sqlite3 *db;

	run_analyze(&r, "import", capture_path, "-o", db_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	cr_assert_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_close(db);
	return db_path;
}

Test(diff, aligns_a_function_with_and_without_its_source_file)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb, *da, *db;

	b.shift = 0x300;
	b.hot = 600;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	/* the base build had debug info for hot (as if DWARF gave its file) */
	da = import_and_edit(pa, "a.db", "UPDATE frames SET file = '/src/app/hot.c', line = 7"
			     " WHERE function = 'hot'");
	db = import_and_edit(pb, "b.db", "SELECT 1");
	run_analyze(&r, "diff", "--json", da, db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"name\": \"hot (hot.c)\""), "%s", r.out);
	cr_expect(fabs(json_number(r.out, "\"name\": \"hot (hot.c)\"", "effect") - 1.0) < 1e-9);
	cr_expect(strstr(r.out, "\"appeared\": []"), "hot did not appear: %s", r.out);
	cr_expect(strstr(r.out, "\"disappeared\": []"), "hot did not disappear");
	tool_result_free(&r);
	/* two static functions named hot in two files (cold renamed): neither
	 * is merged with the bare hot of the other side */
	free(da);
	da = import_and_edit(pa, "a2.db", "UPDATE frames SET file = '/src/x.c' WHERE function"
			     " = 'hot'; UPDATE frames SET function = 'hot', name = 'hot', file ="
			     " '/src/y.c' WHERE function = 'cold'");
	run_analyze(&r, "diff", "--json", "--all", da, db, NULL);
	cr_expect(json_has(r.out, "\"name\": \"hot\"", "appeared", "true"),
		  "bare hot stays apart: %s", r.out);
	cr_expect(json_has(r.out, "\"name\": \"hot (x.c)\"", "disappeared", "true"));
	cr_expect(json_has(r.out, "\"name\": \"hot (y.c)\"", "disappeared", "true"));
	tool_result_free(&r);
	free(pa);
	free(pb);
	free(da);
	free(db);
}

Test(diff, doubled_function_is_a_ranked_regression)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb;

	b.hot = 600;
	b.shift = 0x100;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", "--json", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* the first finding: function hot, per second of capture, exactly x2 */
	cr_expect(strstr(r.out, "\"rank\": 1,\n      \"kind\": \"function\",\n"
			 "      \"name\": \"hot\""), "%s", r.out);
	cr_expect(fabs(json_number(r.out, HOT, "effect") - 1.0) < 1e-9);
	cr_expect(json_number(r.out, HOT, "ci_low") > 0.5);
	cr_expect(json_number(r.out, HOT, "p_value") < 1e-10);
	cr_expect(json_has(r.out, HOT, "direction", "\"up\""));
	cr_expect(json_has(r.out, HOT, "significant", "true"));
	/* 300 more samples at 100 Hz in 4 s: +750 ms of CPU per second */
	cr_expect(fabs(json_number(r.out, HOT, "impact_ns") - 750e6) < 1);
	cr_expect(strstr(r.out, "\"per\": \"second\""));
	cr_expect(strstr(r.out, "\"verdict\": \"regression\""));
	/* cold's share fell but its time did not change: not a finding */
	cr_expect(json_number(r.out, "\"name\": \"cold\"", "effect") == 0 ||
		  isnan(json_number(r.out, "\"name\": \"cold\"", "effect")));
	tool_result_free(&r);
	/* sides swapped: the same finding, the opposite sign */
	run_analyze(&r, "diff", "--json", pb, pa, NULL);
	cr_expect(strstr(r.out, "\"rank\": 1,\n      \"kind\": \"function\",\n"
			 "      \"name\": \"hot\""), "%s", r.out);
	cr_expect(fabs(json_number(r.out, HOT, "effect") + 0.5) < 1e-9);
	cr_expect(json_has(r.out, HOT, "direction", "\"down\""));
	cr_expect(strstr(r.out, "\"verdict\": \"improvement\""));
	tool_result_free(&r);
	free(pa);
	free(pb);
}

Test(diff, lists_appeared_and_disappeared_functions)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb;

	b.fresh = 200;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", "--json", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"appeared\": [\n    \"fresh\"\n  ]"), "%s", r.out);
	cr_expect(json_has(r.out, "\"name\": \"fresh\"", "appeared", "true"));
	cr_expect(json_has(r.out, "\"name\": \"fresh\"", "significant", "true"));
	cr_expect(isnan(json_number(r.out, "\"name\": \"fresh\"", "effect")),
		  "an appeared function has no relative effect");
	tool_result_free(&r);
	run_analyze(&r, "diff", pb, pa, NULL);
	cr_expect(strstr(r.out, "DISAPPEARED functions"), "%s", r.out);
	cr_expect(strstr(r.out, "  fresh "), "%s", r.out);
	tool_result_free(&r);
	free(pa);
	free(pb);
}

Test(diff, normalizes_by_duration_and_frequency)
{
	struct diff_capture a = diff_capture_basic(), longer = a, faster = a;
	struct tool_result r;
	char *pa, *pl, *pf;

	longer.duration_ns *= 2;   /* twice as long: twice the samples */
	longer.hot *= 2;
	longer.cold *= 2;
	faster.freq_hz = 200;      /* twice the frequency: twice the samples */
	faster.hot *= 2;
	faster.cold *= 2;
	pa = capture("a.perfcap", &a);
	pl = capture("long.perfcap", &longer);
	pf = capture("fast.perfcap", &faster);
	run_analyze(&r, "diff", "--json", "--all", pa, pl, NULL);
	cr_expect(strstr(r.out, "\"verdict\": \"no significant change\""), "%s", r.out);
	cr_expect_eq(json_number(r.out, HOT, "effect"), 0);
	/* 300 samples / 100 Hz / 4 s = 0.75 s of CPU per second, both sides */
	cr_expect(fabs(json_number(r.out, HOT, "base") - 750e6) < 1);
	cr_expect(fabs(json_number(r.out, HOT, "new") - 750e6) < 1);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--json", "--all", pa, pf, NULL);
	cr_expect(strstr(r.out, "\"verdict\": \"no significant change\""), "%s", r.out);
	cr_expect_eq(json_number(r.out, HOT, "effect"), 0);
	cr_expect(strstr(r.out, "sampling settings differ"), "frequency change warned");
	cr_expect(strstr(r.out, "\"conditional\": true"));
	tool_result_free(&r);
	free(pa);
	free(pl);
	free(pf);
}

#define SLEEPS "\"name\": \"io:clock_nanosleep\""

/* diff --json of two captures whose thread 101 makes calls sleeps of
 * base_ns and new_ns (+ (call % 10) x step) into r. */
static void diff_sleeps(struct tool_result *r, int calls, uint64_t step, uint64_t base_ns,
			uint64_t new_ns)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	char *pa, *pb;

	a.sleeps = b.sleeps = calls;
	a.sleep_step = b.sleep_step = step;
	a.sleep_ns = base_ns;
	b.sleep_ns = new_ns;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(r, "diff", "--json", pa, pb, NULL);
	cr_assert_eq(r->status, 0, "%s", r->err);
	free(pa);
	free(pb);
}

Test(diff, latency_shift_of_a_system_call)
{
	struct tool_result r;

	diff_sleeps(&r, 200, 1000, 1000000, 2000000);
	cr_expect(json_has(r.out, SLEEPS, "kind", "\"syscall\""), "%s", r.out);
	cr_expect(json_has(r.out, SLEEPS, "significant", "true"));
	/* medians 1.004 ms -> 2.004 ms (values spread by 0..9 us) */
	cr_expect_eq(json_number(r.out, SLEEPS, "delta"), 1000000);
	cr_expect(json_number(r.out, SLEEPS, "effect") > 0.99 &&
		  json_number(r.out, SLEEPS, "effect") < 1.0);
	/* 200 calls in 4 s, each 1 ms longer: +50 ms per second */
	cr_expect(fabs(json_number(r.out, SLEEPS, "impact_ns") - 50e6) < 1);
	cr_expect(strstr(r.out, "\"name\": \"syscall:io:clock_nanosleep\""), "a histogram");
	cr_expect(strstr(r.out, "\"le_ns\": 1048576,\n          \"base\": 200,\n"
			 "          \"new\": 0"), "%s", r.out);
	tool_result_free(&r);
}

/* One run a side: the latency test compares the medians of 10 blocks of
 * consecutive calls, in the order they were recorded. Calls spread over
 * 1.0 - 1.9 ms, the same spread in every block (the run does not drift):
 * a shift of every call by 150 us (+11% at the median) is larger than any
 * block-to-block drift, so it is significant. (Blocks of the sorted calls
 * would be the deciles, 1.0 to 1.9 ms, and would hide it: t = 1.1.) */
Test(diff, latency_blocks_are_consecutive_calls_in_recorded_order)
{
	struct tool_result r;

	diff_sleeps(&r, 400, 100000, 1000000, 1150000);
	cr_expect(json_has(r.out, SLEEPS, "test",
			   "\"Welch t on the medians of 10 consecutive blocks of each run\""),
		  "%s", r.out);
	cr_expect(json_has(r.out, SLEEPS, "significant", "true"), "%s", r.out);
	cr_expect_eq(json_number(r.out, SLEEPS, "delta"), 150000);
	tool_result_free(&r);
}

Test(diff, warns_when_sides_differ)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb;

	b.kernel = "6.9.0-other";
	b.filter_comm = "app";
	b.lost = 1000;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "kernels differ"), "%s", r.out);
	cr_expect(strstr(r.out, "'6.9.0-other'"));
	cr_expect(strstr(r.out, "filters or sources differ"));
	cr_expect(strstr(r.out, "event loss rate differs"));
	cr_expect(strstr(r.out, "comparison is conditional"));
	cr_expect(strstr(r.out, "Conditional: the sides were not recorded alike"));
	tool_result_free(&r);
	/* alike: not conditional (the only warning says how it normalized) */
	run_analyze(&r, "diff", pa, pa, NULL);
	cr_expect(!strstr(r.out, "conditional"), "%s", r.out);
	cr_expect_eq(count_lines_with(r.out, "  - "), 1, "%s", r.out);
	cr_expect(strstr(r.out, "  - normalized per second of capture"), "%s", r.out);
	tool_result_free(&r);
	free(pa);
	free(pb);
}

/* Identical profiles, but the hypervisor took 20% of the new side's CPU
 * time against 1% of the base's: the sides were not measured alike. Equal
 * steal, or under a second of CPU time (/proc/stat's hundredths make the
 * share meaningless), is no warning. */
Test(diff, warns_when_the_hypervisor_took_more_on_one_side)
{
	struct diff_capture a = diff_capture_basic(), b = a, c = a, tiny = a;
	struct tool_result r;
	char *pa, *pb, *pc, *pt;

	a.busy_ns = 7920000000ull, a.steal_ns = 80000000;     /* 1% */
	b.busy_ns = 6400000000ull, b.steal_ns = 1600000000;   /* 20% */
	c.busy_ns = 6400000000ull, c.steal_ns = 1600000000;
	tiny.busy_ns = 80000000, tiny.steal_ns = 20000000;    /* 20% of 0.1 s */
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	pc = capture("c.perfcap", &c);
	pt = capture("tiny.perfcap", &tiny);
	run_analyze(&r, "diff", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "status %d: %s%s", r.status, r.err, r.out);
	cr_expect(strstr(r.out, "the hypervisor took 20% of the CPU time the host had work for"
			 " on the new side against 1% on the base"), "%s", r.out);
	cr_expect(strstr(r.out, "Conditional: the sides were not recorded alike"), "%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "diff", pb, pa, NULL);
	cr_expect(strstr(r.out, "20% of the CPU time the host had work for on the base side"),
		  "%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "diff", pb, pc, NULL);
	cr_expect(!strstr(r.out, "hypervisor"), "%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "diff", pa, pt, NULL);
	cr_expect(!strstr(r.out, "hypervisor"), "%s", r.out);
	tool_result_free(&r);
	free(pa);
	free(pb);
	free(pc);
	free(pt);
}

Test(diff, groups_of_runs_use_per_run_tests)
{
	struct diff_capture s = diff_capture_basic();
	struct tool_result r;
	char *p[6];
	const int hot[6] = { 300, 310, 290, 600, 620, 590 };

	for (int i = 0; i < 6; i++) {
		char name[32];

		s.hot = hot[i];
		snprintf(name, sizeof(name), "run%d.perfcap", i);
		p[i] = capture(name, &s);
	}
	run_analyze(&r, "diff", "--json", "--base", p[0], p[1], p[2], "--new", p[3], p[4],
		    p[5], NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"runs\": 3"));
	cr_expect(json_has(r.out, HOT, "test", "\"Welch t on per-run rates\""), "%s", r.out);
	cr_expect(json_has(r.out, HOT, "significant", "true"));
	cr_expect(fabs(json_number(r.out, HOT, "effect") - 0.0) > 0.9);
	/* event rates too use the run-to-run spread */
	cr_expect(json_has(r.out, "\"name\": \"cpu\"", "test", "\"Welch t on per-run rates\""),
		  "%s", r.out);
	tool_result_free(&r);
	for (int i = 0; i < 6; i++)
		free(p[i]);
}

/* With several runs a side, a series present on one side only is judged
 * by its per-run time: system calls that appear in one new run of three
 * are chance, not a regression; in all three they are one. */
Test(diff, appeared_in_one_run_of_three_is_not_significant)
{
	const char *sc = "\"name\": \"io:clock_nanosleep\"";
	struct diff_capture s = diff_capture_basic();
	struct tool_result r;
	char *p[9];

	s.sleep_ns = 5000000;
	for (int i = 0; i < 9; i++) {
		char name[32];

		/* runs 0-2 base (none), 3-5 new once, 6-8 new every time */
		s.sleeps = i == 3 || i >= 6 ? 50 : 0;
		snprintf(name, sizeof(name), "ap%d.perfcap", i);
		p[i] = capture(name, &s);
	}
	run_analyze(&r, "diff", "--json", "--base", p[0], p[1], p[2], "--new", p[3], p[4],
		    p[5], NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(json_has(r.out, sc, "appeared", "true"), "%s", r.out);
	cr_expect(json_has(r.out, sc, "test",
			   "\"Welch t on per-run time (present on one side only)\""), "%s", r.out);
	cr_expect(json_has(r.out, sc, "significant", "false"), "%s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--json", "--base", p[0], p[1], p[2], "--new", p[6], p[7],
		    p[8], NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(json_has(r.out, sc, "significant", "true"), "%s", r.out);
	tool_result_free(&r);
	for (int i = 0; i < 9; i++)
		free(p[i]);
}

Test(diff, fail_on_rules_and_exit_codes)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb;

	b.hot = 600;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", "--fail-on", "func:hot:+5%", pa, pb, NULL);
	cr_expect_eq(r.status, 1, "a matched rule exits 1: %s", r.err);
	cr_expect(strstr(r.out, "FAIL --fail-on func:hot:+5%: function hot grew +100.0%"), "%s",
		  r.out);
	cr_expect(strstr(r.err, "FAIL func:hot:+5%"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "func:hot:+150%", "--fail-on", "func:cold:+5%",
		    pa, pb, NULL);
	cr_expect_eq(r.status, 0, "no rule matched: %s", r.out);
	cr_expect(strstr(r.out, "PASS: no --fail-on rule matched (2 rules)"));
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "any:significant", pa, pb, NULL);
	cr_expect_eq(r.status, 1);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "any:significant", pb, pa, NULL);
	cr_expect_eq(r.status, 0, "an improvement is not a regression: %s", r.out);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "p99:request:+10%", "--fail-on", "lock:+10%",
		    pa, pb, NULL);
	cr_expect_eq(r.status, 0, "no requests, no locks: %s", r.out);
	tool_result_free(&r);
	/* bad rules are usage errors */
	run_analyze(&r, "diff", "--fail-on", "func:hot", pa, pb, NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--fail-on 'func:hot'"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "cpu:+5%", pa, pb, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	run_analyze(&r, "diff", "--fail-on", "p99:request:ten", pa, pb, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	free(pa);
	free(pb);
}

Test(diff, bad_input_exits_2)
{
	struct diff_capture a = diff_capture_basic();
	struct tool_result r;
	char *pa = capture("a.perfcap", &a), *junk = scratch_path(dir, "junk");
	FILE *f = fopen(junk, "w");

	cr_assert(f);
	fputs("not a capture\n", f);
	fclose(f);
	run_analyze(&r, "diff", pa, "/nonexistent/x.perfcap", NULL);
	cr_expect_eq(r.status, 2);
	cr_expect_eq(count_lines_with(r.err, "/nonexistent/x.perfcap"), 1, "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "diff", junk, pa, NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a perfcap capture"), "%s", r.err);
	tool_result_free(&r);
	/* the runs are read on threads once opened: a bad one among them */
	run_analyze(&r, "diff", "--base", pa, pa, pa, "--new", pa, junk, pa, NULL);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a perfcap capture"), "%s", r.err);
	tool_result_free(&r);
	run_analyze(&r, "diff", pa, NULL);
	cr_expect_eq(r.status, 2, "one file only");
	tool_result_free(&r);
	run_analyze(&r, "diff", "--base", pa, NULL);
	cr_expect_eq(r.status, 2, "--base without --new");
	tool_result_free(&r);
	run_analyze(&r, "diff", "--json", "--folded", pa, pa, NULL);
	cr_expect_eq(r.status, 2);
	tool_result_free(&r);
	free(pa);
	free(junk);
}

/* Found by fuzz_diff: two sides with nothing to compare left findings
 * NULL, and ranking them passed NULL to qsort (UBSan: nonnull argument). */
Test(diff, nothing_to_compare_is_no_finding)
{
	struct diff_capture a = diff_capture_basic();
	struct tool_result r;
	char *pa;

	a.hot = a.cold = a.fresh = 0;
	a.sleeps = 0;
	pa = capture("empty.perfcap", &a);
	run_analyze(&r, "diff", "--json", pa, pa, NULL);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_null(strstr(r.err, "runtime error"), "%s", r.err);
	cr_expect(strstr(r.out, "\"findings\": []"), "%s", r.out);
	tool_result_free(&r);
	free(pa);
}

Test(diff, outputs_folded_pairs_and_html)
{
	struct diff_capture a = diff_capture_basic(), b = a;
	struct tool_result r;
	char *pa, *pb, *html = scratch_path(dir, "d.html");

	b.hot = 450;
	b.fresh = 10;
	pa = capture("a.perfcap", &a);
	pb = capture("b.perfcap", &b);
	run_analyze(&r, "diff", "--folded", pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "app;main;fresh 0 10\napp;main;work;cold 100 100\n"
			 "app;main;work;hot 300 450\n");
	tool_result_free(&r);
	run_analyze(&r, "diff", "--html", html, pa, pb, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	{
		/* the whole page (libraries included: a few MB), then the data */
		FILE *f = fopen(html, "r");
		char *page = NULL;
		size_t cap = 0;

		cr_assert(f, "no HTML page");
		cr_assert_gt(getdelim(&page, &cap, '\0', f), 0);
		fclose(f);
		cr_expect(strstr(page, "<script type=\"application/json\" id=\"perfcap-data\">"));
		cr_expect(strstr(page, "\"kind\":\"diff\""), "compact JSON inside");
		free(page);
	}
	free(pa);
	free(pb);
	free(html);
}

/* GC pauses (gc_pauses rows, as import pairs them from GC probes):
 * 100 pauses of 10 ms in the base, 200 of 20 ms in the new run, 4 s
 * each. The pause distribution (kind gc_pause) doubles its median and
 * adds 750 ms of pauses per second; the pause rate (kind rate) doubles. */
Test(diff, compares_gc_pause_distributions)
{
	struct diff_capture spec = diff_capture_basic();
	const char *gc = "\"kind\": \"gc_pause\"", *rate = "\"name\": \"gc_pauses ";
	char *pa = capture("a.perfcap", &spec), *pb = capture("b.perfcap", &spec);
	char *da = import_and_edit(pa, "a.db", "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL"
		" SELECT i + 1 FROM n WHERE i < 99) INSERT INTO gc_pauses SELECT 100, 100,"
		" 1000000000 + i * 30000000, 1000000000 + i * 30000000 + 10000000 + i, 10000000 + i,"
		" 'python', 'usdt' FROM n");
	char *db = import_and_edit(pb, "b.db", "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL"
		" SELECT i + 1 FROM n WHERE i < 199) INSERT INTO gc_pauses SELECT 100, 100,"
		" 1000000000 + i * 15000000, 1000000000 + i * 15000000 + 20000000 + i, 20000000 + i,"
		" 'python', 'usdt' FROM n");
	struct tool_result r;

	run_analyze(&r, "diff", "--json", da, db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(json_has(r.out, gc, "significant", "true"), "%s", r.out);
	cr_expect_eq(json_number(r.out, gc, "count_base"), 100);
	cr_expect_eq(json_number(r.out, gc, "count_new"), 200);
	/* nearest-rank medians: 10 ms + 49 ns, 20 ms + 99 ns */
	cr_expect_eq(json_number(r.out, gc, "base"), 10000049);
	cr_expect_eq(json_number(r.out, gc, "new"), 20000099);
	/* pause time per second: (200 x 20 ms + 19900 ns) / 4 s - (100 x 10 ms
	 * + 4950 ns) / 4 s */
	cr_expect(fabs(json_number(r.out, gc, "impact_ns") - 750003737.5) < 1, "%f",
		  json_number(r.out, gc, "impact_ns"));
	cr_expect(json_has(r.out, rate, "kind", "\"rate\""), "%s", r.out);
	cr_expect_eq(json_number(r.out, rate, "base"), 25);
	cr_expect_eq(json_number(r.out, rate, "new"), 50);
	tool_result_free(&r);
	free(pa);
	free(pb);
	free(da);
	free(db);
}
