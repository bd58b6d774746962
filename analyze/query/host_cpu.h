/* host_cpu.h - the host's CPU time over a recording (STATS host.cpu.*,
 * record/host_cpu.h): busy, idle and stolen by a hypervisor for other
 * guests; and the CPU sampling ticks that took no sample (cpu.ticks.*). Steal is time the recorded threads wanted a CPU and the virtual
 * machine did not run: no event sees it, and it stretches whatever was
 * running (sampled CPU time, system calls, waits for a CPU). */
#ifndef ANALYZE_QUERY_HOST_CPU_H
#define ANALYZE_QUERY_HOST_CPU_H

#include <sqlite3.h>

struct host_cpu_time {
	double busy_ns, idle_ns, steal_ns;
	int known;                  /* the capture has them (recorded since 2026-11) */
};

/* Reads them; known = 0 when the capture has none. */
void host_cpu_time_read(sqlite3 *db, struct host_cpu_time *t);

/* steal / (busy + steal): the share of the time the machine had work that
 * went to other guests. 0 when unknown or nothing ran. */
double host_cpu_stolen_share(const struct host_cpu_time *t);

/* The share from which steal is worth a caveat (diagnosis) or a warning
 * (diff): the share from which the diagnosis reports a cause. */
#define HOST_CPU_STEAL_NOTABLE 0.05

/* host_cpu_stolen_share when it is measured well enough to judge: over at
 * least a second of CPU time (/proc/stat counts hundredths of a second, so
 * the share is then good to 1%); NAN otherwise or when unknown. */
double host_cpu_measured_steal(const struct host_cpu_time *t);

/* The CPU sampling ticks of a capture (STATS cpu.ticks.*, perfcap-record's
 * cpu source): those due on busy CPUs and those at which no sample was
 * taken. Like steal, missed ticks hide CPU time from the samples. */
struct sampling_ticks {
	double due, missed;         /* as STATS counted them */
	double slack;               /* missed ticks the count cannot tell from none
				     * (common/sampling_ticks.h; 0 without META
				     * host.ncpus and sampling.cpu.freq_hz) */
	int known;                  /* the capture has them, with due > 0 */
};

/* Reads them; known = 0 when the capture has none. */
void sampling_ticks_read(sqlite3 *db, struct sampling_ticks *t);

/* The share of the due ticks missed beyond the slack (0 within it); NAN
 * when unknown. */
double sampling_ticks_missed_share(const struct sampling_ticks *t);

#endif /* ANALYZE_QUERY_HOST_CPU_H */
