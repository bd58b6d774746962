/* helpers.h - small capture-building helpers shared by the format tests. */
#ifndef TESTS_FORMAT_HELPERS_H
#define TESTS_FORMAT_HELPERS_H

#include <stdint.h>
#include "perfcap_format.h"

/* A temporary path unique to this process and tag; removed by the caller. */
void tmp_path(char *out, size_t len, const char *tag);

/* Appends n sample records with ts = base + i*1000, tid = 100 + i % 3. */
void add_samples(struct pc_buf *b, int n, uint64_t base);

/* Writes a capture: META(2 pairs), EVENTS(n samples) x nchunks, END.
 * Returns the chunk end offsets in ends[] (file header excluded), count in
 * *nends. */
void write_capture(const char *path, int nchunks, int n, uint64_t *ends, int *nends);

/* Reads every chunk; returns how many were returned. */
int count_chunks(const char *path, struct pc_reader_status *st);

#endif
