/* wait_class.c - task state kinds and off-CPU wait classes (see
 * wait_class.h). Task state bits are read in both encodings a recorder may
 * pass on: the raw task->__state (tp_btf: TASK_IDLE is 0x402, TASK_DEAD
 * 0x80) and the sched_switch tracepoint's report bits (0x100 preempted,
 * 0x10/0x20 exit states). */
#include "correlate_state.h"
#include "util/syscalls.h"
#include "wait_class.h"

#define TASK_INTERRUPTIBLE   0x0001u
#define TASK_UNINTERRUPTIBLE 0x0002u
#define TASK_STOPPED_TRACED  0x000cu
#define TASK_EXITED          0x0030u  /* EXIT_DEAD, EXIT_ZOMBIE */
#define TASK_PARKED          0x0040u
#define TASK_DEAD            0x0080u
#define TASK_NOLOAD          0x0400u  /* with UNINTERRUPTIBLE: TASK_IDLE */

int task_state_kind(uint32_t bits)
{
	if ((bits & 0xffu) == 0 && !(bits & TASK_NOLOAD))
		return ST_RUNNABLE;   /* 0, or the tracepoint's "preempted" 0x100 */
	if (bits & (TASK_EXITED | TASK_DEAD))
		return ST_DEAD;
	if ((bits & TASK_NOLOAD) || (bits & TASK_INTERRUPTIBLE))
		return ST_SLEEP;      /* idle kernel threads sleep, they do not do I/O */
	if (bits & TASK_UNINTERRUPTIBLE)
		return ST_IO;
	return ST_BLOCKED;        /* stopped, traced, parked */
}

static enum wait_class by_state(int kind)
{
	switch (kind) {
	case ST_RUNNABLE: return WC_PREEMPTED;
	case ST_IO:       return WC_BLOCK_IO;
	case ST_SLEEP:    return WC_SLEEP;
	default:          return WC_OTHER;
	}
}

static enum wait_class by_rw_call(const struct wait_facts *f)
{
	if (f->fd_is_socket)
		return WC_NET;
	if (f->kind == ST_IO || f->block_io_done)
		return WC_BLOCK_IO;
	return WC_OTHER;
}

enum wait_class wait_classify(const struct wait_facts *f)
{
	int kind = f->kind;

	if (kind == ST_RUNNABLE)
		return WC_PREEMPTED;
	if (!f->in_syscall)
		return by_state(kind);
	switch (syscall_info(f->syscall_nr)->family) {
	case SC_FUTEX: return WC_FUTEX;
	case SC_POLL:  return WC_POLL;
	case SC_SLEEP: return WC_SLEEP;
	case SC_SYNC:  return WC_BLOCK_IO;
	case SC_NET:   return WC_NET;
	case SC_RW:    return by_rw_call(f);
	default:       return kind == ST_IO ? WC_BLOCK_IO : WC_OTHER;
	}
}

const char *wait_class_name(enum wait_class wc)
{
	static const char *const names[] = {
		"preempted", "block_io", "futex", "poll", "sleep", "net", "other",
	};

	return (unsigned)wc < sizeof(names) / sizeof(names[0]) ? names[wc] : "other";
}
