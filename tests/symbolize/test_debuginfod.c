/* test_debuginfod.c - the debug file fetched through debuginfod by
 * build-id, from a static HTTP server on loopback that lays files out as a
 * debuginfod server does (buildid/<hex>/debuginfo). Only built with
 * libdebuginfod; skipped when python3 is missing. */
#ifdef HAVE_DEBUGINFOD
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "symbolize/symbolize.h"

/* Starts `python3 -m http.server` on a free loopback port serving dir.
 * Returns its pid and fills port, or -1 if it could not start. */
static pid_t start_http_server(const char *dir, int *port)
{
	char line[256];
	int fds[2];
	FILE *out;
	pid_t pid;

	if (pipe(fds) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		if (freopen("/dev/null", "w", stderr) == NULL)
			_exit(126);
		execlp("python3", "python3", "-u", "-m", "http.server", "0",
		       "--bind", "127.0.0.1", "--directory", dir, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	*port = 0;
	if (out != NULL && fgets(line, sizeof(line), out) != NULL)
		sscanf(line, "Serving HTTP on %*s port %d", port);
	if (out != NULL)
		fclose(out);
	if (*port == 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static void stop_http_server(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

static int resolve_leaf(const char *bin, const char *debug_dir, int debuginfod,
			struct sym_frame *out)
{
	struct symbolizer_opts opts = { .debug_dir = debug_dir,
					.local_files = 1,
					.debuginfod = debuginfod };
	struct symbolizer *s = symbolizer_new(&opts);
	char full[TEST_PATH_MAX];
	uint8_t id[20];
	int len = file_build_id(bin, id), n;

	fixture_path(full, "fixture_prog");
	n = symbolizer_resolve_user(s, bin, id, (size_t)len,
				    function_offset(full, "leaf_work"), out, 1);
	/* out's strings die with s: keep only what the caller checks */
	out->function = out->function ? strdup(out->function) : NULL;
	out->file = out->file ? strdup(out->file) : NULL;
	out->module = NULL;
	symbolizer_free(s);
	return n;
}

Test(debuginfod, fetches_debug_file_by_build_id)
{
	char tmp[TEST_TMP_MAX], stripped[TEST_PATH_MAX], debug[TEST_PATH_MAX];
	char bin[TEST_PATH_MAX], served[2 * TEST_PATH_MAX], srv[TEST_PATH_MAX];
	char url[64], cache[TEST_PATH_MAX], hex[41];
	struct sym_frame f;
	int port;
	pid_t server;

	make_temp_dir(tmp);
	fixture_path(stripped, "fixture_prog.stripped");
	fixture_path(debug, "fixture_prog.debug");
	snprintf(bin, sizeof(bin), "%s/bin/prog", tmp);
	snprintf(srv, sizeof(srv), "%s/srv", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	cr_assert_eq(copy_file(stripped, bin), 0);
	cr_assert_eq(readelf_build_id(bin, hex), 0);
	snprintf(served, sizeof(served), "%s/buildid/%s/debuginfo", srv, hex);
	cr_assert_eq(copy_file(debug, served), 0);
	server = start_http_server(srv, &port);
	if (server < 0) {
		remove_temp_dir(tmp);
		cr_skip_test("python3 http.server unavailable");
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);

	resolve_leaf(bin, tmp, 0, &f);
	cr_assert_eq(f.mode, SYM_MODE_UNRESOLVED, "debuginfod not allowed");
	resolve_leaf(bin, tmp, 1, &f);
	stop_http_server(server);
	cr_assert_str_eq(f.function, "leaf_work");
	cr_assert(ends_with(f.file, "fixture_prog.c"));
	cr_assert_eq(f.line, source_marker_line("fixture_prog.c", "MARK_leaf"));
	cr_assert_eq(f.source, SYM_SRC_DEBUGINFOD);
	free((char *)f.function);
	free((char *)f.file);
	remove_temp_dir(tmp);
}
#endif
