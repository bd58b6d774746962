/* quality.h - writing rows of the quality table (quality.c for samples,
 * stacks, frames, format and file; quality_sources.c for the event
 * sources). */
#ifndef ANALYZE_QUALITY_H
#define ANALYZE_QUALITY_H

#include <stdint.h>
#include <sqlite3.h>

struct quality_writer {
	sqlite3_stmt *st;
	int failed;
};

void quality_put_u64(struct quality_writer *w, const char *source, const char *key,
		     uint64_t value);
void quality_put_text(struct quality_writer *w, const char *source, const char *key,
		      const char *value);

#endif /* ANALYZE_QUALITY_H */
