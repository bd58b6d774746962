/* sampling_ticks.h - how many of the CPU sampling ticks counted missed
 * (STATS cpu.ticks.missed = cpu.ticks.due - cpu.ticks.run) the count
 * itself cannot tell from none.
 *
 * The busy ticks due are each sampled CPU's sampling clock over the
 * period (whole periods: up to one tick short per CPU), less the host's
 * idle time since the attach, from /proc/stat, which counts hundredths of
 * a second per CPU and is read twice (up to 20 ms off per CPU), rounded up
 * to whole periods (one tick more). A recording of a quiet process may
 * count 4 of its 8 busy ticks missed on two CPUs, where nothing was. The
 * recorder's summary and the analyzer count as missed only what exceeds
 * this; STATS keep the raw counts. */
#ifndef PERFCAP_SAMPLING_TICKS_H
#define PERFCAP_SAMPLING_TICKS_H

#include <stdint.h>

/* The ticks of ncpus CPUs sampled at freq_hz that the count may be off
 * by; 0 when either is unknown (0). */
static inline uint64_t sampling_ticks_slack(uint64_t ncpus, uint64_t freq_hz)
{
	if (!ncpus || !freq_hz)
		return 0;
	return ncpus * ((20 * freq_hz + 999) / 1000 + 2);
}

#endif /* PERFCAP_SAMPLING_TICKS_H */
