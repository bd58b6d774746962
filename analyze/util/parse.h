/* parse.h - the parsers of the numbers and durations users type: counts
 * and limits, --window, the report's --from/--to (query/scope.c). Used by
 * the commands and the libraries below them, so it lives in util/. */
#ifndef ANALYZE_UTIL_PARSE_H
#define ANALYZE_UTIL_PARSE_H

/* Parses a decimal number in [min, max]; 0 or -1. */
int parse_number(const char *text, unsigned long long min, unsigned long long max,
		 unsigned long long *out);

/* Parses a duration: a decimal number of seconds, or one with
 * a unit ("500ms", "250us", "2s", "1000000ns"), into ns in [min, max].
 * 0 or -1. */
int parse_duration(const char *text, unsigned long long min_ns,
		   unsigned long long max_ns, unsigned long long *out_ns);

/* --window, a duration from 1 ms to 1 day. 0 or -1. */
int parse_window(const char *text, unsigned long long *out_ns);

#endif /* ANALYZE_UTIL_PARSE_H */
