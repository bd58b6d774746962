/* util.h - small helpers shared by the recorder: error lines, clocks,
 * shell quoting and whole-file reads. */
#ifndef RECORD_UTIL_H
#define RECORD_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROGRAM_NAME "perfcap-record"

/* Set by -v: prints extra progress lines on stderr. */
extern bool verbose_enabled;

/* "perfcap-record: <message>\n" on stderr. */
void error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "perfcap-record: warning: <message>\n" on stderr. */
void warning_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like error_line, only with -v. */
void verbose_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t monotonic_ns(void);
uint64_t realtime_ns(void);

/* A growable NUL-terminated string. The append functions return 0 or
 * -ENOMEM; text_append_shell_word quotes word for a POSIX shell when it
 * needs quoting. */
struct text {
	char  *s;
	size_t len;
	size_t cap;
};
int text_append(struct text *t, const char *s, size_t n);
int text_append_str(struct text *t, const char *s);
int text_append_shell_word(struct text *t, const char *word);
void text_free(struct text *t);

/* Reads a whole (small, /proc or /sys) file into a malloc'd NUL-terminated
 * buffer. Returns the length or -errno. max caps the bytes read. */
long read_whole_file(const char *path, char **out, size_t max);
/* Reads the first line (without the newline) into buf. 0 or -errno. */
int read_first_line(const char *path, char *buf, size_t len);

/* Makes room for `need` elements of elem_size bytes in array ptr of
 * capacity *cap (doubling). Returns the possibly moved array, or NULL when
 * out of memory (ptr is then still valid and unchanged). */
void *array_reserve(void *ptr, uint32_t *cap, uint32_t need, size_t elem_size);

#endif /* RECORD_UTIL_H */
