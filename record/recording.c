/* recording.c - the kernel side of one recording as a whole: the
 * session_* functions main.c calls, above every folder (it loads the
 * sources/ into the session/ maps and routes their records to consume/).
 *
 * Order: shared maps (session_create), then every selected source's BPF
 * object loaded against them (session_load), the initial targets put in
 * the filter (by the caller), then every source attached (session_attach).
 * A source that fails is named with its reason and left out unless
 * --strict; the proc source (process lifecycle) is never optional.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "recording.h"
#include "session/bpf_log.h"
#include "session/preflight.h"
#include "util/util.h"

/* ---- setup ------------------------------------------------------------ */

static void fill_config(struct session *s)
{
	const struct record_options *o = s->opts;
	struct perfcap_config *c = &s->config;

	memset(c, 0, sizeof(*c));
	c->nr_rings = s->maps.nr_rings;
	c->wakeup_bytes = s->maps.ring_bytes / 4;
	c->sample_one_in = (uint32_t)o->sample_one_in;
	c->sample_seed = o->sample_seed;
	c->rate_cap = o->rate_cap;
	c->filter_pids = o->mode != TARGET_ALL;
	if (o->comm) {
		c->filter_comm = 1;
		strncpy(c->comm, o->comm, sizeof(c->comm) - 1);
	}
	if (o->cgroup_path) {
		c->filter_cgroup = 1;
		c->cgroup_id = o->cgroup_id;
		c->cgroup_level = o->cgroup_level;
	}
}

int session_create(struct session *s, const struct record_options *o)
{
	int nr_possible = libbpf_num_possible_cpus();
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	bpf_log_capture();
	if (nr_possible <= 0) {
		error_line("cannot count possible CPUs: %s", strerror(nr_possible ? -nr_possible : EINVAL));
		return nr_possible ? nr_possible : -EINVAL;
	}
	err = shared_maps_create(&s->maps, shared_maps_ring_bytes(o->freq_hz, nr_possible));
	s->maps_created = true;
	if (err)
		return err;
	fill_config(s);
	s->env.opts = o;
	s->env.maps = &s->maps;
	s->env.config = &s->config;
	memcpy(s->env.selected, o->selected, sizeof(s->env.selected));
	targets_init(&s->targets, s->maps.targets_fd, s->maps.target_bits, s->maps.target_words);
	return 0;
}

/* A source could not be loaded or attached: fail, or say so and go on. */
static int source_failed(struct session *s, const struct source *src, int err)
{
	if (src->always_on || s->opts->strict) {
		error_line("cannot record '%s': %s%s", event_source_name(src->id),
			   s->failed[src->id], src->always_on ? "" : " (--strict)");
		return err ? err : -EINVAL;
	}
	warning_line("not recording '%s': %s", event_source_name(src->id), s->failed[src->id]);
	return 0;
}

static bool needs_tracefs(const struct session *s)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	for (size_t i = 0; i < n; i++) {
		if (s->env.selected[all[i]->id] && all[i]->needs_tracefs)
			return true;
	}
	return false;
}

int session_load(struct session *s)
{
	size_t n;
	const struct source *const *all = sources_all(&n);
	int err = 0;

	if (needs_tracefs(s))
		preflight_mount_tracefs(); /* a source that still fails says why */
	for (size_t i = 0; i < n && !err; i++) {
		const struct source *src = all[i];
		char *why = s->failed[src->id];

		if (!s->env.selected[src->id])
			continue;
		bpf_log_reset();
		err = src->load(&s->env, why, SESSION_REASON_LEN);
		if (err) {
			src->destroy();
			err = source_failed(s, src, err);
			continue;
		}
		s->loaded[src->id] = true;
		verbose_line("source %s loaded", event_source_name(src->id));
	}
	return err;
}

static bool any_optional_attached(const struct session *s)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	for (size_t i = 0; i < n; i++) {
		if (!all[i]->always_on && s->attached[all[i]->id])
			return true;
	}
	return false;
}

int session_attach(struct session *s, struct consumer *c)
{
	size_t n;
	const struct source *const *all = sources_all(&n);
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct source *src = all[i];

		if (!s->loaded[src->id])
			continue;
		bpf_log_reset();
		err = src->attach(&s->env, s->failed[src->id], SESSION_REASON_LEN);
		if (err) {
			src->destroy();
			s->loaded[src->id] = false;
			err = source_failed(s, src, err);
			continue;
		}
		s->attached[src->id] = true;
		s->failed[src->id][0] = '\0';
		consumer_route(c, src->event_types, src->handle);
	}
	if (!err && !any_optional_attached(s)) {
		error_line("none of the selected event sources could be recorded");
		err = -ENODEV;
	}
	return err;
}

int session_open_reader(struct session *s, struct consumer *c)
{
	return ring_reader_open(&s->reader, &s->maps, consumer_handle, c);
}

/* ---- the end ------------------------------------------------------------ */

void session_detach(struct session *s)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	for (size_t i = 0; i < n; i++) {
		if (s->attached[all[i]->id])
			all[i]->detach();
	}
}

void session_tick(struct session *s, struct consumer *c, uint64_t now_ns, bool final)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	for (size_t i = 0; i < n; i++) {
		if (s->attached[all[i]->id] && all[i]->tick)
			all[i]->tick(c, now_ns, final);
	}
	c->nexec_pids = 0;   /* the ticks have seen them */
}

void session_destroy(struct session *s)
{
	size_t n;
	const struct source *const *all = sources_all(&n);

	ring_reader_close(&s->reader);
	for (size_t i = 0; i < n; i++) {
		if (s->loaded[all[i]->id])
			all[i]->destroy();
		s->loaded[all[i]->id] = s->attached[all[i]->id] = false;
	}
	targets_free(&s->targets);
	if (s->maps_created)
		shared_maps_destroy(&s->maps);
	s->maps_created = false;
}

/* ---- metadata ------------------------------------------------------------ */

static int add_source_list(struct chunk_buffer *kv, const char *key, const bool *which)
{
	size_t n, len = 0;
	const struct source *const *all = sources_all(&n);
	char list[256] = "";

	for (size_t i = 0; i < n; i++) {
		if (which[all[i]->id] && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						len ? "," : "", event_source_name(all[i]->id));
	}
	return chunk_buffer_add_kv(kv, key, list);
}

static int add_maps(const struct session *s, struct chunk_buffer *kv)
{
	int err = 0;

	err |= chunk_buffer_add_kv_u64(kv, "bpf.rings", s->maps.nr_rings);
	err |= chunk_buffer_add_kv_u64(kv, "bpf.ringbuf_bytes", s->maps.ring_bytes);
	err |= chunk_buffer_add_kv_u64(kv, "bpf.stackmap_entries", PERFCAP_STACKMAP_ENTRIES);
	err |= chunk_buffer_add_kv_u64(kv, "bpf.targets_max", PERFCAP_TARGETS_MAX);
	return err;
}

int session_meta(const struct session *s, struct chunk_buffer *kv)
{
	size_t n;
	const struct source *const *all = sources_all(&n);
	int err = 0;

	err |= add_source_list(kv, "sources", s->attached);
	err |= add_source_list(kv, "sources.selected", s->env.selected);
	err |= add_maps(s, kv);
	for (size_t i = 0; i < n && !err; i++) {
		const struct source *src = all[i];
		char key[64];

		if (s->attached[src->id] && src->meta) {
			err |= src->meta(kv, &s->env);
		} else if (s->env.selected[src->id] && !s->attached[src->id]) {
			snprintf(key, sizeof(key), "sources.failed.%s", event_source_name(src->id));
			err |= chunk_buffer_add_kv(kv, key, s->failed[src->id]);
		}
	}
	return err ? -ENOMEM : 0;
}
