/* query_output.c - tab, CSV and JSON rows (see query_output.h).
 *
 * tab:  values separated by tabs, one row per line; NULL is empty; a tab,
 *       newline, carriage return or backslash inside a value is written as
 *       \t, \n, \r, \\.
 * csv:  RFC 4180: CRLF line ends, a field holding a comma, quote, CR or LF
 *       is quoted and its quotes doubled; NULL is an empty field, an empty
 *       string is "".
 * json: an array of objects keyed by column name; integers and reals are
 *       numbers (non-finite reals null), text is a string (invalid UTF-8
 *       replaced by U+FFFD), blobs are hex strings, NULL is null.
 * Blobs are lower-case hex in all three. */
#include <math.h>
#include <string.h>

#include "util/json_writer.h"
#include "query_output.h"

int query_format_parse(const char *name, enum query_format *out)
{
	static const char *const names[] = { "tab", "csv", "json" };

	for (int i = 0; i < 3; i++)
		if (strcmp(name, names[i]) == 0) {
			*out = (enum query_format)i;
			return 0;
		}
	return -1;
}

static void put_hex(FILE *out, const unsigned char *p, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

/* ---- tab ---- */

static void tab_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\t': fputs("\\t", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\\': fputs("\\\\", out); break;
		default:
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				fprintf(out, "\\x%02x", (unsigned char)*s); /* ESC... */
			else
				fputc(*s, out);
			break;
		}
	}
}

/* ---- csv ---- */

static void csv_text(FILE *out, const char *s)
{
	if (*s && !strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* ---- json ---- */

static void json_value(FILE *out, sqlite3_stmt *st, int col)
{
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, col));
		break;
	case SQLITE_FLOAT:
		if (isfinite(sqlite3_column_double(st, col)))
			fputs((const char *)sqlite3_column_text(st, col), out);
		else
			fputs("null", out);
		break;
	case SQLITE_TEXT:
		json_write_string(out, (const char *)sqlite3_column_text(st, col));
		break;
	case SQLITE_BLOB:
		fputc('"', out);
		put_hex(out, sqlite3_column_blob(st, col), sqlite3_column_bytes(st, col));
		fputc('"', out);
		break;
	default:
		fputs("null", out);
		break;
	}
}

static void json_row(FILE *out, sqlite3_stmt *st, int nrows)
{
	int ncols = sqlite3_column_count(st);

	fputs(nrows ? ",\n{" : "\n{", out);
	for (int c = 0; c < ncols; c++) {
		if (c)
			fputc(',', out);
		json_write_string(out, sqlite3_column_name(st, c));
		fputc(':', out);
		json_value(out, st, c);
	}
	fputc('}', out);
}

/* ---- tab and csv rows ---- */

static void text_value(FILE *out, sqlite3_stmt *st, int col, enum query_format format)
{
	int type = sqlite3_column_type(st, col);

	if (type == SQLITE_NULL)
		return;
	if (type == SQLITE_BLOB) {
		put_hex(out, sqlite3_column_blob(st, col), sqlite3_column_bytes(st, col));
		return;
	}
	if (format == QUERY_CSV)
		csv_text(out, (const char *)sqlite3_column_text(st, col));
	else
		tab_text(out, (const char *)sqlite3_column_text(st, col));
}

static void text_header(FILE *out, sqlite3_stmt *st, enum query_format format)
{
	int ncols = sqlite3_column_count(st);

	for (int c = 0; c < ncols; c++) {
		if (c)
			fputc(format == QUERY_CSV ? ',' : '\t', out);
		if (format == QUERY_CSV)
			csv_text(out, sqlite3_column_name(st, c));
		else
			tab_text(out, sqlite3_column_name(st, c));
	}
	fputs(format == QUERY_CSV ? "\r\n" : "\n", out);
}

static void text_row(FILE *out, sqlite3_stmt *st, enum query_format format)
{
	int ncols = sqlite3_column_count(st);

	for (int c = 0; c < ncols; c++) {
		if (c)
			fputc(format == QUERY_CSV ? ',' : '\t', out);
		text_value(out, st, c, format);
	}
	fputs(format == QUERY_CSV ? "\r\n" : "\n", out);
}

int query_print(sqlite3_stmt *st, enum query_format format, FILE *out)
{
	int nrows = 0, rc;

	if (format == QUERY_JSON)
		fputc('[', out);
	else
		text_header(out, st, format);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (format == QUERY_JSON)
			json_row(out, st, nrows);
		else
			text_row(out, st, format);
		nrows++;
	}
	if (format == QUERY_JSON)
		fputs(nrows ? "\n]\n" : "]\n", out);
	return rc == SQLITE_DONE ? 0 : rc;
}
