/* recording.h - the kernel side of one recording as a whole: the shared
 * maps, the configuration every BPF object gets, each selected source
 * loaded and attached (or named with the reason it could not be), the
 * followed processes, the ring reader, and the loss counters at the end. */
#ifndef RECORD_RECORDING_H
#define RECORD_RECORDING_H

#include <stdbool.h>

#include "cli.h"
#include "consume/consumer.h"
#include "consume/ring_reader.h"
#include "output/chunk_buffer.h"
#include "session/shared_maps.h"
#include "session/target_map.h"
#include "sources/source.h"

#define SESSION_REASON_LEN 256

struct session {
	const struct record_options *opts;
	struct perfcap_config config;
	struct shared_maps maps;
	bool maps_created;
	struct source_env env;
	bool loaded[PERFCAP_SRC_MAX];
	bool attached[PERFCAP_SRC_MAX];
	char failed[PERFCAP_SRC_MAX][SESSION_REASON_LEN]; /* why a source is missing */
	struct targets targets;
	struct ring_reader reader;
};

/* Creates the shared maps and the configuration. Prints one error line
 * and returns -errno on failure. */
int session_create(struct session *s, const struct record_options *o);

/* Loads every selected source. A source that cannot load is named with
 * the reason on stderr and left out, unless --strict (then, or for an
 * always-on source, this fails). */
int session_load(struct session *s);

/* Attaches every loaded source the same way, routing the attached ones'
 * records to c. Fails when no selected source attached. */
int session_attach(struct session *s, struct consumer *c);

/* The reader of all rings, calling consumer_handle with c. */
int session_open_reader(struct session *s, struct consumer *c);

/* Stops every source (the rings can then be drained to the end). */
void session_detach(struct session *s);

/* Lets the attached sources with a tick turn kernel state into records
 * (see struct source); final after session_detach and the last drain. */
void session_tick(struct session *s, struct consumer *c, uint64_t now_ns, bool final);

void session_destroy(struct session *s);

/* META keys of the sources: sources, sources.selected,
 * sources.failed.NAME, each attached source's own keys, and the shared
 * maps' sizes. 0 or -ENOMEM. */
int session_meta(const struct session *s, struct chunk_buffer *kv);

#endif /* RECORD_RECORDING_H */
