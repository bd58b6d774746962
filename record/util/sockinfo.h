/* sockinfo.h - reading sockets from /proc: the socket fds of a process
 * (/proc/PID/fd links "socket:[INODE]") and the TCP and UDP tables of its
 * network namespace (/proc/PID/net/tcp, tcp6, udp, udp6). Plain readers
 * without state, like procinfo.h; consume/socket_snapshot.c decides when
 * to call them. */
#ifndef RECORD_SOCKINFO_H
#define RECORD_SOCKINFO_H

#include <stdbool.h>
#include <stdint.h>

/* One line of /proc/PID/net/{tcp,tcp6,udp,udp6}. Addresses in network
 * byte order, IPv4 in the first 4 bytes; ports in host order. */
struct sock_entry {
	uint64_t inode;       /* 0: no socket behind it (TIME_WAIT, ...) */
	uint16_t family;      /* AF_INET 2, AF_INET6 10 */
	uint16_t protocol;    /* IPPROTO_TCP 6, IPPROTO_UDP 17 */
	uint8_t  laddr[16], raddr[16];
	uint16_t lport, rport;
	uint8_t  state;       /* the kernel's TCP_* (UDP: 7 unbound peer, 1 connected) */
};

#define SOCK_TCP_ESTABLISHED 1
#define SOCK_TCP_LISTEN      10

/* The inode of the network namespace of pid (/proc/PID/ns/net), or 0. */
uint64_t sockinfo_netns(uint32_t pid);

/* Calls fn(ctx, fd, inode) for each socket fd of pid. Stops at the first
 * non-zero return of fn and returns it; -errno if /proc/PID/fd cannot be
 * read; else the number of fds looked at (sockets or not). */
typedef int (*sockinfo_fd_fn)(void *ctx, int fd, uint64_t inode);
int sockinfo_for_each_socket_fd(uint32_t pid, sockinfo_fd_fn fn, void *ctx);

/* Calls fn for each line of pid's tcp, tcp6, udp and udp6 tables (a
 * missing table, IPv6 off for one, is skipped). Same return convention;
 * 0 when done. */
typedef int (*sockinfo_entry_fn)(void *ctx, const struct sock_entry *e);
int sockinfo_for_each_entry(uint32_t pid, sockinfo_entry_fn fn, void *ctx);

/* Parses one table line of the given family and protocol; false for the
 * header and malformed lines. (Exposed for the unit tests.) */
bool sockinfo_parse_line(const char *line, uint16_t family, uint16_t protocol,
			 struct sock_entry *out);

#endif /* RECORD_SOCKINFO_H */
