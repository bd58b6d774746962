/* export_pprof_none.c - export --format pprof and perfetto in a build
 * without protobuf-c, protoc-c or zlib: refused with the reason. */
#include <stdio.h>

#include "export_internal.h"

int export_pprof_available(const char **why)
{
	*why = "this perfcap-analyze was built without protobuf-c and zlib"
	       " (install protobuf-c-compiler, libprotobuf-c-dev, zlib1g-dev and rebuild)";
	return 0;
}

int export_pprof(struct export_ctx *cx, FILE *out)
{
	const char *why;

	(void)cx;
	(void)out;
	export_pprof_available(&why);
	fprintf(stderr, "perfcap-analyze: %s\n", why);
	return -1;
}

int export_perfetto(struct export_ctx *cx, FILE *out)
{
	return export_pprof(cx, out);
}
