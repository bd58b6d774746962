/* crc32c.c - CRC-32C (Castagnoli), the chunk checksum, the polynomial
 * iSCSI and ext4 use. Debian has no C library for it (zlib's crc32 is the
 * other polynomial), and it is short: on x86-64 CPUs with SSE4.2 the
 * crc32 instruction does 8 bytes at a time (the recorder checksums every
 * chunk it writes, and the byte-wise table took 8% of its CPU on a busy
 * server); elsewhere a table, built once on first use. Both give the same
 * value (tests/format: test_crc32c). */
#include <pthread.h>
#include <string.h>

#include "perfcap_format.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;
static int crc_hw;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
#if defined(__x86_64__)
	crc_hw = __builtin_cpu_supports("sse4.2");
#endif
}

/* The table, one byte at a time; crc is already inverted. */
uint32_t pc_crc32c_table(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		c = __builtin_ia32_crc32di(c, v);
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
#if defined(__x86_64__)
	if (crc_hw)
		return ~crc_sse42(~crc, data, len);
#endif
	return ~pc_crc32c_table(~crc, data, len);
}
