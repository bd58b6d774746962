/* crc32c.c - CRC-32C (Castagnoli), the chunk checksum. Table-driven,
 * table built once on first use. Sixteen lines did not justify a new
 * library dependency; the polynomial is the one iSCSI and ext4 use. */
#include <pthread.h>

#include "perfcap_format.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t pc_crc32c(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	pthread_once(&crc_once, crc_table_init);
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
