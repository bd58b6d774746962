/* export.c - the export driver: format names, the capture facts every
 * writer needs (clock pair, host, run id, sampling period, window), the
 * scope as SQL, and dispatch to the writer of the format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "export_internal.h"

static const struct {
	const char *name;
	enum export_format format;
} format_names[] = {
	{ "pprof", EXPORT_PPROF },
	{ "speedscope", EXPORT_SPEEDSCOPE },
	{ "tables", EXPORT_CSV },
	{ "csv", EXPORT_CSV },
	{ "ndjson", EXPORT_NDJSON },
	{ "openmetrics", EXPORT_OPENMETRICS },
	{ "prometheus", EXPORT_PROMETHEUS },
	{ "perfetto", EXPORT_PERFETTO },
};

int export_format_parse(const char *name, enum export_format *out)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(name, format_names[i].name) == 0) {
			*out = format_names[i].format;
			return 0;
		}
	}
	return -1;
}

int export_format_available(enum export_format format, const char **why)
{
	if (format == EXPORT_PPROF || format == EXPORT_PERFETTO)
		return export_pprof_available(why);
	return 1;
}

int export_format_is_binary(enum export_format format)
{
	return format == EXPORT_PPROF || format == EXPORT_PERFETTO;
}

int export_format_is_directory(enum export_format format)
{
	return format == EXPORT_CSV || format == EXPORT_NDJSON;
}

uint64_t export_hash(const char *text, uint64_t seed)
{
	uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);

	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

uint64_t export_wall_ns(const struct export_ctx *cx, uint64_t monotonic_ns)
{
	return monotonic_ns + cx->realtime_offset;
}

static int64_t meta_int(sqlite3 *db, const char *key)
{
	char *text = db_lookup_text(db, "SELECT value FROM meta WHERE key = ?1", key, NULL);
	int64_t value = text ? atoll(text) : 0;

	free(text);
	return value;
}

static void meta_text(sqlite3 *db, const char *key, char *buf, size_t len)
{
	char *text = db_lookup_text(db, "SELECT value FROM meta WHERE key = ?1", key, NULL);

	snprintf(buf, len, "%s", text ? text : "");
	free(text);
}

/* The run id: the recording host's boot id and the start time, which
 * together name one recording. */
static void derive_run_id(struct export_ctx *cx)
{
	char boot[64];

	meta_text(cx->db, "host.boot_id", boot, sizeof(boot));
	snprintf(cx->run_id, sizeof(cx->run_id), "%.8s%s%llu", boot, boot[0] ? "-" : "",
		 (unsigned long long)cx->scope.capture_start);
}

static void load_facts(struct export_ctx *cx, const char *run_id)
{
	int64_t mono = meta_int(cx->db, "clock.monotonic_ns");
	int64_t real = meta_int(cx->db, "clock.realtime_ns");
	int64_t freq = meta_int(cx->db, "sampling.cpu.freq_hz");
	char *window = db_lookup_text(cx->db, "SELECT value FROM schema_info WHERE key = ?1",
				      "window_ns", NULL);

	cx->realtime_offset = mono > 0 && real > mono ? (uint64_t)(real - mono) : 0;
	cx->period_ns = freq > 0 ? 1000000000ull / (uint64_t)freq : 0;
	cx->window_ns = window && atoll(window) > 0 ? (uint64_t)atoll(window) : 1000000000ull;
	free(window);
	meta_text(cx->db, "host.hostname", cx->host, sizeof(cx->host));
	if (run_id)
		snprintf(cx->run_id, sizeof(cx->run_id), "%s", run_id);
	else
		derive_run_id(cx);
}

static int run_stream(struct export_ctx *cx, const struct export_request *req)
{
	struct export_out out;
	int rc;

	if (export_out_open(&out, req->output) != 0)
		return 1;
	switch (req->format) {
	case EXPORT_PPROF: rc = export_pprof(cx, out.fp); break;
	case EXPORT_SPEEDSCOPE: rc = export_speedscope(cx, out.fp); break;
	case EXPORT_PERFETTO: rc = export_perfetto(cx, out.fp); break;
	default: rc = export_openmetrics(cx, out.fp, req->format == EXPORT_PROMETHEUS); break;
	}
	return export_out_commit(&out, rc == 0) != 0 || rc != 0 ? 1 : 0;
}

int export_run(sqlite3 *db, const struct export_request *req)
{
	struct export_ctx cx = { .db = db };

	if (report_scope_resolve(db, req->opts, &cx.scope) < 0)
		return 1;
	load_facts(&cx, req->run_id);
	if (export_format_is_directory(req->format)) {
		if (export_out_directory(req->output) != 0)
			return 1;
		return export_tables(&cx, req->output, req->format == EXPORT_NDJSON) == 0 ? 0 : 1;
	}
	return run_stream(&cx, req);
}
