/* json_writer.c - the streaming JSON writer (see json_writer.h): comma
 * placement by depth, string escaping, finite numbers. */
#include <inttypes.h>
#include <math.h>

#include "json_writer.h"

void json_init(struct json_writer *w, FILE *out, int pretty)
{
	w->out = out;
	w->pretty = pretty;
	w->depth = 0;
	w->has_member[0] = 0;
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static int utf8_length(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 :
		(s[0] & 0xf0) == 0xe0 ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0;   /* overlong, or a UTF-16 surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;   /* overlong, or past U+10FFFF */
	return n;
}

void json_write_string(FILE *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	fputc('"', out);
	while (*s) {
		int n = utf8_length(s);
		if (n == 0) {
			fputs("\\ufffd", out);
			s++;
		} else if (*s == '"' || *s == '\\') {
			fprintf(out, "\\%c", *s++);
		} else if (*s == '/' && s > (const unsigned char *)text && s[-1] == '<') {
			fputs("\\/", out);
			s++;
		} else if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s++);
		} else {
			fwrite(s, 1, (size_t)n, out);
			s += n;
		}
	}
	fputc('"', out);
}

static void newline(struct json_writer *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/* Separator, indentation and "key": before a value. */
static void begin_value(struct json_writer *w, const char *key)
{
	if (w->has_member[w->depth])
		fputc(',', w->out);
	if (w->depth > 0)
		newline(w);
	w->has_member[w->depth] = 1;
	if (key) {
		json_write_string(w->out, key);
		fputs(w->pretty ? ": " : ":", w->out);
	}
}

static void open_container(struct json_writer *w, const char *key, char bracket)
{
	begin_value(w, key);
	fputc(bracket, w->out);
	if (w->depth + 1 < JSON_MAX_DEPTH)
		w->depth++;
	w->has_member[w->depth] = 0;
}

static void close_container(struct json_writer *w, char bracket)
{
	int had_members = w->has_member[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (had_members)
		newline(w);
	fputc(bracket, w->out);
}

void json_begin_object(struct json_writer *w, const char *key) { open_container(w, key, '{'); }
void json_end_object(struct json_writer *w) { close_container(w, '}'); }
void json_begin_array(struct json_writer *w, const char *key) { open_container(w, key, '['); }
void json_end_array(struct json_writer *w) { close_container(w, ']'); }

void json_string(struct json_writer *w, const char *key, const char *text)
{
	begin_value(w, key);
	if (text)
		json_write_string(w->out, text);
	else
		fputs("null", w->out);
}

void json_int(struct json_writer *w, const char *key, int64_t value)
{
	begin_value(w, key);
	fprintf(w->out, "%" PRId64, value);
}

void json_uint(struct json_writer *w, const char *key, uint64_t value)
{
	begin_value(w, key);
	fprintf(w->out, "%" PRIu64, value);
}

void json_double(struct json_writer *w, const char *key, double value)
{
	begin_value(w, key);
	if (isfinite(value))
		fprintf(w->out, "%.17g", value);
	else
		fputs("null", w->out);
}

void json_bool(struct json_writer *w, const char *key, int value)
{
	begin_value(w, key);
	fputs(value ? "true" : "false", w->out);
}

void json_null(struct json_writer *w, const char *key)
{
	begin_value(w, key);
	fputs("null", w->out);
}

void json_finish(struct json_writer *w)
{
	fputc('\n', w->out);
}
