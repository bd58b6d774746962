/* fmt.c - number formatting for human-readable output (see fmt.h). */
#include <stdio.h>
#include <string.h>

#include "fmt.h"

const char *fmt_percent(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	if (whole == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * (double)part / (double)whole);
	return buf;
}

const char *fmt_seconds(char *buf, size_t len, double seconds)
{
	if (seconds < 0)
		seconds = 0;
	if (seconds == 0)
		snprintf(buf, len, "0 s");
	else if (seconds < 1e-3)
		snprintf(buf, len, "%.1f us", seconds * 1e6);
	else if (seconds < 1.0)
		snprintf(buf, len, "%.1f ms", seconds * 1e3);
	else if (seconds < 60.0)
		snprintf(buf, len, "%.2f s", seconds);
	else {
		unsigned long long minutes = (unsigned long long)(seconds / 60.0);
		snprintf(buf, len, "%llum %04.1fs", minutes, seconds - 60.0 * (double)minutes);
	}
	return buf;
}

const char *fmt_duration_ns(char *buf, size_t len, uint64_t ns)
{
	return fmt_seconds(buf, len, (double)ns / 1e9);
}

const char *fmt_ratio(char *buf, size_t len, uint64_t raw, uint64_t compressed)
{
	if (compressed == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1fx", (double)raw / (double)compressed);
	return buf;
}
