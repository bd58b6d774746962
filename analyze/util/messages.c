/* messages.c - the one-line messages every command prints the same way
 * (messages.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
