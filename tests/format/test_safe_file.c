/* test_safe_file.c - format/safe_file.c (issue 16): outputs never follow a
 * planted symlink and are always 0600, FIFO inputs are refused without
 * blocking, and recorded paths cannot leave their root with "..",
 * absolute symlinks or relative ones. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfcap_format.h"
#include "safe_file.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/pcsafe-XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static char *at(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
}

static void assert_victim_intact(void)
{
	char buf[32] = "";
	FILE *f = fopen(at("victim"), "r");

	cr_assert(f);
	cr_assert(fgets(buf, sizeof(buf), f));
	fclose(f);
	cr_assert_str_eq(buf, "victim\n", "the symlink's target was written");
}

static void assert_new_0600(const char *path)
{
	struct stat sb;

	cr_assert_eq(lstat(path, &sb), 0);
	cr_assert(S_ISREG(sb.st_mode), "%s is not a regular file", path);
	cr_assert_eq(sb.st_mode & 0777, 0600, "mode %o", sb.st_mode & 0777);
	cr_assert_eq(sb.st_size, 0);
}

TestSuite(safe_file, .init = make_dir, .fini = remove_dir);

Test(safe_file, output_never_follows_a_symlink)
{
	int fd;

	write_text(at("victim"), "victim\n", 0644);
	cr_assert_eq(symlink(at("victim"), at("link")), 0);
	cr_assert_eq(pc_create_output(at("link"), 0), -EEXIST);
	fd = pc_create_output(at("link"), 1);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	cr_assert_eq(write(fd, "capture", 7), 7);
	close(fd);
	assert_victim_intact();

	cr_assert_eq(symlink(at("nothere"), at("dangling")), 0);
	cr_assert_eq(pc_create_output(at("dangling"), 0), -EEXIST);
	cr_assert_eq(access(at("nothere"), F_OK), -1, "a dangling link created its target");
	fd = pc_create_output(at("dangling"), 1);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(access(at("nothere"), F_OK), -1, "a dangling link created its target");
	assert_new_0600(at("dangling"));
}

Test(safe_file, overwritten_output_is_0600_and_odd_files_are_refused)
{
	int fd;

	write_text(at("old"), "old contents\n", 0644);
	fd = pc_create_output(at("old"), 1);
	cr_assert_geq(fd, 0);
	close(fd);
	assert_new_0600(at("old"));

	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	cr_assert_eq(pc_create_output(at("fifo"), 1), -EINVAL);
	cr_assert_eq(mkdir(at("sub"), 0700), 0);
	cr_assert_eq(pc_create_output(at("sub"), 1), -EISDIR);
}

Test(safe_file, writer_replaces_a_link_not_its_target)
{
	struct pc_writer *w;

	write_text(at("victim"), "victim\n", 0644);
	cr_assert_eq(symlink(at("victim"), at("run.perfcap")), 0);
	cr_assert_eq(pc_writer_open(&w, at("run.perfcap"), 0), -EEXIST);
	cr_assert_eq(pc_writer_open(&w, at("run.perfcap"), PC_WRITE_FORCE), 0);
	cr_assert_eq(pc_writer_finish(w, NULL), 0);
	assert_victim_intact();
}

Test(safe_file, temp_beside_is_new_0600_and_unpredictable)
{
	char *a, *b;
	int fa = pc_create_temp_beside(at("page.html"), &a);
	int fb = pc_create_temp_beside(at("page.html"), &b);

	cr_assert_geq(fa, 0);
	cr_assert_geq(fb, 0);
	cr_assert_str_neq(a, b);
	cr_assert_eq(strncmp(a, at("page.html.tmp-"), strlen(at("page.html.tmp-"))), 0);
	assert_new_0600(a);
	close(fa);
	close(fb);
	free(a);
	free(b);
}

Test(safe_file, fifo_input_is_refused_without_blocking, .timeout = 10)
{
	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	cr_assert_eq(pc_open_regular(at("fifo"), 0), -EINVAL);
	cr_assert_eq(pc_open_confined(dir, "/fifo"), -EINVAL);
	cr_assert_null(pc_fopen_regular(at("fifo")));
	cr_assert_eq(pc_open_regular("/dev/null", 0), -EINVAL);
}

Test(safe_file, normalise)
{
	const char *cases[][2] = {
		{ "/a/../../../../etc/passwd", "/etc/passwd" }, { "../x", "x" },
		{ "//usr/./lib//libc.so.6", "/usr/lib/libc.so.6" }, { "/..", "/" },
		{ "a/b/../c/", "a/c" }, { "/a/b/..", "/a" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[64];
		strcpy(buf, cases[i][0]);
		pc_path_normalise(buf);
		cr_assert_str_eq(buf, cases[i][1], "normalise(%s)", cases[i][0]);
	}
}

Test(safe_file, recorded_paths_stay_inside_their_root)
{
	int fd;

	cr_assert_eq(mkdir(at("symfs"), 0700), 0);
	cr_assert_eq(mkdir(at("symfs/lib"), 0700), 0);
	write_text(at("secret"), "secret\n", 0600);
	write_text(at("symfs/lib/ok.so"), "ok\n", 0600);
	cr_assert_eq(symlink(at("secret"), at("symfs/lib/abs.so")), 0);
	cr_assert_eq(symlink("../../secret", at("symfs/lib/rel.so")), 0);

	fd = pc_open_confined(at("symfs"), "/lib/ok.so");
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	close(fd);
	cr_assert_lt(pc_open_confined(at("symfs"), "/lib/../../secret"), 0, "'..' escaped");
	cr_assert_lt(pc_open_confined(at("symfs"), "../secret"), 0, "'..' escaped");
	cr_assert_lt(pc_open_confined(at("symfs"), "/lib/abs.so"), 0, "absolute link escaped");
	cr_assert_lt(pc_open_confined(at("symfs"), "/lib/rel.so"), 0, "relative link escaped");
	cr_assert_eq(pc_open_confined(at("symfs"), "/lib"), -EINVAL, "a directory was opened");
}
