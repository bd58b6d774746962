/* gopclntab.c - reads the function table of a Go pclntab (see gopclntab.h
 * for the layouts). Written from the layout the Go sources document
 * (runtime/symtab.go pcHeader, functab and _func; debug/gosym).
 *
 * Every read goes through get_uint(), which checks the offset and width
 * against the table's length; the function count is capped by the
 * table's size and PC_GOPCLNTAB_MAX_FUNCS; entries must not go backwards;
 * each _func record must name the entry its table slot gives; the names
 * together may not exceed a bound of the table's size (a hostile table
 * pointing every function at one long string would otherwise make the
 * caller copy it millions of times). Integers are little-endian (the
 * targets perfcap records: x86-64, arm64).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"

#define MAGIC_12  0xfffffffbu
#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* The table as read: bounds and the layout's parameters. */
struct pcln {
	const uint8_t *data;
	size_t   len;
	uint32_t magic;
	unsigned ps;          /* pointer size: 4 or 8 */
	uint64_t nfunc;
	uint64_t text_start;  /* 1.18+ */
	uint64_t names;       /* where name offsets count from */
	uint64_t ftab;        /* the functab */
	uint64_t funcs;       /* where funcoff counts from */
	uint64_t pctab;       /* where pcsp offsets count from */
	unsigned slot;        /* bytes per functab field: ps, or 4 (1.18+) */
};

static void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* width bytes at off, little-endian; 0 and *ok = 0 when outside. */
static uint64_t get_uint(const struct pcln *t, uint64_t off, unsigned width, int *ok)
{
	uint64_t v = 0;

	if (off > t->len || t->len - off < width) {
		*ok = 0;
		return 0;
	}
	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)t->data[off + i] << (8 * i);
	return v;
}

static int known_magic(uint32_t magic)
{
	return magic == MAGIC_12 || magic == MAGIC_116 || magic == MAGIC_118 ||
	       magic == MAGIC_120;
}

int pc_gopclntab_header_ok(const uint8_t *data, size_t len)
{
	uint32_t magic;

	if (data == NULL || len < 16)
		return 0;
	magic = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
		(uint32_t)data[3] << 24;
	return known_magic(magic) && data[4] == 0 && data[5] == 0 &&
	       (data[6] == 1 || data[6] == 2 || data[6] == 4) &&
	       (data[7] == 4 || data[7] == 8);
}

static const char *version_of(uint32_t magic)
{
	switch (magic) {
	case MAGIC_12: return "1.2";
	case MAGIC_116: return "1.16";
	case MAGIC_118: return "1.18";
	default: return "1.20";
	}
}

/* The header: the layout's offsets, each checked to lie in the table. */
static int read_header(struct pcln *t, uint64_t text_fallback, char *why, size_t whylen)
{
	unsigned ps = t->ps;
	uint64_t pcln_off;
	int ok = 1;

	t->nfunc = get_uint(t, 8, ps, &ok);
	if (t->magic == MAGIC_12) {
		t->names = 0;
		t->pctab = 0;
		t->ftab = 8 + ps;
		t->funcs = 0;
		t->slot = ps;
	} else if (t->magic == MAGIC_116) {
		t->names = get_uint(t, 8 + 2 * ps, ps, &ok);
		t->pctab = get_uint(t, 8 + 5 * ps, ps, &ok);
		pcln_off = get_uint(t, 8 + 6 * ps, ps, &ok);
		t->ftab = t->funcs = pcln_off;
		t->slot = ps;
	} else {
		t->text_start = get_uint(t, 8 + 2 * ps, ps, &ok);
		t->names = get_uint(t, 8 + 3 * ps, ps, &ok);
		t->pctab = get_uint(t, 8 + 6 * ps, ps, &ok);
		pcln_off = get_uint(t, 8 + 7 * ps, ps, &ok);
		t->ftab = t->funcs = pcln_off;
		t->slot = 4;
		if (t->text_start == 0)
			t->text_start = text_fallback;
		if (t->text_start == 0) {
			set_why(why, whylen, "text start unknown (0, no relocation found)");
			return -EINVAL;
		}
	}
	if (!ok) {
		set_why(why, whylen, "header truncated (%zu bytes)", t->len);
		return -EINVAL;
	}
	if (t->names >= t->len || t->ftab >= t->len) {
		set_why(why, whylen, "table offsets outside the %zu-byte table", t->len);
		return -EINVAL;
	}
	if (t->nfunc == 0 || t->nfunc > PC_GOPCLNTAB_MAX_FUNCS) {
		set_why(why, whylen, "function count %llu out of range",
			(unsigned long long)t->nfunc);
		return -EINVAL;
	}
	/* nfunc pairs and the end entry must fit */
	if ((t->len - t->ftab) / (2 * t->slot) < t->nfunc ||
	    t->len - t->ftab - t->nfunc * 2 * t->slot < t->slot) {
		set_why(why, whylen, "function table (%llu entries) beyond the table's end",
			(unsigned long long)t->nfunc);
		return -EINVAL;
	}
	return 0;
}

/* 1.18+: entries are u32 offsets from the text start. */
static int entries_relative(const struct pcln *t)
{
	return t->magic == MAGIC_118 || t->magic == MAGIC_120;
}

/* The entry address of functab slot i (i == nfunc: the end of the text). */
static int slot_entry(const struct pcln *t, uint64_t i, uint64_t *entry)
{
	int ok = 1;
	uint64_t v = get_uint(t, t->ftab + i * 2 * t->slot, t->slot, &ok);

	if (!ok)
		return 0;
	if (entries_relative(t)) {
		if (v > UINT64_MAX - t->text_start)
			return 0;
		v += t->text_start;
	}
	*entry = v;
	return 1;
}

/* The name of the function whose _func record is at funcoff (relative to
 * t->funcs); its entry must be the one its slot gave. Returns 1 with
 * *name (NULL: no usable name), or 0 for an inconsistent record. */
static int func_name(const struct pcln *t, uint64_t funcoff, uint64_t entry,
		     const char **name)
{
	unsigned entry_width = t->slot;
	uint64_t rec, rec_entry, nameoff, pos;
	const char *s;
	int ok = 1;

	*name = NULL;
	if (funcoff > t->len - t->funcs)
		return 0;
	rec = t->funcs + funcoff;
	rec_entry = get_uint(t, rec, entry_width, &ok);
	nameoff = get_uint(t, rec + entry_width, 4, &ok);
	if (!ok)
		return 0;
	if (entries_relative(t))
		rec_entry += t->text_start;
	if (rec_entry != entry)
		return 0;
	if (nameoff & 0x80000000u)  /* int32: negative */
		return 1;
	if (nameoff >= t->len - t->names)
		return 1;
	pos = t->names + nameoff;
	s = (const char *)t->data + pos;
	if (s[0] == '\0' ||
	    memchr(s, '\0', t->len - pos < PC_GOPCLNTAB_MAX_NAME + 1 ? t->len - pos
				      : PC_GOPCLNTAB_MAX_NAME + 1) == NULL)
		return 1;
	*name = s;
	return 1;
}

/* Where the SP-delta table of the _func record at funcoff starts (the
 * field after entry, nameoff, args and deferreturn), 0 if outside. */
static uint64_t func_pcsp(const struct pcln *t, uint64_t funcoff)
{
	uint64_t rec = t->funcs + funcoff, v;
	int ok = 1;

	v = get_uint(t, rec + t->slot + 12, 4, &ok);
	if (!ok || v == 0 || t->pctab > t->len || v >= t->len - t->pctab)
		return 0;
	return t->pctab + v;
}

static int read_functions(const struct pcln *t, struct pc_gofunc *out, size_t *nout,
			  uint32_t *skipped, char *why, size_t whylen)
{
	uint64_t names_total = 0, names_cap = (uint64_t)t->len * 2 + (1u << 20);
	uint64_t entry, next;
	size_t n = 0;

	if (!slot_entry(t, 0, &entry) || entry == 0) {
		set_why(why, whylen, "first entry is 0 (filled by relocations?)");
		return -EINVAL;
	}
	for (uint64_t i = 0; i < t->nfunc; i++) {
		const char *name;
		int ok = 1;
		uint64_t funcoff = get_uint(t, t->ftab + i * 2 * t->slot + t->slot, t->slot, &ok);

		if (!ok || !slot_entry(t, i + 1, &next)) {
			set_why(why, whylen, "function %llu beyond the table", (unsigned long long)i);
			return -EINVAL;
		}
		if (next < entry) {
			set_why(why, whylen, "entries out of order at function %llu",
				(unsigned long long)i);
			return -EINVAL;
		}
		if (!func_name(t, funcoff, entry, &name)) {
			set_why(why, whylen, "function %llu: record does not match its entry",
				(unsigned long long)i);
			return -EINVAL;
		}
		if (name == NULL || next == entry) {
			(*skipped)++;
		} else {
			names_total += strlen(name) + 1;
			if (names_total > names_cap) {
				set_why(why, whylen, "names exceed %llu bytes",
					(unsigned long long)names_cap);
				return -EINVAL;
			}
			out[n].entry = entry;
			out[n].size = next - entry;
			out[n].name = name;
			out[n].pcsp = func_pcsp(t, funcoff);
			n++;
		}
		entry = next;
	}
	*nout = n;
	return 0;
}

int pc_gopclntab_parse(const uint8_t *data, size_t len, uint64_t text_start,
		       struct pc_gofunc **out, size_t *nout,
		       struct pc_gopclntab_info *info, char *why, size_t whylen)
{
	struct pcln t = { .data = data, .len = len };
	struct pc_gopclntab_info dummy;
	struct pc_gofunc *funcs;
	int err;

	*out = NULL;
	*nout = 0;
	if (info == NULL)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!pc_gopclntab_header_ok(data, len)) {
		set_why(why, whylen, "no known pclntab header");
		return -ENOTSUP;
	}
	t.magic = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
		  (uint32_t)data[3] << 24;
	t.ps = data[7];
	info->magic = t.magic;
	info->version = version_of(t.magic);
	info->ptr_size = (uint8_t)t.ps;
	info->quantum = data[6];
	err = read_header(&t, text_start, why, whylen);
	if (err)
		return err;
	info->text_start = t.text_start;
	info->nfunc = (uint32_t)t.nfunc;
	funcs = calloc(t.nfunc, sizeof(*funcs));
	if (funcs == NULL)
		return -ENOMEM;
	err = read_functions(&t, funcs, nout, &info->skipped, why, whylen);
	if (err) {
		free(funcs);
		*nout = 0;
		return err;
	}
	*out = funcs;
	return 0;
}

/* ---- SP deltas ------------------------------------------------------------ */

/* The runtime keeps these values in an int32 (runtime.call1073741824
 * really has a 1 GiB frame). */
#define SP_DELTA_MAX ((int64_t)INT32_MAX)

static int read_varint(const uint8_t *data, size_t len, uint64_t *pos, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*pos >= len)
			return -1;
		b = data[(*pos)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

int pc_gopclntab_sp_deltas(const uint8_t *data, size_t len, const struct pc_gofunc *f,
			   uint8_t quantum,
			   void (*run)(void *ctx, uint64_t start, uint64_t end, int32_t delta),
			   void *ctx)
{
	uint64_t pos = f->pcsp, pc = f->entry, end = f->entry + f->size;
	int64_t val = -1, delta;

	if (!pos || pos >= len || !quantum)
		return -EINVAL;
	for (int i = 0; i < 65536 && pc < end; i++) {
		uint32_t uv, pcdelta;
		uint64_t next;

		if (read_varint(data, len, &pos, &uv) < 0)
			return -EINVAL;
		if (uv == 0 && i > 0)
			break;                                   /* the table's end */
		if (read_varint(data, len, &pos, &pcdelta) < 0 || pcdelta == 0)
			return -EINVAL;
		/* in 64 bits: a hostile table must not overflow the running value */
		delta = (uv & 1) ? -(int64_t)(uv >> 1) - 1 : (int64_t)(uv >> 1);
		if (delta > SP_DELTA_MAX - val || delta < -SP_DELTA_MAX - val)
			return -EINVAL;
		val += delta;
		next = pc + (uint64_t)pcdelta * quantum;
		if (next > end || next < pc)
			next = end;
		run(ctx, pc, next, (int32_t)val);
		pc = next;
	}
	return 0;
}
