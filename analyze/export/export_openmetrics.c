/* export_openmetrics.c - export --format openmetrics: not written yet. */
#include <stdio.h>

#include "export_internal.h"

int export_openmetrics(struct export_ctx *cx, FILE *out)
{
	(void)cx;
	(void)out;
	fprintf(stderr, "perfcap-analyze: --format openmetrics is not implemented yet\n");
	return -1;
}
