/* loopback.c - see loopback.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int loopback_listen(const char *portfile, int backlog)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	char tmp[4096];
	FILE *f;
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, backlog) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		die("listen on loopback");
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", ntohs(a.sin_port)) < 0 || fclose(f) ||
	    rename(tmp, portfile))
		die(portfile);
	return s;
}
