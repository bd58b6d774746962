/* sha256.h - SHA-256 (FIPS 180-4) of a file, for the report's Reproduce
 * block: the capture's hash, to match the recorder's program hashes.
 * Computed by libcrypto (sha256.c). */
#ifndef ANALYZE_SHA256_H
#define ANALYZE_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct evp_md_ctx_st;

struct sha256 {
	struct evp_md_ctx_st *ctx;   /* libcrypto's EVP_MD_CTX */
	int failed;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
/* Writes 64 lower-case hex digits and a NUL into hex and frees what init
 * took (call it once after init, always). 0, or -1 (hex empty) if
 * libcrypto failed. */
int sha256_final_hex(struct sha256 *s, char hex[65]);

/* Hashes a whole file. 0, or -1 (errno set) if it cannot be read. */
int sha256_file(const char *path, char hex[65]);

#endif /* ANALYZE_SHA256_H */
