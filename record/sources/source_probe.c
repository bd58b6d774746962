/* source_probe.c - the probe source: user probes named in -e
 * (`uprobe:PATH:SYMBOL[(ARGS)]`, `usdt:PATH:PROVIDER:NAME`, probe_spec.c),
 * one PROBE record per call or hit (bpf/uprobe.bpf.c) and exact per-probe
 * counts kept in the kernel (hits, calls, total time, log2 histogram of
 * call durations), written to STATS whatever records --probe-min,
 * --sample or --rate-cap left out.
 *
 * Where the probes go: with a pid filter (-p, or a command) a probe on a
 * shared library (an ELF file with a DT_SONAME) is attached once per
 * initial target process, bound to that pid, so only the traced processes
 * take its breakpoint (children forked later are not probed); a probe on
 * an executable is attached for every process running it and the
 * program's pid filter keeps the traced ones, children included (a shell
 * script that runs python). PATH is resolved in the first target's own
 * root (/proc/PID/root/PATH: containers), and the kernel keeps a probe
 * across the command's exec (it is held before exec when the probes are
 * attached, and its exec maps PATH). With -a a probe is attached for
 * every process and the kernel filters (--comm, --cgroup) apply.
 *
 * uprobes: the function is looked up in PATH's symbols (.symtab and
 * .dynsym) by our own ELF reader (uprobe_target.c), so the META carries the
 * file offset and build-id that were probed; an entry probe and a return
 * probe are attached with the probe's index as BPF cookie. USDT: libbpf's
 * bpf_program__attach_usdt() (libbpf >= 0.8) reads the SDT notes, attaches
 * every site of the probe, sets the semaphore through the kernel's
 * reference counter and hands the argument specs to usdt.bpf.h; the probe
 * index travels as its USDT cookie.
 *
 * Go code gets entry probes only (PERFCAP_PROBE_ENTRY, a hit per call):
 * a uretprobe replaces the return address on the stack, and Go copies a
 * goroutine's stack when it grows, so the return would jump to the
 * trampoline of a stack that moved; `uprobe:` on a Go binary (recognized
 * by its .go.buildinfo / Go build-id note) becomes an entry probe, one
 * asking for arguments or `ret` is refused (Go's register ABI is not the
 * C one). A stripped Go binary's functions come from its pclntab.
 *
 * `-e gc` adds the GC probes of the targets' runtimes (gc_runtimes.h)
 * after the user's, placed the same way, written without user stacks,
 * each with its origin in META (probe.N.origin = gc:RUNTIME); the targets
 * that got none are named with the reason (probe.gc.notes, and stderr).
 *
 * A probe that cannot be attached is named on stderr with the reason and
 * in META (probe.N.failed); --strict makes it fatal; the source fails when
 * no probe attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "common/elf_module.h"
#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "uprobe.skel.h"
#include "gc_runtimes.h"
#include "probe_spec.h"
#include "session/shared_maps.h"
#include "source.h"
#include "uprobe_target.h"
#include "util/util.h"

#define PROBE_PIDS_MAX 64          /* initial targets probed */
#define PROBE_WHY_MAX  320

struct probe_state {
	const struct probe_spec *spec;
	char path[PATH_MAX];           /* the file probed (first process) */
	uint64_t offset;               /* file offset of the function (USDT: its first site) */
	unsigned sites;                /* USDT: the probe's sites in the file */
	uint8_t build_id_len;
	uint8_t build_id[20];
	char attached[512];            /* "all", or the pids */
	unsigned nattached;
	char failed[PROBE_WHY_MAX];    /* why it did not attach (first reason) */
	const char *placement;         /* how it was placed (META probe.N.placement) */
};

static struct uprobe_bpf *skel;
static struct probe_spec specs[PERFCAP_PROBES_MAX]; /* the user's, then -e gc's */
static struct gc_plan gc_plan, gc_late;  /* at load; for a process that exec'd */
static bool gc_on;                        /* -e gc */
static size_t nprobes_in_meta;            /* the rest are described in STATS */
static unsigned gc_late_runtimes;
static struct probe_state probes[PERFCAP_PROBES_MAX];
static size_t nprobes;
static struct bpf_link **links;
static size_t nlinks;
static uint64_t probe_records;

/* ---- loading ------------------------------------------------------------ */

static bool any_of_kind(uint8_t kind)
{
	for (size_t i = 0; i < nprobes; i++)
		if (specs[i].kind == kind && !probes[i].failed[0])
			return true;
	return false;
}

static int resolve_path(const struct probe_spec *s, int pid, char *out, size_t len,
			char *why, size_t whylen);

/* The pid whose root absolute probe paths are resolved in before attach:
 * the first -p process (a command shares ours). */
static int load_root_pid(const struct record_options *o)
{
	return o->mode == TARGET_PIDS && o->npids > 0 ? (int)o->pids[0] : -1;
}

/* A uprobe on a Go binary becomes an entry probe; one asking for values
 * is refused (probe_state.failed). */
static void check_go(struct probe_state *p, struct probe_spec *s, int root_pid)
{
	char path[PATH_MAX], why[PROBE_WHY_MAX];

	if (s->kind != PERFCAP_PROBE_UPROBE ||
	    resolve_path(s, root_pid, path, sizeof(path), why, sizeof(why)) ||
	    uprobe_file_is_go(path) != 1)
		return;
	if (s->nargs) {
		snprintf(p->failed, sizeof(p->failed), "%.120s is a Go binary: entry probes only, "
			 "no (ret) or (argN) (a return probe would crash it; Go's register ABI "
			 "is not C's)", s->path);
		return;
	}
	s->kind = PERFCAP_PROBE_ENTRY;
	warning_line("probe '%s': %s is a Go binary: entry only (calls counted, no latency: a "
		     "return probe would crash it)", s->text, s->path);
}

static bool same_probe(const struct probe_spec *a, const struct probe_spec *b)
{
	return strcmp(a->path, b->path) == 0 && strcmp(a->name, b->name) == 0 &&
	       strcmp(a->provider, b->provider) == 0 && strcmp(a->symbol, b->symbol) == 0;
}

/* Whether the user already named probe s (same file and probe). */
static bool user_named(const struct probe_spec *s, size_t nuser)
{
	for (size_t i = 0; i < nuser; i++)
		if (same_probe(&specs[i], s))
			return true;
	return false;
}

/* specs[]: the user's probes, then the GC probes -e gc found (but the
 * ones the user named: their hits would pair twice). */
static int collect_specs(const struct record_options *o, char *why, size_t len)
{
	nprobes = 0;
	for (size_t i = 0; i < o->nprobes && i < PERFCAP_PROBES_MAX; i++)
		specs[nprobes++] = o->probes[i];
	if (!o->gc_probes)
		return 0;
	if (gc_plan_targets(o, PERFCAP_PROBES_MAX - nprobes, &gc_plan)) {
		snprintf(why, len, "gc: out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0, nuser = nprobes; i < gc_plan.nspecs; i++)
		if (!user_named(&gc_plan.specs[i], nuser))
			specs[nprobes++] = gc_plan.specs[i];
	if (nprobes == 0 && o->mode != TARGET_COMMAND) {   /* the recorder names it */
		snprintf(why, len, "gc: %s (known: %s)", gc_plan.notes, gc_runtimes_known());
		return -ENOENT;
	}
	if (gc_plan.notes[0])
		warning_line("gc: %s", gc_plan.notes);
	return 0;   /* a command may exec a runtime later (a wrapper script) */
}

static void configure(struct perfcap_probe_conf *c, const struct probe_spec *s)
{
	c->kind = s->kind;
	c->nargs = s->nargs;
	memcpy(c->arg, s->arg, sizeof(c->arg));
	c->no_stack = s->origin[0] != '\0';
}

static int probe_load(const struct source_env *env, char *why, size_t len)
{
	const struct record_options *o = env->opts;
	int err = collect_specs(o, why, len);

	if (err)
		return err;
	for (size_t i = 0; i < nprobes; i++) {
		memset(&probes[i], 0, sizeof(probes[i]));
		probes[i].spec = &specs[i];
		check_go(&probes[i], &specs[i], load_root_pid(o));
	}
	skel = uprobe_bpf__open();
	if (!skel)
		return source_open_failed(why, len);
	/* -e gc may place any kind later, when a traced process execs (a
	 * timed uprobe: a CPython without USDT) */
	bpf_program__set_autoload(skel->progs.probe_entry,
				  any_of_kind(PERFCAP_PROBE_UPROBE) || o->gc_probes);
	bpf_program__set_autoload(skel->progs.probe_return,
				  any_of_kind(PERFCAP_PROBE_UPROBE) || o->gc_probes);
	bpf_program__set_autoload(skel->progs.probe_usdt,
				  any_of_kind(PERFCAP_PROBE_USDT) || o->gc_probes);
	bpf_program__set_autoload(skel->progs.probe_hit,
				  any_of_kind(PERFCAP_PROBE_ENTRY) || o->gc_probes);
	skel->rodata->pc_config = *env->config;
	skel->rodata->probe_min_ns = o->probe_min_ns;
	skel->rodata->probe_stacks = !o->probe_no_stack;
	for (size_t i = 0; i < nprobes; i++)
		configure((struct perfcap_probe_conf *)&skel->bss->probe_conf[i], &specs[i]);
	gc_on = o->gc_probes;
	err = source_reuse_shared_maps(env, skel->obj, why, len);
	if (!err)
		err = source_loaded(uprobe_bpf__load(skel), "cannot load the BPF programs", why, len);
	return err;
}

/* ---- attaching ------------------------------------------------------------ */

static int keep_link(struct bpf_link *link)
{
	struct bpf_link **more = realloc(links, (nlinks + 1) * sizeof(*links));

	if (!more) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	links = more;
	links[nlinks++] = link;
	return 0;
}

/* PATH as process pid sees it (pid -1: as we do). Relative paths are taken
 * from our working directory, which a command shares. */
static int resolve_path(const struct probe_spec *s, int pid, char *out, size_t len,
			char *why, size_t whylen)
{
	char cwd[PATH_MAX];
	int n;

	if (s->path[0] == '/')
		n = pid > 0 ? snprintf(out, len, "/proc/%d/root%s", pid, s->path)
			    : snprintf(out, len, "%s", s->path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, len, "%s/%s", cwd, s->path);
	else
		n = -1;
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, whylen, "%.200s: path too long", s->path);
		return -ENAMETOOLONG;
	}
	if (access(out, R_OK) != 0) {
		n = -errno;
		snprintf(why, whylen, "%.200s: %s%s", s->path, strerror(errno),
			 pid > 0 && s->path[0] == '/' ? " (in the process's root)" : "");
		return n;
	}
	return 0;
}

/* The first place a probe was attached: what META says about it. */
static void note_first_target(struct probe_state *p, const char *shown, uint64_t offset,
			      const struct uprobe_target *t)
{
	if (p->path[0])
		return;
	snprintf(p->path, sizeof(p->path), "%s", shown);
	p->offset = offset;
	p->build_id_len = t->build_id_len;
	memcpy(p->build_id, t->build_id, sizeof(p->build_id));
}

/* path without the /proc/PID/root prefix resolve_path() put before it. */
static const char *in_root(const char *path, int pid)
{
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), "/proc/%d/root", pid);

	return pid > 0 && strncmp(path, prefix, (size_t)n) == 0 && path[n] == '/' ? path + n
										   : path;
}

static int attach_uprobe(struct probe_state *p, int index, int pid, const char *path,
			 const char *shown, char *why, size_t len)
{
	struct uprobe_target t;
	struct bpf_link *entry, *ret;
	int err = uprobe_target_in_file(path, p->spec->path, p->spec->symbol, &t, why, len);

	if (err)
		return err;
	{
		LIBBPF_OPTS(bpf_uprobe_opts, eo, .bpf_cookie = (uint64_t)index);
		LIBBPF_OPTS(bpf_uprobe_opts, ro, .bpf_cookie = (uint64_t)index, .retprobe = true);

		/* the return probe first: an entry never misses its return */
		ret = bpf_program__attach_uprobe_opts(skel->progs.probe_return, pid, path,
						      t.offset, &ro);
		err = (int)libbpf_get_error(ret);
		if (!err && (err = keep_link(ret)) == 0) {
			entry = bpf_program__attach_uprobe_opts(skel->progs.probe_entry, pid, path,
								t.offset, &eo);
			err = (int)libbpf_get_error(entry);
			if (!err)
				err = keep_link(entry);
		}
	}
	if (err) {
		source_explain(why, len, "cannot attach the uprobe", err);
		return err;
	}
	note_first_target(p, shown, t.offset, &t);
	return 0;
}

/* An entry probe: the function's first instruction only, never its return. */
static int attach_entry(struct probe_state *p, int index, int pid, const char *path,
			const char *shown, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_uprobe_opts, eo, .bpf_cookie = (uint64_t)index);
	struct uprobe_target t;
	struct bpf_link *entry;
	uint64_t at;
	int err = uprobe_target_in_file(path, p->spec->path, p->spec->symbol, &t, why, len);

	if (err)
		return err;
	if (uprobe_go_branch_offset(path, t.offset, &at))
		at = t.offset;
	entry = bpf_program__attach_uprobe_opts(skel->progs.probe_hit, pid, path, at, &eo);
	err = (int)libbpf_get_error(entry);
	if (!err)
		err = keep_link(entry);
	if (err) {
		source_explain(why, len, "cannot attach the entry probe", err);
		return err;
	}
	note_first_target(p, shown, at, &t);
	return 0;
}

static int attach_usdt(struct probe_state *p, int index, int pid, const char *path,
		       const char *shown, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_usdt_opts, opts, .usdt_cookie = (uint64_t)index);
	struct uprobe_target t;
	struct bpf_link *link;
	int sites, err;

	/* our own look at the notes: a clear reason, and the META's offset */
	sites = uprobe_usdt_in_file(path, p->spec->path, p->spec->provider, p->spec->name, &t,
				    why, len);
	if (sites < 0)
		return sites;
	link = bpf_program__attach_usdt(skel->progs.probe_usdt, pid, path, p->spec->provider,
					p->spec->name, &opts);
	err = (int)libbpf_get_error(link);
	if (err) {
		source_explain(why, len, "cannot attach the USDT probe", err);
		return err;
	}
	err = keep_link(link);
	if (!err && !p->path[0]) {
		snprintf(p->path, sizeof(p->path), "%s", shown);
		p->offset = t.offset;
		p->sites = (unsigned)sites;
		p->build_id_len = t.build_id_len;
		memcpy(p->build_id, t.build_id, sizeof(p->build_id));
	}
	return err;
}

/* Attaches probe p for process pid (-1: every process), PATH resolved in
 * the root of process root_pid (-1: ours). */
static int attach_one(struct probe_state *p, int index, int pid, int root_pid, char *why,
		      size_t len)
{
	char path[PATH_MAX];
	const char *shown;
	size_t used;
	int err = resolve_path(p->spec, root_pid, path, sizeof(path), why, len);

	if (err)
		return err;
	shown = in_root(path, root_pid);
	if (p->spec->kind == PERFCAP_PROBE_USDT)
		err = attach_usdt(p, index, pid, path, shown, why, len);
	else if (p->spec->kind == PERFCAP_PROBE_ENTRY)
		err = attach_entry(p, index, pid, path, shown, why, len);
	else
		err = attach_uprobe(p, index, pid, path, shown, why, len);
	if (err)
		return err;
	used = strlen(p->attached);
	if (pid < 0)
		snprintf(p->attached, sizeof(p->attached), "all");
	else
		snprintf(p->attached + used, sizeof(p->attached) - used, "%s%d", used ? "," : "",
			 pid);
	p->nattached++;
	return 0;
}

/* Is PATH, as process root_pid sees it, an executable (not a shared
 * library: no DT_SONAME)? Unreadable files say no: the per-pid path then
 * names the reason. */
static bool is_executable(const struct probe_spec *s, int root_pid)
{
	char path[PATH_MAX], why[PROBE_WHY_MAX];
	int fd, lib;

	if (resolve_path(s, root_pid, path, sizeof(path), why, sizeof(why)))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	lib = pc_elf_is_library_fd(fd);
	close(fd);
	return lib == 0;
}

/* Probe index on the targets (pids[0] -1: every process, -a). A probe on
 * an executable is placed once for every process running it, and the
 * program's pid filter keeps the traced ones, so children that a target
 * forks and execs later (a shell running python) are probed too; a probe
 * on a shared library is bound to each target, so the other processes
 * mapping the library never take its breakpoint. */
static void attach_probe(int index, const int *pids, size_t npids)
{
	struct probe_state *p = &probes[index];
	char why[PROBE_WHY_MAX];

	if (p->failed[0])
		return; /* refused at load */
	if (npids > 0 && pids[0] > 0 && is_executable(p->spec, pids[0])) {
		p->placement = "executable: every process running it, traced ones kept in the kernel";
		if (attach_one(p, index, -1, pids[0], why, sizeof(why)))
			snprintf(p->failed, sizeof(p->failed), "%s", why);
		return;
	}
	p->placement = pids[0] > 0 ? "bound to each target process" : "every process (-a)";
	for (size_t i = 0; i < npids; i++) {
		if (attach_one(p, index, pids[i], pids[i], why, sizeof(why)) == 0)
			continue;
		if (!p->failed[0])
			snprintf(p->failed, sizeof(p->failed), "%s", why);
		if (npids > 1)
			warning_line("probe %d '%s': not in process %d: %s", index, p->spec->text,
				     pids[i], why);
	}
}

static void probe_detach(void);

static int probe_attach(const struct source_env *env, char *why, size_t len)
{
	int pids[PROBE_PIDS_MAX] = { -1 };
	size_t npids = 1, more = 0, attached = 0;
	int failed = -1;

	if (env->config->filter_pids) {
		npids = uprobe_initial_targets(env->maps->targets_fd, pids, PROBE_PIDS_MAX, &more);
		if (more)
			warning_line("probe: probes in the first %d target processes only (%zu more "
				     "not probed)", PROBE_PIDS_MAX, more);
	}
	for (size_t i = 0; i < nprobes; i++) {
		attach_probe((int)i, pids, npids);
		if (probes[i].nattached)
			attached++;
		else if (failed < 0)
			failed = (int)i;
	}
	if (failed >= 0 && (env->opts->strict || attached == 0)) {
		/* the recorder names the source's failure: one line */
		snprintf(why, len, "probe %d '%s': %s%s", failed, probes[failed].spec->text,
			 npids ? probes[failed].failed : "no target process",
			 nprobes - attached > 1 ? " (and more probes: see the META)" : "");
		probe_detach();
		return -ENOENT;
	}
	for (size_t i = 0; i < nprobes; i++)
		if (probes[i].nattached == 0)
			warning_line("not recording probe %zu '%s': %s", i, probes[i].spec->text,
				     probes[i].failed);
	return 0;
}

static void probe_detach(void)
{
	if (skel && skel->bss)
		skel->bss->probes_off = true;   /* all at once: their removal is slow */
	while (nlinks > 0)
		bpf_link__destroy(links[--nlinks]);
	free(links);
	links = NULL;
}

static void probe_destroy(void)
{
	probe_detach();
	uprobe_bpf__destroy(skel);
	skel = NULL;
}

/* ---- -e gc: processes that exec a runtime while recorded ------------------- */

/* Traced process pid exec'd: the GC probes of its runtime, when its file
 * is not probed yet, attached while it runs (its first milliseconds are
 * not probed: the exec was seen after the fact). */
/* Whether probe s, user's or -e gc's, already covers process pid (placed
 * for every process, or bound to pid: a command's libjvm.so, placed
 * before its exec). */
static bool covered(const struct probe_spec *s, int pid)
{
	char me[16];

	snprintf(me, sizeof(me), "%d", pid);
	for (size_t i = 0; i < nprobes; i++) {
		const char *a = probes[i].attached;
		size_t n = strlen(me);

		if (!same_probe(&specs[i], s))
			continue;
		if (strcmp(a, "all") == 0)
			return true;
		for (const char *p = strstr(a, me); p; p = strstr(p + 1, me))
			if ((p == a || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
				return true;
	}
	return false;
}

/* Places the GC probes of process pid's runtime; quiet: say nothing
 * unless some were placed. Returns the runtimes probed, or -1 when the
 * process runs a runtime whose file lacks them (its libraries may come). */
static int gc_place(int pid, bool quiet)
{
	size_t first = nprobes;

	if (gc_plan_exec(pid, specs, nprobes, PERFCAP_PROBES_MAX - nprobes, &gc_late))
		return 0;
	if (gc_late.notes[0] && (!quiet || gc_late.nspecs))
		warning_line("gc: process %d: %s", pid, gc_late.notes);
	for (size_t i = 0; i < gc_late.nspecs && nprobes < PERFCAP_PROBES_MAX; i++) {
		if (covered(&gc_late.specs[i], pid))
			continue;
		specs[nprobes] = gc_late.specs[i];
		memset(&probes[nprobes], 0, sizeof(probes[nprobes]));
		probes[nprobes].spec = &specs[nprobes];
		nprobes++;
	}
	for (size_t i = first; i < nprobes; i++) {
		attach_probe((int)i, &pid, 1);
		if (probes[i].nattached == 0)
			warning_line("not recording probe %zu '%s': %s", i, specs[i].text,
				     probes[i].failed);
	}
	/* live together once all are attached (each attach takes a while, and
	 * a begin whose end is not probed yet would never pair); the begins,
	 * first in the runtime's list, last */
	for (size_t i = nprobes; i-- > first;)
		configure((struct perfcap_probe_conf *)&skel->bss->probe_conf[i], &specs[i]);
	gc_late_runtimes += gc_late.runtimes;
	return gc_late.runtimes ? (int)gc_late.runtimes : gc_late.unprobed ? -1 : 0;
}

/* Processes whose executable is a runtime's without its GC probes, looked
 * at again for a while: the dynamic linker maps the library that has them
 * (a pyenv python's libpython) just after the exec the recorder saw. */
#define GC_RETRY_MAX   16
#define GC_RETRY_TICKS 30   /* polls: about 300 ms */

static struct { int pid, ticks; } gc_retry[GC_RETRY_MAX];

static void gc_on_exec(int pid)
{
	if (gc_place(pid, false) >= 0)
		return;
	for (size_t i = 0; i < GC_RETRY_MAX; i++) {
		if (gc_retry[i].ticks == 0) {
			gc_retry[i].pid = pid;
			gc_retry[i].ticks = GC_RETRY_TICKS;
			return;
		}
	}
}

static void gc_retry_tick(void)
{
	for (size_t i = 0; i < GC_RETRY_MAX; i++) {
		if (gc_retry[i].ticks == 0)
			continue;
		if (gc_place(gc_retry[i].pid, true) > 0 || nprobes >= PERFCAP_PROBES_MAX)
			gc_retry[i].ticks = 0;
		else
			gc_retry[i].ticks--;
	}
}

static void probe_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	(void)now_ns;
	if (!gc_on || final || !skel)
		return;
	gc_retry_tick();
	for (size_t i = 0; i < c->nexec_pids && nprobes < PERFCAP_PROBES_MAX; i++)
		gc_on_exec((int)c->exec_pids[i]);
}

/* ---- records ------------------------------------------------------------ */

static void handle_probe(struct consumer *c, const struct perfcap_probe *e)
{
	uint32_t aspace = consumer_process(c, e->pid, e->tid, e->comm, e->h.ts);
	struct pc_rec_probe rec = {
		.h.type = PC_REC_PROBE,
		.h.flags = (e->h.flags & PERFCAP_PROBE_F_TIMED) ? PC_PROBE_F_TIMED : 0,
		.ts = e->h.ts,
		.duration = e->duration,
		.pid = e->pid,
		.tid = e->tid,
		.probe = e->probe,
		.nargs = e->nargs <= PC_PROBE_ARGS ? e->nargs : PC_PROBE_ARGS,
	};

	memcpy(rec.args, e->args, sizeof(rec.args));
	rec.ustack = consumer_user_stack_id(c, PERFCAP_SRC_PROBE, e->ustack, aspace, e->pid,
					    e->h.ts);
	if (consumer_add_event(c, PERFCAP_SRC_PROBE, &rec, sizeof(rec), e->h.ts) == 0)
		probe_records++;
}

static void probe_handle(struct consumer *c, const void *rec, size_t size)
{
	const struct perfcap_event_header *h = rec;

	if (h->type == PERFCAP_EV_PROBE && size >= sizeof(struct perfcap_probe) &&
	    ((const struct perfcap_probe *)rec)->probe < nprobes)
		handle_probe(c, rec);
	else
		consumer_drop(c, PERFCAP_SRC_PROBE);
}

/* ---- metadata and counters ------------------------------------------------ */

static int kv_probe(struct chunk_buffer *kv, size_t i, const char *field, const char *value)
{
	char key[64];

	snprintf(key, sizeof(key), "probe.%zu.%s", i, field);
	return chunk_buffer_add_kv(kv, key, value);
}

static int kv_probe_u64(struct chunk_buffer *kv, size_t i, const char *field, uint64_t v)
{
	char key[64];

	snprintf(key, sizeof(key), "probe.%zu.%s", i, field);
	return chunk_buffer_add_kv_u64(kv, key, v);
}

/* META probe.N.kind */
static const char *kind_name(uint8_t kind)
{
	return kind == PERFCAP_PROBE_USDT ? "usdt" : kind == PERFCAP_PROBE_ENTRY ? "entry"
										  : "uprobe";
}

static int meta_one(struct chunk_buffer *kv, size_t i)
{
	const struct probe_state *p = &probes[i];
	const struct probe_spec *s = p->spec;
	char text[256], hex[41];
	int err = 0;

	err |= kv_probe(kv, i, "spec", s->text);
	err |= kv_probe(kv, i, "kind", kind_name(s->kind));
	if (s->origin[0])
		err |= kv_probe(kv, i, "origin", s->origin);
	err |= kv_probe(kv, i, "file", s->path);
	if (s->kind == PERFCAP_PROBE_USDT) {
		snprintf(text, sizeof(text), "%s:%s", s->provider, s->name);
		err |= kv_probe(kv, i, "name", text);
	} else {
		err |= kv_probe(kv, i, "name", s->symbol);
	}
	probe_spec_args_text(s, text, sizeof(text));
	err |= kv_probe(kv, i, "args", s->kind == PERFCAP_PROBE_USDT ? "usdt" : text);
	if (p->nattached) {
		err |= kv_probe(kv, i, "path", p->path);
		for (int b = 0; b < p->build_id_len && b < 20; b++)
			snprintf(hex + 2 * b, 3, "%02x", p->build_id[b]);
		hex[2 * (p->build_id_len < 20 ? p->build_id_len : 20)] = '\0';
		err |= kv_probe(kv, i, "build_id", hex);
		err |= kv_probe_u64(kv, i, "offset", p->offset);
		if (s->kind == PERFCAP_PROBE_USDT)
			err |= kv_probe_u64(kv, i, "sites", p->sites);
		err |= kv_probe(kv, i, "attached", p->attached);
		err |= kv_probe(kv, i, "placement", p->placement ? p->placement : "");
	}
	if (p->failed[0])
		err |= kv_probe(kv, i, "failed", p->failed);
	return err;
}

static int probe_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "probe.count", nprobes);
	err |= chunk_buffer_add_kv_u64(kv, "probe.min_ns", env->opts->probe_min_ns);
	err |= chunk_buffer_add_kv(kv, "probe.stacks", env->opts->probe_no_stack ? "no" : "yes");
	err |= chunk_buffer_add_kv_u64(kv, "probe.calls_max", PERFCAP_PROBE_CALLS_MAX);
	err |= chunk_buffer_add_kv_u64(kv, "probe.depth_max", PERFCAP_PROBE_DEPTH);
	if (env->opts->gc_probes) {
		err |= chunk_buffer_add_kv(kv, "probe.gc", "yes");
		err |= chunk_buffer_add_kv_u64(kv, "probe.gc.runtimes", gc_plan.runtimes);
		if (gc_plan.notes[0])
			err |= chunk_buffer_add_kv(kv, "probe.gc.notes", gc_plan.notes);
	}
	for (size_t i = 0; i < nprobes; i++)
		err |= meta_one(kv, i);
	nprobes_in_meta = nprobes;
	return err ? -ENOMEM : 0;
}

/* The per-CPU sums of probe index, added up. 0 or -errno. */
static int read_counts(uint32_t index, struct perfcap_probe_count *sum)
{
	int ncpus = libbpf_num_possible_cpus();
	struct perfcap_probe_count *v;
	int err;

	memset(sum, 0, sizeof(*sum));
	if (!skel || ncpus <= 0)
		return -ENOENT;
	v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.probe_counts), &index, v);
	for (int c = 0; !err && c < ncpus; c++) {
		sum->hits += v[c].hits;
		sum->calls += v[c].calls;
		sum->total_ns += v[c].total_ns;
		sum->below_min += v[c].below_min;
		sum->unmatched += v[c].unmatched;
		sum->too_deep += v[c].too_deep;
		for (int b = 0; b < PERFCAP_AGG_HIST; b++)
			sum->hist[b] += v[c].hist[b];
	}
	free(v);
	return err;
}

/* "b:count,..." of the non-empty buckets. */
static void hist_text(const struct perfcap_probe_count *s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int b = 0; b < PERFCAP_AGG_HIST && used < len; b++)
		if (s->hist[b])
			used += (size_t)snprintf(buf + used, len - used, "%s%d:%u", used ? "," : "",
						 b, s->hist[b]);
}

static int probe_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	struct perfcap_probe_count s;
	char hist[PERFCAP_AGG_HIST * 16];
	int err = 0;

	(void)c;
	for (size_t i = 0; i < nprobes; i++) {
		if (probes[i].nattached == 0 || read_counts((uint32_t)i, &s))
			continue;
		err |= kv_probe_u64(kv, i, "hits", s.hits);
		if (probes[i].spec->kind == PERFCAP_PROBE_UPROBE) {
			err |= kv_probe_u64(kv, i, "calls", s.calls);
			err |= kv_probe_u64(kv, i, "total_ns", s.total_ns);
			err |= kv_probe_u64(kv, i, "below_min", s.below_min);
			err |= kv_probe_u64(kv, i, "unmatched", s.unmatched);
			err |= kv_probe_u64(kv, i, "too_deep", s.too_deep);
			hist_text(&s, hist, sizeof(hist));
			err |= kv_probe(kv, i, "hist", hist);
		}
	}
	err |= chunk_buffer_add_kv_u64(kv, "probe.records", probe_records);
	/* probes -e gc placed after the META: described here */
	for (size_t i = nprobes_in_meta; i < nprobes; i++)
		err |= meta_one(kv, i);
	if (gc_on)
		err |= chunk_buffer_add_kv_u64(kv, "probe.gc.late_runtimes", gc_late_runtimes);
	return err ? -ENOMEM : 0;
}

static const uint16_t probe_event_types[] = { PERFCAP_EV_PROBE, 0 };

const struct source probe_source = {
	.summary = "user probes given as -e uprobe:PATH:SYMBOL[(arg1,ret)] (calls with their "
		   "latency; entries only in Go code) or usdt:PATH:PROVIDER:NAME (hits), exact "
		   "counts in the kernel",
	.id = PERFCAP_SRC_PROBE,
	.event_types = probe_event_types,
	.load = probe_load,
	.attach = probe_attach,
	.detach = probe_detach,
	.destroy = probe_destroy,
	.handle = probe_handle,
	.meta = probe_meta,
	.stats = probe_stats,
	.tick = probe_tick,
};
