/* export_tables.c - export --format csv/ndjson: not written yet. */
#include <stdio.h>

#include "export_internal.h"

int export_tables(struct export_ctx *cx, const char *dir, int ndjson)
{
	(void)cx;
	(void)dir;
	(void)ndjson;
	fprintf(stderr, "perfcap-analyze: --format tables is not implemented yet\n");
	return -1;
}
