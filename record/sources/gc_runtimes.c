/* gc_runtimes.c - `-e gc`: which runtimes' collectors can be probed, and
 * finding them in the targets (see gc_runtimes.h).
 *
 * The files examined: a command's executable, resolved as execvp would
 * (an interpreter named by a #! line, through /usr/bin/env too), plus,
 * for `java`, the libjvm.so of its JDK (the launcher loads it with
 * dlopen, after exec); a running process's executable and the libraries
 * it maps whose names are a runtime's; at a traced process's exec, its new
 * executable. Each file is examined once and recognized by the
 * table's test (a name, or a Go binary's own sections); a recognized file
 * whose probes are all there gets them planned, one whose probes are not
 * gets a note naming the first missing one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/elf_module.h"
#include "gc_runtimes.h"
#include "session/command.h"
#include "uprobe_target.h"
#include "util/procinfo.h"
#include "util/util.h"

#define GC_PROBES_MAX  6
#define FILES_MAX      256
#define SHEBANG_MAX    256

/* One probe of a runtime: USDT provider:name, or an entry probe on the
 * function `name` (provider NULL). */
struct gc_probe_def {
	const char *provider, *name;
	bool optional;              /* placed when present (newer runtimes) */
	uint8_t go_arg;             /* entry probes: a Go argument register to capture (1..9) */
	bool timed;                 /* a C function's calls: entry and return (never Go code) */
};

struct gc_runtime {
	const char *name;           /* as process_runtimes and gc_pauses name it */
	bool (*recognizes)(const char *base, int fd);
	struct gc_probe_def probes[GC_PROBES_MAX];
	const char *without;        /* why a recognized file may lack them */
	struct gc_probe_def fallback; /* a file without them: this function's calls */
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_python(const char *base, int fd)
{
	(void)fd;
	return starts_with(base, "python3") || starts_with(base, "libpython3");
}

static bool is_hotspot(const char *base, int fd)
{
	(void)fd;
	return strcmp(base, "libjvm.so") == 0;
}

static bool is_go(const char *base, int fd)
{
	(void)base;
	return pc_elf_is_go_fd(fd) == 1;
}

/* The runtimes and their pause probes; the analyzer pairs them by name
 * (analyze/import/load_gc.c's gc_probe_pairs). */
static const struct gc_runtime runtimes[] = {
	/* CPython --with-dtrace: around gc_collect_main(), GIL held; without
	 * dtrace (a pyenv build) that function's calls themselves, when its
	 * symbol is there (.symtab: a static function) */
	{ "python", is_python, { { "python", "gc__start" }, { "python", "gc__done" } },
	  "CPython built without --with-dtrace",
	  { NULL, "gc_collect_main", false, 0, true } },
	/* HotSpot: around a collection's VM operation, inside a safepoint */
	{ "jvm", is_hotspot, { { "hotspot", "gc__begin" }, { "hotspot", "gc__end" } },
	  "a JDK built without dtrace support" },
	/* Go: the world stopped and started (every stop), two functions only
	 * a collection's stops run: sweep termination (finishsweep_m) and
	 * mark termination (gcMarkTermination), and the two functions Go
	 * 1.19+ passes the times of its own account of a collection's pause
	 * to. Entry probes only. */
	{ "go", is_go, { { NULL, "runtime.stopTheWorldWithSema", false },
			 { NULL, "runtime.startTheWorldWithSema", false },
			 { NULL, "runtime.finishsweep_m", false },
			 { NULL, "runtime.gcMarkTermination", false },
			 /* Go 1.19+: (l *gcCPULimiterState, enableGC bool, now int64)
			  * and (l, now int64), the runtime's own times (rcx, rbx) */
			 { NULL, "runtime.(*gcCPULimiterState).startGCTransition", true, 3 },
			 { NULL, "runtime.(*gcCPULimiterState).finishGCTransition", true, 2 } },
	  "a Go runtime whose functions are named otherwise" },
};
#define NRUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

const char *gc_runtimes_known(void)
{
	return "python3.x (USDT python:gc__start/gc__done in the interpreter or libpython), "
	       "HotSpot (USDT hotspot:gc__begin/gc__end in libjvm.so), Go (entry probes on "
	       "runtime.stopTheWorldWithSema/startTheWorldWithSema)";
}

/* ---- the files examined -------------------------------------------------- */

struct gc_file {
	char open[PATH_MAX];        /* how the recorder opens it */
	char shown[PATH_MAX];       /* as the process sees it: the probe's PATH */
	int pid;                    /* whose process, 0: the command */
};

struct gc_walk {
	struct gc_plan *plan;
	size_t room;
	struct gc_file files[FILES_MAX];
	size_t nfiles;
};

static void note(struct gc_plan *plan, const char *text)
{
	size_t used = strlen(plan->notes);

	if (used + 4 < sizeof(plan->notes))
		snprintf(plan->notes + used, sizeof(plan->notes) - used, "%s%s", used ? "; " : "",
			 text);
}

static void add_file(struct gc_walk *w, int pid, const char *shown)
{
	struct gc_file *f;

	if (shown[0] != '/' || strlen(shown) > 900)
		return;   /* not a file; or a path longer than a probe's PATH holds */
	for (size_t i = 0; i < w->nfiles; i++)
		if (strcmp(w->files[i].shown, shown) == 0)
			return;
	if (w->nfiles == FILES_MAX)
		return;
	f = &w->files[w->nfiles++];
	f->pid = pid;
	snprintf(f->shown, sizeof(f->shown), "%s", shown);
	if (pid > 0)
		snprintf(f->open, sizeof(f->open), "/proc/%d/root%s", pid, shown);
	else
		snprintf(f->open, sizeof(f->open), "%s", shown);
}

/* ---- planning one file ------------------------------------------------- */

/* Whether probe d is in the file. 0, or -errno with why filled. */
static int probe_present(const struct gc_file *f, const struct gc_probe_def *d, char *why,
			 size_t len)
{
	struct uprobe_target t;

	if (d->provider) {
		int n = uprobe_usdt_in_file(f->open, f->shown, d->provider, d->name, &t, why, len);

		return n > 0 ? 0 : n < 0 ? n : -ENOENT;
	}
	return uprobe_target_in_file(f->open, f->shown, d->name, &t, why, len);
}

static void plan_probe(struct gc_plan *plan, const struct gc_runtime *r, const struct gc_file *f,
		       const struct gc_probe_def *d)
{
	struct probe_spec *s = &plan->specs[plan->nspecs++];

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%.900s", f->shown);
	snprintf(s->origin, sizeof(s->origin), "gc:%s", r->name);
	if (d->provider) {
		s->kind = PERFCAP_PROBE_USDT;
		s->nargs = PERFCAP_PROBE_ARGS;   /* the note's own first ones, as -e usdt: */
		snprintf(s->provider, sizeof(s->provider), "%s", d->provider);
		snprintf(s->name, sizeof(s->name), "%s", d->name);
		snprintf(s->text, sizeof(s->text), "usdt:%.900s:%s:%s", f->shown, d->provider,
			 d->name);
	} else {
		s->kind = d->timed ? PERFCAP_PROBE_UPROBE : PERFCAP_PROBE_ENTRY;
		snprintf(s->symbol, sizeof(s->symbol), "%s", d->name);
		if (d->go_arg) {
			s->nargs = 1;
			s->arg[0] = d->go_arg;
		}
		snprintf(s->text, sizeof(s->text), "uprobe:%.900s:%s", f->shown, d->name);
	}
}

static size_t probes_of(const struct gc_runtime *r)
{
	size_t n = 0;

	while (n < GC_PROBES_MAX && r->probes[n].name)
		n++;
	return n;
}

/* File f of runtime r lacks its probes (missing says why): its fallback,
 * a function whose calls are the pauses, if the file defines it. */
static void plan_fallback(struct gc_walk *w, const struct gc_runtime *r, const struct gc_file *f,
			  const char *missing)
{
	char why[320], line[800];

	if (!r->fallback.name || probe_present(f, &r->fallback, why, sizeof(why)) != 0) {
		note(w->plan, missing);
		w->plan->unprobed++;
		return;
	}
	if (w->plan->nspecs >= w->room) {
		snprintf(line, sizeof(line), "%.300s: %s probe not placed: at most %d in all",
			 f->shown, r->name, PERFCAP_PROBES_MAX);
		note(w->plan, line);
		return;
	}
	snprintf(line, sizeof(line), "%.400s: timing %s() calls instead", missing, r->fallback.name);
	note(w->plan, line);
	plan_probe(w->plan, r, f, &r->fallback);
	w->plan->runtimes++;
}

/* The probes of runtime r in file f: every required one, or none. */
static void plan_runtime(struct gc_walk *w, const struct gc_runtime *r, const struct gc_file *f)
{
	size_t n = probes_of(r), used = 0;
	bool present[GC_PROBES_MAX];
	char why[320], line[480];

	for (size_t i = 0; i < n; i++) {
		present[i] = probe_present(f, &r->probes[i], why, sizeof(why)) == 0;
		used += present[i];
		if (present[i] || r->probes[i].optional)
			continue;
		snprintf(line, sizeof(line), "%s (%s?)", why, r->without);
		plan_fallback(w, r, f, line);
		return;
	}
	if (w->plan->nspecs + used > w->room) {
		snprintf(line, sizeof(line), "%.300s: %s probes not placed: at most %d in all",
			 f->shown, r->name, PERFCAP_PROBES_MAX);
		note(w->plan, line);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (present[i])
			plan_probe(w->plan, r, f, &r->probes[i]);
	w->plan->runtimes++;
}

static void examine_file(struct gc_walk *w, const struct gc_file *f)
{
	int fd = open(f->open, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return;   /* a mapping gone, or not ours to read: nothing to plan */
	w->plan->files++;
	for (size_t i = 0; i < NRUNTIMES; i++) {
		if (runtimes[i].recognizes(base_name(f->shown), fd)) {
			plan_runtime(w, &runtimes[i], f);
			break;
		}
	}
	close(fd);
}

/* ---- the targets' files -------------------------------------------------- */

struct pid_walk {
	struct gc_walk *w;
	int pid;
};

/* A mapped library is examined when its name is a runtime's (a Go
 * program is its executable). */
static int add_pid_mapping(void *ctx, const struct map_entry *m)
{
	struct pid_walk *pw = ctx;
	const char *base = base_name(m->path);

	if (map_entry_is_file(m) && (is_python(base, -1) || is_hotspot(base, -1)))
		add_file(pw->w, pw->pid, m->path);
	return 0;
}

static void add_process(struct gc_walk *w, int pid)
{
	struct pid_walk pw = { w, pid };
	char exe[PATH_MAX];

	if (procinfo_read_exe((uint32_t)pid, exe, sizeof(exe)) > 0)
		add_file(w, pid, exe);
	procinfo_for_each_exec_map((uint32_t)pid, add_pid_mapping, &pw);
}

/* The interpreter of a #! script, resolved (env's argument by PATH), into
 * out. false if path is not a script. */
static bool shebang(const char *path, char *out, size_t len)
{
	char line[SHEBANG_MAX], *p, *end, *arg;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return false;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	end = p + strcspn(p, " \t");
	arg = *end ? end + 1 : end;
	*end = '\0';
	while (*arg == ' ' || *arg == '\t')
		arg++;
	arg[strcspn(arg, " \t")] = '\0';
	if (strcmp(base_name(p), "env") == 0 && *arg)
		return command_resolve(arg, out, len) == 0;
	snprintf(out, len, "%s", p);
	return true;
}

/* A JDK's java launcher: its libjvm.so, which it loads after exec. */
static void add_jvm_of(struct gc_walk *w, const char *exe, int pid)
{
	char lib[PATH_MAX + 32];
	char *slash;

	if (strcmp(base_name(exe), "java") != 0)
		return;
	snprintf(lib, sizeof(lib), "%s", exe);
	slash = strrchr(lib, '/');
	if (slash)
		*slash = '\0';
	slash = strrchr(lib, '/');   /* JDK/bin -> JDK */
	if (!slash)
		return;
	snprintf(slash, sizeof(lib) - (size_t)(slash - lib), "/lib/server/libjvm.so");
	add_file(w, pid, lib);   /* examined if it can be opened */
}

static void add_command(struct gc_walk *w, const char *argv0)
{
	char path[PATH_MAX], interp[PATH_MAX], real[PATH_MAX];

	if (command_resolve(argv0, path, sizeof(path)))
		return;
	if (shebang(path, interp, sizeof(interp)))
		snprintf(path, sizeof(path), "%s", interp);
	if (!realpath(path, real))
		return;
	add_file(w, 0, real);
	add_jvm_of(w, real, 0);
}

static void add_every_process(struct gc_walk *w)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		int pid = atoi(e->d_name);

		if (pid > 0 && pid != getpid())
			add_process(w, pid);
	}
	closedir(d);
}

/* Executables examined at an exec, probed or not: each is examined (and
 * named, when it lacks its probes) once per recording. */
static char seen_exes[FILES_MAX][128];
static size_t nseen_exes;

static bool seen_before(const char *shown)
{
	if (strlen(shown) >= sizeof(seen_exes[0]))
		return false;
	for (size_t i = 0; i < nseen_exes; i++)
		if (strcmp(seen_exes[i], shown) == 0)
			return true;
	if (nseen_exes < FILES_MAX)
		snprintf(seen_exes[nseen_exes++], sizeof(seen_exes[0]), "%s", shown);
	return false;
}

/* Whether file f needs no examination at this exec: an executable's GC
 * probes are placed for all processes running it, and one without them
 * was named already; a library's are bound to the processes they were
 * placed for, so another process (a second JVM) gets its own. */
static bool probed(const struct gc_file *f, const struct probe_spec *have, size_t nhave)
{
	int fd = open(f->open, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int lib = fd < 0 ? 0 : pc_elf_is_library_fd(fd);

	if (fd >= 0)
		close(fd);
	if (lib == 1)
		return false;
	for (size_t i = 0; i < nhave; i++)
		if (have[i].origin[0] && strcmp(have[i].path, f->shown) == 0)
			return true;   /* probed since the start */
	return seen_before(f->shown);
}

int gc_plan_exec(int pid, const struct probe_spec *have, size_t nhave, size_t room,
		 struct gc_plan *plan)
{
	struct gc_walk *w = calloc(1, sizeof(*w));
	char exe[PATH_MAX];

	memset(plan, 0, sizeof(*plan));
	if (!w)
		return -ENOMEM;
	w->plan = plan;
	w->room = room;
	if (procinfo_read_exe((uint32_t)pid, exe, sizeof(exe)) > 0) {
		struct pid_walk pw = { w, pid };

		add_file(w, pid, exe);
		add_jvm_of(w, exe, pid);
		/* libpython, mapped by the dynamic linker right after the exec */
		procinfo_for_each_exec_map((uint32_t)pid, add_pid_mapping, &pw);
	}
	for (size_t i = 0; i < w->nfiles; i++)
		if (!probed(&w->files[i], have, nhave))
			examine_file(w, &w->files[i]);
	free(w);
	return 0;
}

int gc_plan_targets(const struct record_options *o, size_t room, struct gc_plan *plan)
{
	struct gc_walk *w = calloc(1, sizeof(*w));

	memset(plan, 0, sizeof(*plan));
	if (!w)
		return -ENOMEM;
	w->plan = plan;
	w->room = room;
	if (o->mode == TARGET_COMMAND && o->command && o->command[0])
		add_command(w, o->command[0]);
	else if (o->mode == TARGET_PIDS)
		for (size_t i = 0; i < o->npids; i++)
			add_process(w, (int)o->pids[i]);
	else if (o->mode == TARGET_ALL)
		add_every_process(w);
	for (size_t i = 0; i < w->nfiles; i++)
		examine_file(w, &w->files[i]);
	if (plan->runtimes == 0 && !plan->notes[0])
		note(plan, o->mode == TARGET_COMMAND
				   ? "the command is no runtime with known GC probes (a runtime it "
				     "execs gets them then)"
				   : w->nfiles ? "no runtime with known GC probes in the targets' files"
					       : "no target file to examine");
	free(w);
	return 0;
}
