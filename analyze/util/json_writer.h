/* json_writer.h - a streaming JSON writer for the machine-readable outputs
 * (query --format json, report --json, diff --json, the data embedded in
 * --html pages). The caller opens and closes objects and arrays in order;
 * the writer places commas, escapes strings (invalid UTF-8 becomes
 * U+FFFD, and "</" is written "<\/" so the text is safe inside an HTML
 * <script> element) and writes non-finite numbers as null.
 *
 * Every call takes a key: the member name inside an object, NULL inside an
 * array or at the top level. */
#ifndef ANALYZE_JSON_WRITER_H
#define ANALYZE_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 64

struct json_writer {
	FILE *out;
	int   pretty;                     /* newlines and two-space indents */
	int   depth;
	int   has_member[JSON_MAX_DEPTH]; /* a value was written at this depth */
};

void json_init(struct json_writer *w, FILE *out, int pretty);

void json_begin_object(struct json_writer *w, const char *key);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w, const char *key);
void json_end_array(struct json_writer *w);

void json_string(struct json_writer *w, const char *key, const char *text); /* NULL -> null */
void json_int(struct json_writer *w, const char *key, int64_t value);
void json_uint(struct json_writer *w, const char *key, uint64_t value);
void json_double(struct json_writer *w, const char *key, double value);
void json_bool(struct json_writer *w, const char *key, int value);
void json_null(struct json_writer *w, const char *key);

/* Ends the document with a newline. */
void json_finish(struct json_writer *w);

/* Writes text as a quoted, escaped JSON string (for callers that write
 * their own structure, such as query's row objects). */
void json_write_string(FILE *out, const char *text);

#endif /* ANALYZE_JSON_WRITER_H */
