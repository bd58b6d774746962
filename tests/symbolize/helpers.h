/* helpers.h - shared by the symbolizer tests: where the fixtures are, and
 * independent answers from binutils (nm, readelf) and the fixture sources,
 * so the tests never check the code against itself. */
#ifndef SYMBOLIZE_TEST_HELPERS_H
#define SYMBOLIZE_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#define TEST_PATH_MAX 4096
#define TEST_TMP_MAX  64   /* a directory from make_temp_dir */

/* $SYM_FIXTURES/name: a file built by build_fixtures.sh. */
void fixture_path(char out[TEST_PATH_MAX], const char *name);

/* Line number of the first line of $SYM_SOURCES/source containing marker,
 * or -1. */
int source_marker_line(const char *source, const char *marker);

/* Address and size of a symbol as `nm -S` prints them. 0 or -1. */
int nm_symbol(const char *path, const char *name, uint64_t *addr,
	      uint64_t *size);

/* File offset of an ELF vaddr per the LOAD lines of `readelf -lW`. 0 or -1. */
int readelf_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *offset);

/* Number of LOAD lines of `readelf -lW`. */
int readelf_load_count(const char *path);

/* Build ID as hex from `readelf -n`, into hex (41 bytes). 0 or -1. */
int readelf_build_id(const char *path, char hex[41]);

/* The build-id note of path, through the library. Returns its length. */
int file_build_id(const char *path, uint8_t id[20]);

/* Offset in path of the function called name (nm address, readelf layout);
 * fails the test if either is missing. */
uint64_t function_offset(const char *path, const char *name);

/* A fresh directory under /tmp (out) and its removal with its contents. */
void make_temp_dir(char out[TEST_TMP_MAX]);
void remove_temp_dir(const char *dir);

/* cp from to, creating to's parent directories. 0 or -1. */
int copy_file(const char *from, const char *to);

int ends_with(const char *s, const char *suffix);

#endif
