/* report_sections.h - the sections of the text report, each in its own
 * file, and what they share. Used only by report_text.c. */
#ifndef ANALYZE_REPORT_SECTIONS_H
#define ANALYZE_REPORT_SECTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "callchains.h"
#include "names.h"
#include "report.h"

struct report_context {
	sqlite3 *db;
	const struct report_options *opts;
	FILE *out;
	const struct callchains *cc;  /* every stack as functions */
	const struct names *names;
	const struct selection *sel;  /* the selected sample groups */
	uint64_t samples;         /* samples selected */
	double freq_hz;           /* sampling frequency, 0 if unknown */
};

/* Estimated CPU time of n samples ("-" if the frequency is unknown). */
const char *report_cpu_time(const struct report_context *ctx, char *buf, size_t len,
			    uint64_t n);

int report_section_functions(const struct report_context *ctx);  /* report_functions.c */
int report_section_stacks(const struct report_context *ctx);     /* report_stacks.c */
int report_section_quality(const struct report_context *ctx);    /* report_quality.c */

#endif /* ANALYZE_REPORT_SECTIONS_H */
