/* source.h - the event source interface of perfcap-record.
 *
 * A source is one kind of kernel behaviour recorded on request (`-e NAME`):
 * a BPF object bpf/NAME.bpf.c and its user-space half record/sources/source_NAME.c,
 * which exports one `const struct source`. The recorder (session.c) loads
 * and attaches every selected source, one consumer drains all rings and
 * hands each kernel record to the source that handles its type, and the
 * source turns it into capture records with the consumer_* helpers.
 *
 * Adding a source NAME:
 *   1. bpf/perfcap_bpf.h: a PERFCAP_SRC_NAME id, PERFCAP_EV_* types and
 *      the layouts of its kernel records (each starts with
 *      struct perfcap_event_header); common/event_sources.c: its name;
 *   2. bpf/NAME.bpf.c: include perfcap_common.bpf.h, filter with
 *      pc_task_traced(), throttle with pc_admit(), emit with pc_ring(),
 *      pc_reserve(), pc_header(), pc_submit(); stacks with pc_stack_id();
 *      a line in bpf/meson.build;
 *   3. record/sources/source_NAME.c: load (open the skeleton, copy env->config into
 *      rodata.pc_config, source_reuse_shared_maps(), load), attach, detach,
 *      destroy, handle (size check, then consumer_add_event() per capture
 *      record), optional meta/stats; a line in record/sources/meson.build;
 *   4. record/sources/sources.c: one line in the registry.
 */
#ifndef RECORD_SOURCE_H
#define RECORD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event_sources.h"
#include "perfcap_bpf.h"

struct bpf_object;
struct chunk_buffer;
struct consumer;
struct record_options;
struct shared_maps;

/* What every source gets to load and attach with. */
struct source_env {
	const struct record_options *opts;
	const struct shared_maps *maps;       /* reuse them before load */
	const struct perfcap_config *config;  /* copy into rodata.pc_config */
	bool selected[PERFCAP_SRC_MAX];       /* sources chosen, by id */
	uint64_t start_ns;                    /* record.start_ns, set before attach */
	/* the processes named as targets (-p PIDS, or the command's), set
	 * before attach; none with -a */
	const pid_t *target_pids;
	size_t ntarget_pids;
};

struct source {
	const char *summary;              /* one line for --list-events */
	enum perfcap_source_id id;        /* its name: event_source_name(id) */
	bool default_on;                  /* in the default -e set */
	bool always_on;                   /* loaded whatever -e says (proc) */
	bool needs_tracefs;               /* preflight mounts tracefs for it */
	const uint16_t *event_types;      /* kernel record types handled, 0-ended */

	/* Each returns 0 or -errno with a one-line reason in why. */
	int  (*load)(const struct source_env *env, char *why, size_t len);
	int  (*attach)(const struct source_env *env, char *why, size_t len);
	void (*detach)(void);             /* stop producing records */
	void (*destroy)(void);            /* free everything (safe if not loaded) */

	/* One kernel record of a type in event_types (size >= the header). */
	void (*handle)(struct consumer *c, const void *rec, size_t size);

	/* Source-specific META and STATS keys; may be NULL. 0 or -ENOMEM.
	 * (The framework writes the common ones: see output/stats_chunk.c.) */
	int  (*meta)(struct chunk_buffer *kv, const struct source_env *env);
	int  (*stats)(struct chunk_buffer *kv, const struct consumer *c);

	/* What the exit summary must say beyond records and losses, from what
	 * stats last read (a count that is not zero): "what: why" into buf,
	 * empty for nothing. May be NULL. */
	void (*summary_note)(char *buf, size_t len);

	/* Called by the consumer loop after each poll (final: once more after
	 * detach and the last ring drain): sources that keep state in kernel
	 * maps (agg) turn it into capture records here; c->exec_pids are the
	 * traced processes that exec'd since the last tick (probe: -e gc).
	 * May be NULL. */
	void (*tick)(struct consumer *c, uint64_t now_ns, bool final);
};

/* ---- the registry (sources.c) ---------------------------------------- */

/* Every source, in load order. */
const struct source *const *sources_all(size_t *n);

const struct source *source_by_name(const char *name);

/* Parses "-e" ("cpu,sched"; NULL: the default set) into selected[], by
 * source id; always_on sources are always selected. Prints one error line
 * naming the valid sources and returns -EINVAL on an unknown name. */
int sources_select(const char *list, bool selected[PERFCAP_SRC_MAX]);

/* "cpu,sched": the default set, for --help. */
const char *sources_default_list(void);

/* --list-events: one line per source. */
void sources_print(void);

/* ---- helpers for the sources' load/attach ---------------------------- */

/* Makes obj use the shared maps (targets, rings, losses, stacks,
 * source_rates) instead of creating its own. Call between open and load. */
int source_reuse_shared_maps(const struct source_env *env, struct bpf_object *obj,
			     char *why, size_t len);

/* Fills why with "what: strerror (libbpf: its most telling line)". */
void source_explain(char *why, size_t len, const char *what, int err);

/* After a skeleton's open returned NULL: -errno, explained in why. */
int source_open_failed(char *why, size_t len);

/* err from a skeleton's load, explained in why as what when not 0. */
int source_loaded(int err, const char *what, char *why, size_t len);

#endif /* RECORD_SOURCE_H */
