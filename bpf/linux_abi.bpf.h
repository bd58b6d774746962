/* linux_abi.bpf.h - the user ABI values the BPF programs compare against
 * that vmlinux.h (kernel types only) does not carry: x86_64 system call
 * numbers, address families, protocols, and the errno, flag and mode bits
 * the programs test. One list, so that the objects cannot disagree.
 * Values from <asm/unistd_64.h>, <sys/socket.h>, <netinet/in.h>,
 * <errno.h>, <fcntl.h>, <sys/stat.h> and <sys/mman.h>.
 */
#ifndef PERFCAP_LINUX_ABI_BPF_H
#define PERFCAP_LINUX_ABI_BPF_H

#define AF_INET          2
#define AF_INET6         10
#define IPPROTO_TCP      6
#define MSG_PEEK         2
#define EINPROGRESS      115
#define S_IFMT           00170000
#define S_IFSOCK         0140000
#define F_DUPFD          0
#define F_DUPFD_CLOEXEC  1030
#define PROT_EXEC        0x4

/* x86_64 system call numbers */
enum {
	NR_read = 0, NR_write = 1, NR_close = 3, NR_mmap = 9, NR_mprotect = 10,
	NR_readv = 19, NR_writev = 20, NR_dup = 32, NR_dup2 = 33, NR_sendfile = 40,
	NR_socket = 41, NR_connect = 42, NR_accept = 43, NR_sendto = 44,
	NR_recvfrom = 45, NR_sendmsg = 46, NR_recvmsg = 47, NR_listen = 50,
	NR_fcntl = 72, NR_accept4 = 288, NR_dup3 = 292, NR_recvmmsg = 299,
	NR_sendmmsg = 307, NR_pkey_mprotect = 329,
};

#endif /* PERFCAP_LINUX_ABI_BPF_H */
