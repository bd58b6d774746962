/* diff_html.c - diff --html: a self-contained page around the diff JSON.
 * The project's HTML page (differential flame graph, overlaid latency
 * histograms) is written by the shared page writer when it is linked in;
 * until then this minimal page embeds the same JSON, readable and
 * machine-extractable (<script id="perfcap-data">). */
#include <stdio.h>

#include "diff.h"

int diff_html(FILE *out, const char *title, const char *json, size_t len)
{
	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	for (const char *p = title; *p; p++)
		fputs(*p == '<' ? "&lt;" : *p == '&' ? "&amp;" : (char[2]){ *p, 0 }, out);
	fprintf(out, "</title></head><body>\n<h1>perfcap diff</h1>\n"
		"<p>The diff as JSON (docs/diff-json.md):</p>\n"
		"<script id=\"perfcap-data\" type=\"application/json\">\n");
	fwrite(json, 1, len, out);   /* the JSON writer escapes "</" */
	fprintf(out, "</script>\n<pre id=\"raw\"></pre>\n<script>document.getElementById('raw')"
		".textContent = document.getElementById('perfcap-data').textContent;</script>\n"
		"</body></html>\n");
	return ferror(out) ? -1 : 0;
}
