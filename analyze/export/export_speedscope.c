/* export_speedscope.c - export --format speedscope: not written yet. */
#include <stdio.h>

#include "export_internal.h"

int export_speedscope(struct export_ctx *cx, FILE *out)
{
	(void)cx;
	(void)out;
	fprintf(stderr, "perfcap-analyze: --format speedscope is not implemented yet\n");
	return -1;
}
