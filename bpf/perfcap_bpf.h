/* perfcap_bpf.h - the records that the BPF programs put into the ring buffer,
 * and the maps' shared constants. Included by bpf/cpu_sample.bpf.c (with
 * vmlinux.h types) and by record/ (with <linux/types.h>), so both sides agree
 * on one layout. These records never reach the capture file as they are:
 * record/consumer.c turns them into the file format's records.
 */
#ifndef PERFCAP_BPF_H
#define PERFCAP_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space: __u64 and friends */
#endif

/* Deepest stack bpf_get_stack() is asked for, per kind (kernel, user). A
 * stack that fills all of them is marked truncated in the capture. */
#define PERFCAP_STACK_MAX_DEPTH 127

/* Capacity of the `targets` map (processes followed when filtering). Forks
 * of followed processes that find it full are counted, not silently lost. */
#define PERFCAP_TARGETS_MAX 16384

/* Default ring buffer size; user space resizes it before loading. */
#define PERFCAP_RINGBUF_DEFAULT (4u << 20)

enum perfcap_event_type {
	PERFCAP_EV_SAMPLE = 1, /* struct perfcap_sample */
	PERFCAP_EV_EXEC   = 2, /* struct perfcap_proc_event */
	PERFCAP_EV_EXIT   = 3, /* struct perfcap_proc_event */
};

/* Indexes of the per-CPU `losses` array: why the kernel side dropped
 * something. User space sums them over CPUs at the end. */
enum perfcap_loss_reason {
	PERFCAP_LOSS_SAMPLE_RINGBUF = 0, /* sample: ring buffer full */
	PERFCAP_LOSS_PROC_RINGBUF   = 1, /* exec/exit event: ring buffer full */
	PERFCAP_LOSS_TARGETS_FULL   = 2, /* fork of a target: targets map full */
	PERFCAP_LOSS_SCRATCH        = 3, /* per-CPU scratch buffer missing */
	PERFCAP_LOSS_NR             = 4,
};

/* perfcap_sample.flags */
#define PERFCAP_SAMPLE_F_KSTACK_ERR 0x1 /* bpf_get_stack(kernel) < 0 */
#define PERFCAP_SAMPLE_F_USTACK_ERR 0x2 /* bpf_get_stack(user) < 0 */

/* One CPU sample: the kernel stack (kstack_nr ips) followed by the user
 * stack (ustack_nr ips), innermost frame first. Only the used part of ips[]
 * is sent, so the record length is offsetof(ips) + 8 * (kstack_nr +
 * ustack_nr). */
struct perfcap_sample {
	__u16 type;             /* PERFCAP_EV_SAMPLE */
	__u16 flags;            /* PERFCAP_SAMPLE_F_* */
	__u32 cpu;
	__u64 ts;               /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;              /* tgid */
	__u32 tid;
	__u16 kstack_nr;
	__u16 ustack_nr;
	__s16 kstack_err;       /* negative errno when KSTACK_ERR, else 0 */
	__s16 ustack_err;       /* negative errno when USTACK_ERR, else 0 */
	char  comm[16];         /* thread name at the time of the sample */
	__u64 ips[2 * PERFCAP_STACK_MAX_DEPTH];
};

#define PERFCAP_SAMPLE_HEADER_SIZE 48 /* offsetof(struct perfcap_sample, ips) */

/* A followed process called exec, or its last thread exited. */
struct perfcap_proc_event {
	__u16 type;             /* PERFCAP_EV_EXEC or PERFCAP_EV_EXIT */
	__u16 flags;            /* 0 */
	__u32 cpu;
	__u64 ts;
	__u32 pid;              /* tgid */
	__u32 tid;              /* the thread that called exec / exited last */
	char  comm[16];         /* comm after exec; at exit, the last thread's */
};

#endif /* PERFCAP_BPF_H */
