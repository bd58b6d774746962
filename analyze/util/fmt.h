/* fmt.h - number formatting for human-readable output: thousands
 * separators, percentages to one decimal, durations and sizes. Every
 * function writes into the caller's buffer and returns it. */
#ifndef ANALYZE_FMT_H
#define ANALYZE_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "common/units.h"   /* fmt_count: 1234567 -> "1,234,567" */

#define FMT_BUF 48 /* big enough for any value below */

/* part of whole as "75.0%"; "-" when whole is 0 */
const char *fmt_percent(char *buf, size_t len, uint64_t part, uint64_t whole);

/* seconds as "12.3 ms", "4.56 s", "1m 02.3s" */
const char *fmt_seconds(char *buf, size_t len, double seconds);

/* nanoseconds as a duration (same style as fmt_seconds) */
const char *fmt_duration_ns(char *buf, size_t len, uint64_t ns);

/* raw / compressed as "3.2x"; "-" when compressed is 0 */
const char *fmt_ratio(char *buf, size_t len, uint64_t raw, uint64_t compressed);

#endif /* ANALYZE_FMT_H */
