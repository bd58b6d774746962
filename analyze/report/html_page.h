/* html_page.h - writes perfcap-analyze's self-contained HTML page (report
 * --html, diff --html): a page skeleton built at compile time from html/
 * (template, styles, script and the npm libraries it embeds) with the
 * report's or diff's JSON placed in a <script type="application/json">
 * element. The page's script renders it by data.kind ("report" or "diff").
 * The page loads nothing from the network.
 *
 * A binary built without the JavaScript libraries (npm unavailable at build
 * time, or -Dhtml=disabled) carries no skeleton: html_page_available() says
 * so and why, and the writers refuse with one line on stderr,
 * "perfcap-analyze was built without HTML support: REASON", rather than
 * write a page that cannot work. */
#ifndef ANALYZE_HTML_PAGE_H
#define ANALYZE_HTML_PAGE_H

#include <stddef.h>
#include <stdio.h>

/* 1 when this binary can write HTML pages; otherwise 0, and *why (when
 * why is not NULL) points at the reason (static text). Check it before
 * doing the work of building the JSON. */
int html_page_available(const char **why);

/* Writes the page to out: title (plain text, escaped here; NULL for a
 * default) and json, json_len bytes of one JSON document (from
 * json_writer.h). Every '<' in the JSON is written as \u003c, so no text in
 * it can end the <script> element. Returns 0, or -1: without HTML support
 * (after printing the line above), or on a write error or empty json
 * (errno set, nothing printed: the caller knows the file's name). */
int html_page_write(FILE *out, const char *title, const char *json, size_t json_len);

/* Writes the page into the file path, through path.tmp renamed at the end,
 * so a failure never leaves a partial page. Prints one line on stderr on
 * failure ("perfcap-analyze: PATH: reason"). Returns 0 or -1. */
int html_page_write_file(const char *path, const char *title, const char *json,
			 size_t json_len);

#endif /* ANALYZE_HTML_PAGE_H */
