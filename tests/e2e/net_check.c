/* net_check.c - dumps what the net tests check in a capture, one fact per
 * line, for awk (format library only, no analyzer):
 *
 *   socket TS FLAGS PID TID FD FAMILY PROTO COOKIE SADDR SPORT DADDR DPORT
 *   tcp_state TS PID TID COOKIE OLD NEW SADDR SPORT DADDR DPORT
 *   retrans TS PID TID COOKIE STATE SADDR SPORT DADDR DPORT
 *   syscall TS PID TID NR ARG0 ARG1 ARG2 RET   (TS: the entry)
 *   meta KEY VALUE / stats KEY VALUE
 *
 * Addresses are printed with inet_ntop (IPv4: the first 4 bytes); cookies
 * in hex. Usage: net_check CAPTURE
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>

#include "dump_main.h"

static const char *addr(uint16_t family, const uint8_t a[16], char *buf, size_t len)
{
	if (family != AF_INET && family != AF_INET6)
		return "-";
	return inet_ntop(family, a, buf, (socklen_t)len) ? buf : "?";
}

static void dump_socket(const struct pc_rec *rec)
{
	struct pc_rec_socket s;
	char sa[64], da[64];
	size_t tail;

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	printf("socket %" PRIu64 " %u %u %u %d %u %u %" PRIx64 " %s %u %s %u\n", s.ts,
	       rec->flags, s.pid, s.tid,
	       s.fd, s.family, s.protocol, s.cookie, addr(s.family, s.saddr, sa, sizeof(sa)),
	       s.sport, addr(s.family, s.daddr, da, sizeof(da)), s.dport);
}

static void dump_state(const struct pc_rec *rec)
{
	struct pc_rec_tcp_state s;
	char sa[64], da[64];
	size_t tail;

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	printf("tcp_state %" PRIu64 " %u %u %" PRIx64 " %u %u %s %u %s %u\n", s.ts, s.pid,
	       s.tid, s.cookie,
	       s.oldstate, s.newstate, addr(s.family, s.saddr, sa, sizeof(sa)), s.sport,
	       addr(s.family, s.daddr, da, sizeof(da)), s.dport);
}

static void dump_retrans(const struct pc_rec *rec)
{
	struct pc_rec_tcp_retrans s;
	char sa[64], da[64];
	size_t tail;

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	printf("retrans %" PRIu64 " %u %u %" PRIx64 " %u %s %u %s %u\n", s.ts, s.pid, s.tid,
	       s.cookie, s.state,
	       addr(s.family, s.saddr, sa, sizeof(sa)), s.sport,
	       addr(s.family, s.daddr, da, sizeof(da)), s.dport);
}

static void dump_syscall(const struct pc_rec *rec)
{
	struct pc_rec_syscall s;
	size_t tail;

	pc_rec_copy(rec, &s, sizeof(s), &tail);
	printf("syscall %" PRIu64 " %u %u %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 "\n",
	       s.ts, s.pid, s.tid, s.nr, s.args[0], s.args[1], s.args[2], s.ret);
}

static void dump_record(const struct pc_rec *rec)
{
	switch (rec->type) {
	case PC_REC_SOCKET:      dump_socket(rec); break;
	case PC_REC_TCP_STATE:   dump_state(rec); break;
	case PC_REC_TCP_RETRANS: dump_retrans(rec); break;
	case PC_REC_SYSCALL:     dump_syscall(rec); break;
	}
}

int main(int argc, char **argv)
{
	return dump_main(argc, argv, "net_check", dump_record);
}
