/* cpu_times.h - the host's CPU time since boot by what it went to, from the
 * "cpu" line of /proc/stat (all CPUs, USER_HZ ticks): busy (user, system,
 * interrupts), idle (idle and I/O wait) and steal (time a hypervisor gave
 * to other guests while this virtual machine had work). Read twice, the
 * difference is what a span of time went to: the recording's STATS
 * host.cpu.* (output/host_cpu.h), the cpu source's idle time while it
 * sampled (sources/source_cpu.c). */
#ifndef RECORD_CPU_TIMES_H
#define RECORD_CPU_TIMES_H

#include <stdint.h>

struct host_cpu {
	uint64_t busy, idle, steal;   /* ticks since boot */
	int ok;                       /* read and parsed */
};

/* Reads /proc/stat (path: NULL for it; tests give a file). Sets h->ok. */
void host_cpu_read(struct host_cpu *h, const char *path);

/* /proc/stat clock ticks as ns. */
uint64_t host_cpu_ticks_ns(uint64_t ticks);

#endif /* RECORD_CPU_TIMES_H */
