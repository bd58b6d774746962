/* units.c - counts, sizes and durations as users type and read them
 * (see units.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

const char *fmt_count(char *buf, size_t len, uint64_t value)
{
	char digits[24];
	int ndigits = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)value);
	size_t out = 0;

	for (int i = 0; i < ndigits && out + 1 < len; i++) {
		int remaining = ndigits - i - 1;

		buf[out++] = digits[i];
		if (remaining > 0 && remaining % 3 == 0 && out + 1 < len)
			buf[out++] = ',';
	}
	if (len > 0)
		buf[out] = '\0';
	return buf;
}

const char *fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes && bytes % (1ull << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes && bytes % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
	else if (bytes && bytes % (1ull << 10) == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes >> 10));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

bool parse_u64_in_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* Nanoseconds per unit; 0 for an unknown one. No unit at all means
 * seconds when the form allows it. */
static double unit_ns(const char *unit, enum duration_form form)
{
	static const struct { const char *name; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 },
		{ "h", 3600e9 },
	};

	if (*unit == '\0')
		return form == DURATION_SECONDS_DEFAULT ? 1e9 : 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	}
	return 0;
}

bool parse_duration_ns(const char *s, enum duration_form form, uint64_t min_ns,
		       uint64_t max_ns, uint64_t *out)
{
	double value, per_unit, ns;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	if (form == DURATION_UNIT_REQUIRED && strcmp(s, "0") == 0 && min_ns == 0) {
		*out = 0;
		return true;
	}
	errno = 0;
	value = strtod(s, &end);
	if (errno)
		return false;
	if (form == DURATION_UNIT_REQUIRED && (size_t)(end - s) != strspn(s, "0123456789."))
		return false;
	per_unit = unit_ns(end, form);
	ns = value * per_unit;
	if (per_unit == 0 || ns < (double)min_ns || ns > (double)max_ns)
		return false;
	*out = (uint64_t)(ns + 0.5);
	return true;
}

static uint64_t size_unit(const char *u)
{
	if (!*u)
		return 1;
	if (u[1] && strcasecmp(u + 1, "iB") && strcasecmp(u + 1, "B"))
		return 0;
	switch (*u) {
	case 'k': case 'K':
		return 1ull << 10;
	case 'm': case 'M':
		return 1ull << 20;
	case 'g': case 'G':
		return 1ull << 30;
	default:
		return 0;
	}
}

bool parse_size_bytes(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	uint64_t unit;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	unit = size_unit(end);
	if (errno || !unit || v > max / unit)
		return false;
	*out = v * unit;
	return true;
}
