/* crc32c.c - CRC-32C (Castagnoli), the chunk checksum: the polynomial
 * iSCSI and ext4 use. On x86-64 CPUs with SSE4.2 the crc32 instruction
 * computes it 8 bytes at a time (the table loop, one byte at a time, was
 * 5% of the importer's main thread: every chunk is checked as it is
 * read); elsewhere a table built once on first use. Both give the same
 * values (tests/format: crc32c_known_answer, and the two paths compared). */
#include <pthread.h>
#include <string.h>

#include "perfcap_format.h"

static uint32_t crc_table[256];
static int use_sse42;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	use_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

/* The running (inverted) crc over len bytes, a byte at a time. */
static uint32_t crc_table_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same with the crc32 instruction, 8 bytes per step. */
__attribute__((target("sse4.2")))
static uint32_t crc_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t word;
		memcpy(&word, p, sizeof(word));
		c = __builtin_ia32_crc32di(c, word);
	}
	crc = (uint32_t)c;
	for (; len; p++, len--)
		crc = __builtin_ia32_crc32qi(crc, *p);
	return crc;
}
#endif

uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (use_sse42)
		return ~crc_sse42(~crc, data, len);
#endif
	return ~crc_table_bytes(~crc, data, len);
}

uint32_t pc_crc32c_portable(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_table_bytes(~crc, data, len);
}
