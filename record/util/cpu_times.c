/* cpu_times.c - the host's CPU time by what it went to, from /proc/stat
 * (see cpu_times.h). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "cpu_times.h"

void host_cpu_read(struct host_cpu *h, const char *path)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen(path ? path : "/proc/stat", "re");
	int n = 0;

	h->ok = 0;
	if (!f)
		return;
	/* cpu  user nice system idle iowait irq softirq steal [guest ...]:
	 * guest time is inside user already */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)              /* steal since Linux 2.6.11: 0 when absent */
		return;
	h->busy = v[0] + v[1] + v[2] + v[5] + v[6];
	h->idle = v[3] + v[4];
	h->steal = n >= 8 ? v[7] : 0;
	h->ok = 1;
}

uint64_t host_cpu_ticks_ns(uint64_t ticks)
{
	long hz = sysconf(_SC_CLK_TCK);

	return ticks * (uint64_t)(1000000000L / (hz > 0 ? hz : 100));
}
