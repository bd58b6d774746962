/* wait_class.h - what an off-CPU interval waited for: its wait class,
 * decided from the evidence a recording has, strongest first: the system
 * call it happened in (when recorded), the kernel stack it slept in (the
 * function table wait_class_of_kernel_function), the task state. A wait
 * no evidence explains is "unknown", never "sleep". The rules are listed
 * in docs/schema.md (offcpu, "Wait class"). */
#ifndef ANALYZE_WAIT_CLASS_H
#define ANALYZE_WAIT_CLASS_H

#include <stdint.h>

/* thread_state_rows.wait_class_code (the view thread_states decodes it);
 * codes are stored: append only. */
enum wait_class {
	WC_PREEMPTED = 0,  /* still runnable: waited for a CPU */
	WC_BLOCK_IO,       /* disk and page-cache I/O */
	WC_FUTEX,          /* user locks, condition variables, semaphores */
	WC_POLL,           /* epoll/poll/select: waiting for any of many fds */
	WC_SLEEP,          /* a timer the thread asked for (nanosleep ...) */
	WC_NET,            /* a socket receive, send or connect */
	WC_OTHER,          /* recognised, none of the above (wait4, signals ...) */
	WC_UNKNOWN,        /* no evidence: interruptible sleep outside any known call */
	WC_ACCEPT,         /* waiting for a connection: a server waiting for clients */
	WC_KERNEL_LOCK,    /* a kernel mutex or rw-semaphore */
	WC_PIPE,           /* a pipe, FIFO or terminal */
	WC_N
};

struct wait_facts {
	int      kind;            /* enum state_kind at switch-out (task_state_kind) */
	int      in_syscall;      /* a recorded syscall contains the interval */
	uint32_t syscall_nr;
	int      fd_is_socket;    /* the syscall's fd is a known socket */
	int      block_io_done;   /* a block request of the thread completed in the syscall */
};

enum wait_class wait_classify(const struct wait_facts *f);

/* The class a kernel function in a sleeping task's stack stands for, or
 * WC_N when it says nothing (scheduler internals, generic timeouts).
 * wait_class_of_kernel_stack takes the innermost telling frame. */
enum wait_class wait_class_of_kernel_function(const char *name);
enum wait_class wait_class_of_kernel_stack(const char *const *names, int n);

/* "preempted", "block_io", "futex", "poll", "sleep", "net", "other",
 * "unknown", "accept", "kernel_lock", "pipe". */
const char *wait_class_name(enum wait_class wc);

/* The thread_states state of raw task state bits (enum state_kind). */
int task_state_kind(uint32_t bits);

#endif /* ANALYZE_WAIT_CLASS_H */
