/* wait_class.h - what an off-CPU interval waited for: its wait class,
 * decided from the system call it happened in when that is known, else
 * from the task state it was switched out in. The rules are listed in
 * docs/schema.md (offcpu). */
#ifndef ANALYZE_WAIT_CLASS_H
#define ANALYZE_WAIT_CLASS_H

#include <stdint.h>

/* thread_state_rows.wait_class_code (the view thread_states decodes it) */
enum wait_class {
	WC_PREEMPTED = 0,  /* still runnable: waited for a CPU */
	WC_BLOCK_IO,
	WC_FUTEX,
	WC_POLL,
	WC_SLEEP,
	WC_NET,
	WC_OTHER,
};

struct wait_facts {
	int      kind;            /* enum state_kind at switch-out (task_state_kind) */
	int      in_syscall;      /* a recorded syscall contains the interval */
	uint32_t syscall_nr;
	int      fd_is_socket;    /* the syscall's fd is a known socket */
	int      block_io_done;   /* a block request of the thread completed in the syscall */
};

enum wait_class wait_classify(const struct wait_facts *f);

/* "preempted", "block_io", "futex", "poll", "sleep", "net", "other". */
const char *wait_class_name(enum wait_class wc);

/* The thread_states state of raw task state bits (enum state_kind). */
int task_state_kind(uint32_t bits);

#endif /* ANALYZE_WAIT_CLASS_H */
