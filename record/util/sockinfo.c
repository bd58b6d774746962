/* sockinfo.c - reading sockets from /proc: a process's socket fds and the
 * TCP/UDP tables of its network namespace.
 *
 * The tables print addresses as the raw 32-bit words of the kernel's
 * network-order address, in hexadecimal as the host reads them ("%08X" of
 * a __be32): parsing each word as a native u32 and storing it back gives
 * the network-order bytes. Ports are "%04X" in host order. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sockinfo.h"

uint64_t sockinfo_netns(uint32_t pid)
{
	char path[64], link[64];
	unsigned long long inode;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/ns/net", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return sscanf(link, "net:[%llu]", &inode) == 1 ? inode : 0;
}

/* "socket:[12345]" -> 12345, else 0. */
static uint64_t socket_inode(const char *link)
{
	unsigned long long inode;

	if (strncmp(link, "socket:[", 8) != 0)
		return 0;
	return sscanf(link + 8, "%llu", &inode) == 1 ? inode : 0;
}

int sockinfo_for_each_socket_fd(uint32_t pid, sockinfo_fd_fn fn, void *ctx)
{
	char path[64], link[64];
	struct dirent *de;
	int dfd, seen = 0, rc = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	dfd = dirfd(dir);
	while (!rc && (de = readdir(dir))) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;
		uint64_t inode;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end)
			continue;
		seen++;
		n = readlinkat(dfd, de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue; /* closed meanwhile */
		link[n] = '\0';
		inode = socket_inode(link);
		if (inode)
			rc = fn(ctx, (int)fd, inode);
	}
	closedir(dir);
	return rc ? rc : seen;
}

static bool parse_addr(const char *hex, size_t len, uint8_t out[16])
{
	size_t words = len / 8;

	if (len != 8 && len != 32)
		return false;
	memset(out, 0, 16);
	for (size_t i = 0; i < words; i++) {
		char word[9];
		char *end;
		uint32_t v;

		memcpy(word, hex + 8 * i, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return false;
		memcpy(out + 4 * i, &v, 4);
	}
	return true;
}

/* "0100007F:1F90" -> address and port. */
static bool parse_endpoint(const char *text, uint8_t addr[16], uint16_t *port)
{
	const char *colon = strchr(text, ':');
	unsigned p;

	if (!colon || !parse_addr(text, (size_t)(colon - text), addr))
		return false;
	if (sscanf(colon + 1, "%4x", &p) != 1)
		return false;
	*port = (uint16_t)p;
	return true;
}

bool sockinfo_parse_line(const char *line, uint16_t family, uint16_t protocol,
			 struct sock_entry *out)
{
	char local[64], remote[64];
	unsigned state;
	unsigned long long inode;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ... */
	if (sscanf(line, " %*u: %63s %63s %2x %*x:%*x %*x:%*x %*x %*u %*u %llu",
		   local, remote, &state, &inode) != 4)
		return false;
	memset(out, 0, sizeof(*out));
	out->family = family;
	out->protocol = protocol;
	out->state = (uint8_t)state;
	out->inode = inode;
	return parse_endpoint(local, out->laddr, &out->lport) &&
	       parse_endpoint(remote, out->raddr, &out->rport);
}

static int read_table(uint32_t pid, const char *name, uint16_t family, uint16_t protocol,
		      sockinfo_entry_fn fn, void *ctx)
{
	char path[64], line[512];
	struct sock_entry e;
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/net/%s", pid, name);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!rc && fgets(line, sizeof(line), f)) {
		if (sockinfo_parse_line(line, family, protocol, &e))
			rc = fn(ctx, &e);
	}
	fclose(f);
	return rc;
}

int sockinfo_for_each_entry(uint32_t pid, sockinfo_entry_fn fn, void *ctx)
{
	static const struct {
		const char *name;
		uint16_t family, protocol;
	} tables[] = {
		{ "tcp", 2, 6 }, { "tcp6", 10, 6 }, { "udp", 2, 17 }, { "udp6", 10, 17 },
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]) && !rc; i++)
		rc = read_table(pid, tables[i].name, tables[i].family, tables[i].protocol, fn, ctx);
	return rc;
}
