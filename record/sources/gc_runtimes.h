/* gc_runtimes.h - `-e gc`: the garbage collector probes of the traced
 * processes' runtimes, found without the user naming them.
 *
 * One table (gc_runtimes.c) says, per runtime, how its files are
 * recognized and which probes bound its collector's pauses: CPython's USDT
 * python:gc__start/gc__done (the interpreter or libpython3.X), HotSpot's
 * hotspot:gc__begin/gc__end (libjvm.so), and for Go, which has no USDT,
 * entry probes on the runtime functions that stop and start the world and
 * on two that only a collection's stops run (so the analyzer can tell a
 * collection's pause from another stop: import/load_gc.c). The plan is a
 * list of probe specs the probe source attaches like the user's, each
 * with its origin ("gc:python"), and one note per target that gets none,
 * with the reason.
 */
#ifndef RECORD_GC_RUNTIMES_H
#define RECORD_GC_RUNTIMES_H

#include <stddef.h>

#include "probe_spec.h"

struct record_options;

#define GC_NOTES_MAX 1024

struct gc_plan {
	struct probe_spec specs[PERFCAP_PROBES_MAX];
	size_t nspecs;
	unsigned files;             /* distinct files examined */
	unsigned runtimes;          /* of them, a runtime's with its GC probes */
	unsigned unprobed;          /* a runtime's without them (nor a fallback) */
	char notes[GC_NOTES_MAX];   /* "; "-separated: what got no GC probe, and why */
};

/* Plans the GC probes of o's targets: a command's executable (found by
 * PATH like execvp, through a #! line), the -p processes' executables and
 * mapped libraries, every process's with -a. At most room specs. 0, or
 * -ENOMEM. Nothing found is not an error: plan->notes says why. */
int gc_plan_targets(const struct record_options *o, size_t room, struct gc_plan *plan);

/* Plans the GC probes of process pid, which just exec'd: its executable
 * (and a java launcher's libjvm.so), unless a spec of have[0..nhave)
 * already probes that file. Notes only what is a runtime's but lacks its
 * probes. 0, or -ENOMEM. */
int gc_plan_exec(int pid, const struct probe_spec *have, size_t nhave, size_t room,
		 struct gc_plan *plan);

/* "python3.x (USDT gc__start/gc__done), HotSpot (...), Go (...)": for
 * --list-events and messages. */
const char *gc_runtimes_known(void);

#endif /* RECORD_GC_RUNTIMES_H */
