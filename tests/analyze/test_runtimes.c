/* test_runtimes.c - util/runtimes.c: which runtime a process runs, from
 * its executable, argv[0], mapped files and Go symbols (no I/O). */
#include <criterion/criterion.h>
#include <string.h>

#include "util/runtimes.h"

static int identify(const char *exe, const char *argv0, const char *const *maps, int go,
		    struct runtime_guess *g)
{
	size_t n = 0;

	while (maps && maps[n])
		n++;
	struct runtime_facts f = { .exe = exe, .argv0 = argv0, .maps = maps, .nmaps = n,
				   .go_symbols = go };
	return runtime_identify(&f, g);
}

Test(runtimes, jvm_by_libjvm_with_version)
{
	const char *maps[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", NULL };
	struct runtime_guess g;

	cr_assert(identify("/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "java", maps, 0, &g));
	cr_assert_str_eq(g.runtime, "jvm");
	cr_assert_str_eq(g.version, "17");
	cr_assert_geq(g.confidence, 90);
	cr_assert(strstr(g.evidence, "libjvm.so"));
	cr_assert(strstr(g.advice, "PreserveFramePointer"));
}

Test(runtimes, python_versions_and_advice)
{
	struct runtime_guess g;

	cr_assert(identify("/usr/bin/python3.11", "python3", NULL, 0, &g));
	cr_assert_str_eq(g.runtime, "python");
	cr_assert_str_eq(g.version, "3.11");
	cr_assert(strstr(g.advice, "usdt"), "3.11 has no -X perf: %s", g.advice);
	cr_assert(identify("/opt/py/bin/python3.12", NULL, NULL, 0, &g));
	cr_assert_str_eq(g.version, "3.12");
	cr_assert(strstr(g.advice, "-X perf"));
	const char *maps[] = { "/usr/lib/libpython3.13.so.1.0", NULL };
	cr_assert(identify("/usr/bin/uwsgi", "uwsgi", maps, 0, &g));
	cr_assert_str_eq(g.runtime, "python");
	cr_assert_str_eq(g.version, "3.13");
}

Test(runtimes, node_go_and_nothing)
{
	struct runtime_guess g;

	cr_assert(identify("/usr/bin/node", "node", NULL, 0, &g));
	cr_assert_str_eq(g.runtime, "node");
	cr_assert(strstr(g.advice, "--perf-basic-prof"));
	cr_assert(identify("/srv/app", "/srv/app", NULL, 1, &g));
	cr_assert_str_eq(g.runtime, "go");
	cr_assert_eq(g.confidence, 85);
	const char *maps[] = { "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL };
	cr_assert_not(identify("/usr/bin/redis-server", "redis-server", maps, 0, &g));
	cr_assert_not(identify(NULL, NULL, NULL, 0, &g));
}

Test(runtimes, launcher_argv0_is_weaker_than_the_exe)
{
	struct runtime_guess g;

	/* a process started as "java" that is really something else */
	cr_assert(identify("/usr/bin/bash", "java", NULL, 0, &g));
	cr_assert_str_eq(g.runtime, "jvm");
	cr_assert_eq(g.confidence, 60);
	/* exe and argv[0] agree: not counted twice */
	cr_assert(identify("/usr/bin/node", "node", NULL, 0, &g));
	cr_assert_eq(g.confidence, 80);
}
