/* text.h - turning untrusted bytes from a capture into printable strings:
 * no control characters, bounded length, always NUL-terminated. */
#ifndef ANALYZE_TEXT_H
#define ANALYZE_TEXT_H

#include <stddef.h>

/* Copies at most src_len bytes of src (stopping at a NUL) into dst of
 * dst_len bytes, replacing control characters by '?'. Returns dst. */
char *text_copy_printable(char *dst, size_t dst_len, const void *src, size_t src_len);

/* malloc'd printable copy of src[0..src_len); NUL bytes become sep
 * (argv separators) unless sep is 0, which stops at the first NUL.
 * Trailing separators are dropped. NULL on out-of-memory. */
char *text_dup_printable(const void *src, size_t src_len, char sep);

/* The last path component ("libc.so.6" for "/usr/lib/libc.so.6");
 * the whole string for names like "[kernel]". */
const char *text_basename(const char *path);

/* How output shows a module: "[app]" for /usr/bin/app, "[kernel]" and
 * "[unknown]" as they are. Writes into buf and returns it. */
const char *text_module_label(char *buf, size_t len, const char *module);

#endif /* ANALYZE_TEXT_H */
