/* parse.c - the numbers and durations users type on the command line
 * (parse.h), through common/units.h, the parsers the recorder uses too. */
#include <ctype.h>
#include <stdint.h>

#include "common/units.h"
#include "parse.h"

int parse_number(const char *text, unsigned long long min, unsigned long long max,
		 unsigned long long *out)
{
	uint64_t value;

	if (!text || *text == '-')
		return -1;
	while (isspace((unsigned char)*text))   /* as strtoull allows */
		text++;
	if (*text == '+')
		text++;
	if (!parse_u64_in_range(text, min, max, &value))
		return -1;
	*out = value;
	return 0;
}

int parse_duration(const char *text, unsigned long long min_ns,
		   unsigned long long max_ns, unsigned long long *out_ns)
{
	uint64_t ns;

	if (!parse_duration_ns(text, DURATION_SECONDS_DEFAULT, min_ns, max_ns, &ns))
		return -1;
	*out_ns = ns;
	return 0;
}

int parse_window(const char *text, unsigned long long *out_ns)
{
	return parse_duration(text, 1000000ull, 86400ull * 1000000000ull, out_ns);
}
