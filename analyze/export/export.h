/* export.h - "perfcap-analyze export": a database's data written in the
 * formats other tools read (docs/export.md). Each writer streams rows
 * from SQL into its output and keeps only dictionaries (strings,
 * functions, locations, series) in memory, never the events. */
#ifndef ANALYZE_EXPORT_H
#define ANALYZE_EXPORT_H

#include <sqlite3.h>

#include "query/scope.h"

enum export_format {
	EXPORT_PPROF,
	EXPORT_SPEEDSCOPE,
	EXPORT_CSV,
	EXPORT_NDJSON,
	EXPORT_OPENMETRICS,
	EXPORT_PROMETHEUS,        /* the same metrics, Prometheus text format */
	EXPORT_PERFETTO,
};

struct export_request {
	enum export_format format;
	const char *output;                 /* file (directory for csv/ndjson); NULL: stdout */
	const struct report_options *opts;  /* the scope: --from/--to/--pid/--tid/--comm */
	const char *run_id;                 /* --run-id, or NULL: derived from the capture */
};

/* Parses a --format name (pprof, speedscope, tables = csv, csv, ndjson,
 * openmetrics, prometheus, perfetto). 0 or -1. */
int export_format_parse(const char *name, enum export_format *out);

/* 1 if this build can write the format; else 0 with *why set to one
 * line (pprof and perfetto need protobuf-c and zlib at build time). */
int export_format_available(enum export_format format, const char **why);

/* 1 if the format writes bytes that do not belong on a terminal. */
int export_format_is_binary(enum export_format format);

/* 1 if the format writes a directory of files (-o DIR required). */
int export_format_is_directory(enum export_format format);

/* Resolves the scope and writes the export. 0, or 1 after a one-line
 * error on stderr. */
int export_run(sqlite3 *db, const struct export_request *req);

#endif /* ANALYZE_EXPORT_H */
