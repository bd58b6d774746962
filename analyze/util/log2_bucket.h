/* log2_bucket.h - the bucket of a duration in the report's JSON
 * histograms (docs/report-json.md): bucket b counts the d with
 * 2^(b-1) < d <= 2^b, bucket 0 every d <= 1, the last everything above.
 * One definition for the requests' histogram (report) and the system
 * calls' (query/calls.c), which are built as the values stream by. */
#ifndef ANALYZE_LOG2_BUCKET_H
#define ANALYZE_LOG2_BUCKET_H

#include <stdint.h>

#define LOG2_BUCKETS 48

static inline int log2_bucket(int64_t d)
{
	int b = 0;

	while (b < LOG2_BUCKETS - 1 && d > (1ll << b))
		b++;
	return b;
}

#endif /* ANALYZE_LOG2_BUCKET_H */
