/* bpf_log.c - captures libbpf's messages into a buffer (printing them only
 * with -v) so that a load failure becomes one readable line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "bpf_log.h"
#include "util/util.h"

#define LOG_BYTES (256u << 10)

static char log_text[LOG_BYTES];
static size_t log_len;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;
	int n;

	if (verbose_enabled) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level == LIBBPF_DEBUG || log_len >= LOG_BYTES - 1)
		return 0;
	n = vsnprintf(log_text + log_len, LOG_BYTES - log_len, fmt, ap);
	if (n > 0)
		log_len += (size_t)n < LOG_BYTES - log_len ? (size_t)n : LOG_BYTES - log_len - 1;
	return 0;
}

void bpf_log_capture(void)
{
	libbpf_set_print(capture_print);
}

void bpf_log_reset(void)
{
	log_len = 0;
	log_text[0] = '\0';
}

static bool reports_failure(const char *line, size_t len)
{
	static const char *const words[] = { "failed", "error", "invalid", "denied",
					     "not supported", "unknown" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		const char *hit = strstr(line, words[i]);

		if (hit && hit < line + len)
			return true;
	}
	return false;
}

const char *bpf_log_summary(char *buf, size_t len)
{
	const char *best = NULL, *last = NULL;
	size_t best_len = 0, last_len = 0;

	for (const char *p = log_text; p < log_text + log_len;) {
		const char *nl = memchr(p, '\n', (size_t)(log_text + log_len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(log_text + log_len - p);

		if (n) {
			last = p;
			last_len = n;
			if (!best && reports_failure(p, n)) {
				best = p;
				best_len = n;
			}
		}
		p += n + 1;
	}
	if (!best) {
		best = last;
		best_len = last_len;
	}
	if (!best) {
		buf[0] = '\0';
		return buf;
	}
	if (best_len >= 8 && strncmp(best, "libbpf: ", 8) == 0) {
		best += 8;
		best_len -= 8;
	}
	snprintf(buf, len, "%.*s", (int)best_len, best);
	return buf;
}
