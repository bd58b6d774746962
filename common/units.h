/* units.h - the numbers users type and read, shared by perfcap-record and
 * perfcap-analyze: counts with thousands separators, sizes in binary
 * units, durations with a unit. Formatters write into the caller's buffer
 * and return it; parsers return true with *out set, or false. */
#ifndef COMMON_UNITS_H
#define COMMON_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1234567 -> "1,234,567" (27 bytes hold any value). */
const char *fmt_count(char *buf, size_t len, uint64_t value);

/* "64 MiB", "200 KiB" or "1234 bytes" (the largest exact binary unit). */
const char *fmt_size(char *buf, size_t len, uint64_t bytes);

/* A decimal integer in [min, max]: digits only, nothing before or after. */
bool parse_u64_in_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* How a duration may be written. */
enum duration_form {
	/* "500us", "1.5ms", "2s", "100ns" or a bare "0": a unit is required
	 * and the number is digits and dots (perfcap-record) */
	DURATION_UNIT_REQUIRED,
	/* any decimal number, in seconds without a unit ("0.5", "250us")
	 * (perfcap-analyze) */
	DURATION_SECONDS_DEFAULT,
};

/* A duration written in form, in nanoseconds within [min_ns, max_ns]. */
bool parse_duration_ns(const char *s, enum duration_form form, uint64_t min_ns,
		       uint64_t max_ns, uint64_t *out);

/* A size, "65536", "500K", "64M", "2G" (binary units; "KiB", "MB"
 * accepted too), in bytes no larger than max. */
bool parse_size_bytes(const char *s, uint64_t max, uint64_t *out);

#endif /* COMMON_UNITS_H */
