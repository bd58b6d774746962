/* parse.c - the numbers and durations users type on the command line
 * (parse.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int parse_number(const char *text, unsigned long long min, unsigned long long max,
		 unsigned long long *out)
{
	char *end;
	unsigned long long value;

	if (!text || *text == '\0' || *text == '-')
		return -1;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno || *end != '\0' || value < min || value > max)
		return -1;
	*out = value;
	return 0;
}

static const struct {
	const char *suffix;
	double ns;
} duration_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
};

int parse_duration(const char *text, unsigned long long min_ns,
		   unsigned long long max_ns, unsigned long long *out_ns)
{
	char *end;
	double value, ns = -1;

	if (!text || (*text < '0' || *text > '9'))
		return -1;
	errno = 0;
	value = strtod(text, &end);
	if (errno)
		return -1;
	for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
		if (strcmp(end, duration_units[i].suffix) == 0) {
			ns = value * duration_units[i].ns;
			break;
		}
	if (ns < (double)min_ns || ns > (double)max_ns)
		return -1;
	*out_ns = (unsigned long long)(ns + 0.5);
	return 0;
}

int parse_window(const char *text, unsigned long long *out_ns)
{
	return parse_duration(text, 1000000ull, 86400ull * 1000000000ull, out_ns);
}
