/* probe_spec.c - parsing the user probes of -e (see probe_spec.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_spec.h"
#include "util/util.h"

bool probe_spec_is_probe(const char *item)
{
	return strncmp(item, "uprobe:", 7) == 0 || strncmp(item, "usdt:", 5) == 0;
}

bool probe_spec_is_gc(const char *item, size_t len)
{
	return len == 2 && strncmp(item, "gc", 2) == 0;
}

bool probe_specs_want_gc(const char *list)
{
	for (const char *p = list; p && *p;) {
		size_t len = probe_spec_item_len(p);

		if (probe_spec_is_gc(p, len))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

size_t probe_spec_item_len(const char *p)
{
	size_t i = 0;
	int depth = 0;

	for (; p[i]; i++) {
		if (p[i] == '(')
			depth++;
		else if (p[i] == ')' && depth > 0)
			depth--;
		else if (p[i] == ',' && depth == 0)
			break;
	}
	return i;
}

static int bad(const struct probe_spec *s, const char *why)
{
	error_line("invalid probe '%s': %s (expected uprobe:PATH:SYMBOL[(arg1,...,ret)] or "
		   "usdt:PATH:PROVIDER:NAME)", s->text, why);
	return -EINVAL;
}

/* Copies [from, to) into dst (size dstlen); false if empty or too long. */
static bool take(char *dst, size_t dstlen, const char *from, const char *to)
{
	size_t n = (size_t)(to - from);

	if (n == 0 || n >= dstlen)
		return false;
	memcpy(dst, from, n);
	dst[n] = '\0';
	return true;
}

/* The last ':' in [from, to), or NULL. */
static const char *last_colon(const char *from, const char *to)
{
	for (const char *p = to; p > from; p--)
		if (p[-1] == ':')
			return p - 1;
	return NULL;
}

static int parse_arg(struct probe_spec *s, const char *from, const char *to)
{
	size_t n = (size_t)(to - from);

	if (s->nargs >= PERFCAP_PROBE_ARGS)
		return bad(s, "at most 3 arguments");
	if (n == 3 && strncmp(from, "ret", 3) == 0) {
		s->arg[s->nargs++] = PERFCAP_PROBE_ARG_RET;
		return 0;
	}
	if (n == 4 && strncmp(from, "arg", 3) == 0 && from[3] >= '1' && from[3] <= '6') {
		s->arg[s->nargs++] = (uint8_t)(from[3] - '0');
		return 0;
	}
	return bad(s, "arguments are arg1 to arg6 and ret");
}

/* "(arg1,ret)" between open and close (exclusive of both). */
static int parse_args(struct probe_spec *s, const char *open, const char *close)
{
	const char *p = open + 1;

	while (p < close) {
		const char *comma = memchr(p, ',', (size_t)(close - p));
		const char *end = comma ? comma : close;

		if (parse_arg(s, p, end))
			return -EINVAL;
		p = end + 1;
	}
	return 0;
}

static int parse_uprobe(struct probe_spec *s, const char *body, const char *end)
{
	const char *open = memchr(body, '(', (size_t)(end - body)), *colon;

	if (open) {
		if (end[-1] != ')' || end - 1 <= open)
			return bad(s, "the argument list must end the probe with ')'");
		if (open + 1 == end - 1)
			return bad(s, "empty argument list");
		if (parse_args(s, open, end - 1))
			return -EINVAL;
		end = open;
	}
	colon = last_colon(body, end);
	if (!colon)
		return bad(s, "no SYMBOL after PATH");
	if (!take(s->path, sizeof(s->path), body, colon))
		return bad(s, "no PATH");
	if (!take(s->symbol, sizeof(s->symbol), colon + 1, end))
		return bad(s, "no SYMBOL");
	return 0;
}

static int parse_usdt(struct probe_spec *s, const char *body, const char *end)
{
	const char *c2 = last_colon(body, end), *c1 = c2 ? last_colon(body, c2) : NULL;

	if (memchr(body, '(', (size_t)(end - body)))
		return bad(s, "USDT probes capture their own first 3 arguments");
	if (!c1)
		return bad(s, "expected PATH:PROVIDER:NAME");
	if (!take(s->path, sizeof(s->path), body, c1))
		return bad(s, "no PATH");
	if (!take(s->provider, sizeof(s->provider), c1 + 1, c2))
		return bad(s, "no PROVIDER");
	if (!take(s->name, sizeof(s->name), c2 + 1, end))
		return bad(s, "no NAME");
	s->nargs = PERFCAP_PROBE_ARGS;
	return 0;
}

int probe_spec_parse(const char *item, size_t len, struct probe_spec *s)
{
	const char *end = item + len;

	memset(s, 0, sizeof(*s));
	if (len >= sizeof(s->text)) {
		error_line("invalid probe '%.40s...': longer than %zu bytes", item,
			   sizeof(s->text) - 1);
		return -EINVAL;
	}
	memcpy(s->text, item, len);
	if (strncmp(item, "uprobe:", 7) == 0) {
		s->kind = PERFCAP_PROBE_UPROBE;
		return parse_uprobe(s, item + 7, end);
	}
	if (strncmp(item, "usdt:", 5) == 0) {
		s->kind = PERFCAP_PROBE_USDT;
		return parse_usdt(s, item + 5, end);
	}
	return bad(s, "unknown kind");
}

int probe_specs_parse(const char *list, struct probe_spec **out, size_t *n)
{
	struct probe_spec *specs = NULL;
	size_t count = 0;

	*out = NULL;
	*n = 0;
	for (const char *p = list; p && *p;) {
		size_t len = probe_spec_item_len(p);

		if (probe_spec_is_probe(p)) {
			if (count == PERFCAP_PROBES_MAX) {
				error_line("too many probes in -e: at most %d", PERFCAP_PROBES_MAX);
				free(specs);
				return -EINVAL;
			}
			if (!specs && !(specs = calloc(PERFCAP_PROBES_MAX, sizeof(*specs))))
				return -ENOMEM;
			if (probe_spec_parse(p, len, &specs[count])) {
				free(specs);
				return -EINVAL;
			}
			count++;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	*out = specs;
	*n = count;
	return 0;
}

void probe_spec_args_text(const struct probe_spec *s, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (s->kind != PERFCAP_PROBE_UPROBE && s->kind != PERFCAP_PROBE_ENTRY)
		return;
	for (int i = 0; i < s->nargs && used < len; i++) {
		if (s->kind == PERFCAP_PROBE_ENTRY) /* Go's register ABI */
			used += (size_t)snprintf(buf + used, len - used, "%sgoarg%u", i ? "," : "",
						 s->arg[i]);
		else if (s->arg[i] == PERFCAP_PROBE_ARG_RET)
			used += (size_t)snprintf(buf + used, len - used, "%sret", i ? "," : "");
		else
			used += (size_t)snprintf(buf + used, len - used, "%sarg%u", i ? "," : "",
						 s->arg[i]);
	}
}
