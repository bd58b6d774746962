/* softirq_marks.h - where, in the kernel's per-CPU data, the fields that
 * name the running soft interrupt are (bpf/perfcap_bpf.h, struct
 * perfcap_softirq_marks): timer_bases[].running_timer, the soft hrtimer
 * bases' running, softnet_data.in_net_rx_action and __softirq_pending,
 * each as a distance from runqueues, read from the kernel's BTF. With them
 * the sched source needs no program at every soft interrupt's entry. */
#ifndef RECORD_SOFTIRQ_MARKS_H
#define RECORD_SOFTIRQ_MARKS_H

#include <stdbool.h>
#include <stddef.h>

#include "perfcap_bpf.h"

/* Fills m from the running kernel's BTF. Whether every field was found
 * (else m is zeroed and why says what is missing). */
bool softirq_marks_find(struct perfcap_softirq_marks *m, char *why, size_t len);

#endif /* RECORD_SOFTIRQ_MARKS_H */
