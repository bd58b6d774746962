/* radix_sort.c - LSD radix sort by a signed 64-bit key (see radix_sort.h).
 * The key's sign bit is flipped so that unsigned byte order is signed
 * order; the elements move between base and a scratch array, one pass per
 * byte position that varies, and end in base. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"

#define BYTES 8
#define BUCKETS 256

static uint64_t key_at(const char *e, size_t key_offset)
{
	int64_t k;

	memcpy(&k, e + key_offset, sizeof(k));
	return (uint64_t)k ^ (UINT64_C(1) << 63);
}

/* Counts of every byte value at every position, in one read of the keys. */
static void count_bytes(const char *base, size_t n, size_t size, size_t key_offset,
			size_t counts[BYTES][BUCKETS])
{
	memset(counts, 0, sizeof(size_t) * BYTES * BUCKETS);
	for (size_t i = 0; i < n; i++) {
		uint64_t k = key_at(base + i * size, key_offset);

		for (int b = 0; b < BYTES; b++)
			counts[b][(k >> (8 * b)) & 0xff]++;
	}
}

/* Copies one element: the common sizes with a constant length, which the
 * compiler turns into a few moves instead of a call. */
static inline void copy_element(char *dst, const char *src, size_t size)
{
	switch (size) {
	case 8: memcpy(dst, src, 8); break;
	case 16: memcpy(dst, src, 16); break;
	case 24: memcpy(dst, src, 24); break;
	case 32: memcpy(dst, src, 32); break;
	case 48: memcpy(dst, src, 48); break;
	default: memcpy(dst, src, size); break;
	}
}

/* One stable distribution of n elements from src to dst by byte b. */
static void distribute(const char *src, char *dst, size_t n, size_t size, size_t key_offset,
		       int b, const size_t count[BUCKETS])
{
	size_t at[BUCKETS], sum = 0;

	for (int v = 0; v < BUCKETS; v++) {
		at[v] = sum;
		sum += count[v];
	}
	for (size_t i = 0; i < n; i++) {
		const char *e = src + i * size;
		unsigned v = (unsigned)(key_at(e, key_offset) >> (8 * b)) & 0xff;

		copy_element(dst + at[v]++ * size, e, size);
	}
}

int radix_sort_i64(void *base, size_t n, size_t size, size_t key_offset)
{
	size_t (*counts)[BUCKETS];
	char *src = base, *scratch, *dst;

	if (n < 2)
		return 0;
	counts = malloc(sizeof(size_t) * BYTES * BUCKETS);
	scratch = malloc(n * size);
	if (!counts || !scratch) {
		free(counts);
		free(scratch);
		return -1;
	}
	count_bytes(base, n, size, key_offset, counts);
	dst = scratch;
	for (int b = 0; b < BYTES; b++) {
		char *t;

		if (counts[b][(key_at(base, key_offset) >> (8 * b)) & 0xff] == n)
			continue;      /* every key has this byte: nothing moves */
		distribute(src, dst, n, size, key_offset, b, counts[b]);
		t = src;
		src = dst;
		dst = t;
	}
	if (src != base)
		memcpy(base, src, n * size);
	free(counts);
	free(scratch);
	return 0;
}
