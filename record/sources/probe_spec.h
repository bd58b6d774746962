/* probe_spec.h - the user probes named in -e: `uprobe:PATH:SYMBOL[(ARGS)]`
 * and `usdt:PATH:PROVIDER:NAME`, items of the same comma list as the
 * sources (`-e cpu,uprobe:/usr/bin/app:parse(arg1,ret),usdt:...`).
 *
 * PATH runs to the last colon (uprobe) or the last but one (usdt), so it
 * may hold colons itself; a comma inside the parentheses does not end the
 * item. ARGS: up to PERFCAP_PROBE_ARGS of arg1..arg6 (the integer
 * arguments, x86-64 calling convention) and ret (the return value).
 */
#ifndef RECORD_PROBE_SPEC_H
#define RECORD_PROBE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfcap_bpf.h"

#define PROBE_SPEC_TEXT_MAX 1024

struct probe_spec {
	uint8_t kind;             /* enum perfcap_probe_kind */
	uint8_t nargs;            /* uprobes: arg[] asked for; USDT: 0 (its own, up to 3) */
	uint8_t arg[PERFCAP_PROBE_ARGS]; /* PERFCAP_PROBE_ARG_RET or 1..6 */
	char text[PROBE_SPEC_TEXT_MAX];  /* as given */
	char path[PROBE_SPEC_TEXT_MAX];
	char symbol[256];         /* uprobe */
	char provider[128], name[128]; /* usdt */
	char origin[32];          /* "": named in -e; "gc:RUNTIME": placed by -e gc (gc_runtimes.h) */
};

/* Is the -e item starting at item a probe (uprobe:... or usdt:...)? */
bool probe_spec_is_probe(const char *item);

/* Is the -e item starting at item (len bytes) "gc": the GC probes of the
 * targets' runtimes, placed by the probe source (gc_runtimes.h)? */
bool probe_spec_is_gc(const char *item, size_t len);

/* Whether the -e list (NULL: the default set) holds the item "gc". */
bool probe_specs_want_gc(const char *list);

/* Length of the -e item starting at p: up to the next comma outside
 * parentheses, or the end. */
size_t probe_spec_item_len(const char *p);

/* Parses one item (len bytes) into out. 0, or -EINVAL after one error line. */
int probe_spec_parse(const char *item, size_t len, struct probe_spec *out);

/* Every probe item of the -e list (NULL: none) into a new array (*out,
 * *n; free() it). 0, or -EINVAL after one error line (more than
 * PERFCAP_PROBES_MAX probes, a malformed item), -ENOMEM. */
int probe_specs_parse(const char *list, struct probe_spec **out, size_t *n);

/* "arg1,ret" for a uprobe's arguments, "goarg2" for an entry probe's (Go's
 * register ABI: gc_runtimes.c), "" when none. */
void probe_spec_args_text(const struct probe_spec *s, char *buf, size_t len);

#endif /* RECORD_PROBE_SPEC_H */
