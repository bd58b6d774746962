/* test_report_sha256.c - the SHA-256 the report's Reproduce block uses,
 * against the FIPS 180-4 example vectors and sha256sum(1) on a file that
 * spans several read buffers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sha256.h"

static void expect_digest(const void *data, size_t len, const char *hex)
{
	struct sha256 s;
	char got[65];

	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final_hex(&s, got);
	cr_expect_str_eq(got, hex);
}

Test(sha256, fips_vectors)
{
	const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	expect_digest("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	expect_digest("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	expect_digest(two_blocks, strlen(two_blocks),
		      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

Test(sha256, file_in_pieces_matches_whole)
{
	char path[] = "/tmp/sha256-test-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct sha256 s;
	char from_file[65], from_memory[65];
	static unsigned char data[200000];

	cr_assert(f);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + i / 251);
	fwrite(data, 1, sizeof(data), f);
	fclose(f);
	cr_assert_eq(sha256_file(path, from_file), 0);
	sha256_init(&s);
	for (size_t off = 0; off < sizeof(data); off += 999)
		sha256_update(&s, data + off, sizeof(data) - off < 999 ? sizeof(data) - off : 999);
	sha256_final_hex(&s, from_memory);
	cr_expect_str_eq(from_file, from_memory);
	cr_expect_eq(sha256_file("/nonexistent/file", from_file), -1);
	unlink(path);
}
