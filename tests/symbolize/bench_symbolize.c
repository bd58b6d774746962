/* bench_symbolize.c - resolutions per second of the symbolizer: once over a
 * set of distinct addresses (every one a cache miss), then 1M times over the
 * same set (cache hits). Addresses are taken every 16 bytes inside each
 * sized function of one ELF file.
 *
 * Usage: bench_symbolize [--capture] [ELF]
 *   ELF        the file to resolve in (default: this program, which has DWARF)
 *   --capture  resolve from an embedded module record only (no local files)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/elf_module.h"
#include "symbolize/symbolize.h"

#define MAX_ADDRS     200000
#define CACHED_CALLS  1000000
#define MAX_FRAMES    16

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* File offset of vaddr, the inverse of pc_elf_offset_to_vaddr. */
static int vaddr_to_offset(const struct pc_elf_module *m, uint64_t vaddr,
			   uint64_t *offset)
{
	uint32_t i;

	for (i = 0; i < m->nsegs; i++) {
		const struct pc_segment *seg = &m->segs[i];

		if (vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->filesz) {
			*offset = vaddr - seg->vaddr + seg->offset;
			return 0;
		}
	}
	return -1;
}

static size_t collect_offsets(const struct pc_elf_module *m, uint64_t *out)
{
	size_t n = 0;
	uint32_t i;
	uint64_t k;

	for (i = 0; i < m->nsyms && n < MAX_ADDRS; i++) {
		for (k = 0; k < m->syms[i].size && n < MAX_ADDRS; k += 16) {
			if (vaddr_to_offset(m, m->syms[i].addr + k, &out[n]) == 0)
				n++;
		}
	}
	return n;
}

static struct symbolizer *make_symbolizer(const struct pc_elf_module *m,
					  int capture_only)
{
	struct symbolizer_opts opts = { .local_files = !capture_only };
	struct symbolizer *s = symbolizer_new(&opts);
	struct pc_buf b = { 0 };

	if (s != NULL && capture_only) {
		if (pc_buf_add_module(&b, m, NULL, 0) != 0 ||
		    symbolizer_add_module(s, (const struct pc_rec *)b.data) != 0)
			fprintf(stderr, "could not embed the module\n");
		pc_buf_free(&b);
	}
	return s;
}

static void run(const struct pc_elf_module *m, const uint64_t *offsets,
		size_t n, int capture_only)
{
	struct symbolizer *s = make_symbolizer(m, capture_only);
	struct sym_frame out[MAX_FRAMES];
	struct symbolizer_stats st;
	size_t i, frames = 0, lines = 0;
	double t0, t1, t2;

	t0 = now_seconds();
	for (i = 0; i < n; i++) {
		int k, got = symbolizer_resolve_user(s, m->path, m->build_id,
						     m->build_id_len, offsets[i],
						     out, MAX_FRAMES);
		frames += (size_t)got;
		for (k = 0; k < got; k++)
			lines += out[k].mode == SYM_MODE_LINE;
	}
	t1 = now_seconds();
	for (i = 0; i < CACHED_CALLS; i++)
		symbolizer_resolve_user(s, m->path, m->build_id, m->build_id_len,
					offsets[i % n], out, MAX_FRAMES);
	t2 = now_seconds();
	symbolizer_get_stats(s, &st);
	printf("%s (%s): %zu addresses, %zu frames (%zu with lines), "
	       "%llu unresolved\n", m->path,
	       capture_only ? "capture record" : "local files", n, frames,
	       lines, (unsigned long long)st.unresolved);
	printf("  uncached: %.0f resolutions/s (%.2f us each)\n",
	       (double)n / (t1 - t0), (t1 - t0) * 1e6 / (double)n);
	printf("  cached:   %.0f resolutions/s (%.3f us each), %llu hits\n",
	       CACHED_CALLS / (t2 - t1), (t2 - t1) * 1e6 / CACHED_CALLS,
	       (unsigned long long)st.cache_hits);
	symbolizer_free(s);
}

int main(int argc, char **argv)
{
	int capture_only = argc > 1 && strcmp(argv[1], "--capture") == 0;
	const char *path = argc > 1 + capture_only ? argv[1 + capture_only] :
						     "/proc/self/exe";
	char resolved[4096], err[256] = "";
	struct pc_elf_module m;
	uint64_t *offsets;
	size_t n;

	if (realpath(path, resolved) == NULL ||
	    pc_elf_module_load(&m, resolved, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_symbolize: %s: %s\n", path, err);
		return 1;
	}
	offsets = malloc(MAX_ADDRS * sizeof(*offsets));
	n = offsets ? collect_offsets(&m, offsets) : 0;
	if (n == 0) {
		fprintf(stderr, "bench_symbolize: no addresses in %s\n", resolved);
		return 1;
	}
	run(&m, offsets, n, capture_only);
	free(offsets);
	pc_elf_module_free(&m);
	return 0;
}
