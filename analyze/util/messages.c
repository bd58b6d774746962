/* messages.c - the one-line messages every command prints the same way,
 * and command-line number and duration parsing. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "messages.h"

int fail_file(const char *path, const char *what)
{
	fprintf(stderr, "perfcap-analyze: %s: %s\n", path, what);
	return 1;
}

int warn_damage(const char *path, const char *damage)
{
	fprintf(stderr, "perfcap-analyze: warning: %s: %s\n", path, damage);
	return EXIT_DAMAGED;
}

const char *capture_open_error(int rc, const char *reader_message)
{
	static const char not_capture[] = "not a perfcap capture";
	int has_message = reader_message && reader_message[0];

	if (rc == -EINVAL && (!has_message ||
			      strncmp(reader_message, not_capture, strlen(not_capture)) == 0))
		return not_capture;
	if (has_message)
		return reader_message;
	return strerror(-rc);
}

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
