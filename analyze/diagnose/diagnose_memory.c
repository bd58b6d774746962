/* diagnose_memory.c - "memory_pressure": page faults (page_faults, whose
 * weights undo the recorder's 1-in-N sampling) in the process that had
 * most of them, scored by the CPU time its threads spent handling faults
 * (samples whose kernel stack is in the fault path) over their observed
 * time. Key number: the weighted fault count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "diagnose.h"
#include "util/fmt.h"

#define MIN_SCORE 0.05

static int in_fault_path(const struct diag_input *in, int64_t kstack)
{
	static const char *const fault_fns[] = { "exc_page_fault", "do_user_addr_fault",
		"handle_mm_fault", "__handle_mm_fault", "do_page_fault", "handle_pte_fault" };
	uint32_t n;
	const uint32_t *fns = callchains_get(in->cc, kstack, &n);

	for (uint32_t i = 0; i < n; i++)
		for (size_t j = 0; j < sizeof(fault_fns) / sizeof(fault_fns[0]); j++)
			if (strcmp(in->cc->functions[fns[i]].name, fault_fns[j]) == 0)
				return 1;
	return 0;
}

int diagnose_memory(const struct diag_input *in, struct diagnosis *d)
{
	char where[1024], sql[1400], comm[64], a[FMT_BUF];
	uint64_t fault_samples = 0, observed = 0;
	int64_t pid, faults, records;
	sqlite3_stmt *st;
	struct diag_cause *c;
	double score;

	if (!in->has_mem || in->freq_hz <= 0)
		return 0;
	snprintf(sql, sizeof(sql), "SELECT pid, sum(weight), count(*) FROM page_faults WHERE %s"
		 " GROUP BY pid ORDER BY 2 DESC LIMIT 1",
		 report_scope_sql(where, sizeof(where), "pid", "tid", "ts", "ts"));
	st = diag_prepare(in, sql);
	if (!st)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return 0;
	}
	pid = sqlite3_column_int64(st, 0);
	faults = sqlite3_column_int64(st, 1);
	records = sqlite3_column_int64(st, 2);
	sqlite3_finalize(st);
	for (size_t i = 0; i < in->sel->len; i++)
		if (in->sel->groups[i].pid == (uint32_t)pid &&
		    in_fault_path(in, in->sel->groups[i].kstack))
			fault_samples += in->sel->groups[i].count;
	for (size_t i = 0; i < in->nthreads; i++)
		if (in->threads[i].pid == (uint32_t)pid)
			observed += in->threads[i].observed;
	if (observed == 0)
		return 0;
	score = (double)fault_samples / in->freq_hz * 1e9 / (double)observed;
	if (score < MIN_SCORE || !(c = diag_add_cause(d, "memory_pressure")))
		return 0;
	c->score = score > 1 ? 1 : score;
	c->key_name = "fault_total";
	c->key_value = (double)faults;
	c->key_unit = "count";
	c->sources = "mem,cpu";
	diag_comm(in, (uint32_t)pid, (uint32_t)pid, comm, sizeof(comm));
	snprintf(c->title, sizeof(c->title), "memory pressure: pid %lld (%s) took %lld page"
		 " faults", (long long)pid, comm, (long long)faults);
	diag_int(&c->subject, "pid", pid);
	diag_text(&c->subject, "comm", comm);
	diag_int(&c->subject, "fault_samples", (int64_t)fault_samples);
	diag_evidence(c, "%lld faults (%lld recorded, weighted); about %s of CPU in the fault"
		      " path (%llu samples)", (long long)faults, (long long)records,
		      fmt_seconds(a, sizeof(a), (double)fault_samples / in->freq_hz),
		      (unsigned long long)fault_samples);
	return 0;
}
