/* stage_image.c - builds an SQLite database image of one rowid table (see
 * stage_image.h), following the file format: a 100-byte header on page 1,
 * b-tree pages with an 8-byte (leaf) or 12-byte (interior) header, an
 * array of 2-byte cell offsets after it and the cells packed from the end
 * of the page; a table leaf cell is the record's length and the rowid as
 * varints, then the record: a header of serial types, then the values. The
 * rows fill leaves from page 3 on; finish makes page 2 the root (the only
 * leaf, or an interior page over every leaf) and page 1 the schema. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "stage_image.h"
#include "util/grow.h"

#define P STAGE_PAGE_SIZE
#define LEAF_HEADER     8
#define INTERIOR_HEADER 12
#define DB_HEADER       100
#define MAX_COLS        64
#define SERIAL_NULL     0
#define SERIAL_TEXT(n)  (13 + 2 * (uint64_t)(n))

static unsigned varint_len(uint64_t v)
{
	unsigned n = 1;

	if (v > 0x00ffffffffffffffull)
		return 9;
	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

/* SQLite's varint: big-endian groups of 7 bits, the high bit set on every
 * byte but the last; a ninth byte carries 8 bits. */
static unsigned put_varint(unsigned char *p, uint64_t v)
{
	unsigned n = varint_len(v);

	if (n == 9) {
		p[8] = (unsigned char)v;
		v >>= 8;
		for (int i = 7; i >= 0; i--, v >>= 7)
			p[i] = (unsigned char)(0x80 | (v & 0x7f));
		return 9;
	}
	for (int i = (int)n - 1; i >= 0; i--, v >>= 7)
		p[i] = (unsigned char)((i == (int)n - 1 ? 0 : 0x80) | (v & 0x7f));
	return n;
}

static void put_be(unsigned char *p, uint64_t v, unsigned len)
{
	for (int i = (int)len - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* The smallest serial type that holds v, and its length in the body:
 * the bytes of v's two's complement without its redundant sign bytes. */
static inline unsigned int_serial(int64_t v, unsigned *len)
{
	static const unsigned char len_of[9] = { 1, 1, 2, 3, 4, 6, 6, 8, 8 };
	uint64_t u = (uint64_t)(v ^ (v >> 63));   /* v, or ~v when negative */
	unsigned bytes = u ? (unsigned)(64 - __builtin_clzll(u) + 8) / 8 : 1;

	if ((uint64_t)v <= 1) {
		*len = 0;
		return 8 + (unsigned)v;    /* schema format 4 constants */
	}
	*len = len_of[bytes];
	return *len == 6 ? 5 : *len == 8 ? 6 : *len;
}

/* The low len bytes of v, big-endian: stores of constant sizes (a copy of
 * a variable length is a call). */
static inline void put_int(unsigned char *p, int64_t v, unsigned len)
{
	uint64_t be = __builtin_bswap64((uint64_t)v);
	const unsigned char *b = (const unsigned char *)&be;

	switch (len) {
	case 1: p[0] = (unsigned char)v; break;
	case 2: memcpy(p, b + 6, 2); break;
	case 3: memcpy(p, b + 5, 3); break;
	case 4: memcpy(p, b + 4, 4); break;
	case 6: memcpy(p, b + 2, 6); break;
	case 8: memcpy(p, b, 8); break;
	default: break;
	}
}

/* A record's layout: each value's serial type and body length, and the
 * sizes of its header and of the whole record. */
struct record_layout {
	uint64_t serial[MAX_COLS];
	unsigned len[MAX_COLS];
	size_t head, total;
	int small_serials;           /* every serial type fits one byte */
};

/* 0; 1 when the row is refused (a refused kind, a record longer than
 * STAGE_MAX_RECORD, too many columns). */
static int lay_out(struct record_layout *l, const struct stage_row *r)
{
	size_t head = (size_t)r->lead, body = 0;

	if (r->lead + r->ncols > MAX_COLS)
		return 1;
	l->small_serials = 1;
	for (int i = 0; i < r->ncols; i++) {
		uint8_t kind = r->kinds[i];

		if (kind == r->refuse[i])
			return 1;
		if (kind == STAGE_INT) {
			l->serial[i] = int_serial(r->values[i], &l->len[i]);
		} else if (kind == STAGE_TEXT) {
			size_t n = strnlen((const char *)(intptr_t)r->values[i], STAGE_MAX_RECORD);
			l->serial[i] = SERIAL_TEXT(n);
			l->len[i] = (unsigned)n;
		} else {
			l->serial[i] = SERIAL_NULL;
			l->len[i] = 0;
		}
		if (l->serial[i] > 0x7f) {
			l->small_serials = 0;
			head += varint_len(l->serial[i]);
		} else {
			head++;
		}
		body += l->len[i];
	}
	l->head = head + 1;
	while (head + varint_len(l->head) != l->head)
		l->head = head + varint_len(l->head);
	l->total = l->head + body;
	return l->total > STAGE_MAX_RECORD;
}

/* Writes value i of r (laid out in l) at out. */
static inline void put_value(unsigned char *out, const struct record_layout *l,
			     const struct stage_row *r, int i)
{
	if (r->kinds[i] == STAGE_INT)
		put_int(out, r->values[i], l->len[i]);
	else if (r->kinds[i] == STAGE_TEXT)
		memcpy(out, (const char *)(intptr_t)r->values[i], l->len[i]);
}

/* Writes the record laid out in l at out (l->total bytes): the header's
 * size, the serial types, the values; with one-byte serial types (nearly
 * every row), each column's type and value in one pass. */
static void write_record(unsigned char *out, const struct record_layout *l,
			 const struct stage_row *r)
{
	size_t pos = put_varint(out, l->head), body = l->head;

	memset(out + pos, SERIAL_NULL, (size_t)r->lead);
	pos += (size_t)r->lead;
	if (l->small_serials) {
		for (int i = 0; i < r->ncols; i++) {
			out[pos + (size_t)i] = (unsigned char)l->serial[i];
			put_value(out + body, l, r, i);
			body += l->len[i];
		}
		return;
	}
	for (int i = 0; i < r->ncols; i++)
		pos += put_varint(out + pos, l->serial[i]);
	for (int i = 0; i < r->ncols; i++) {
		put_value(out + body, l, r, i);
		body += l->len[i];
	}
}

static unsigned char *page(const struct stage_image *img, uint32_t n)
{
	return img->buf + (size_t)(n - 1) * P;
}

void stage_image_init(struct stage_image *img)
{
	memset(img, 0, sizeof(*img));
	img->npages = 2;
}

void stage_image_reset(struct stage_image *img)
{
	img->npages = 2;
	img->ncells = 0;
	img->rows = 0;
}

void stage_image_free(struct stage_image *img)
{
	sqlite3_free(img->buf);
	free(img->leaf_max);
	stage_image_init(img);
}

/* Room for page n in the buffer. 0 or -1. */
static int reserve_pages(struct stage_image *img, uint32_t n)
{
	size_t need = (size_t)n * P, cap = img->cap ? img->cap : 4 * (size_t)P;
	unsigned char *grown;

	if (need <= img->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	grown = sqlite3_realloc64(img->buf, cap);
	if (!grown)
		return -1;
	img->buf = grown;
	img->cap = cap;
	return 0;
}

/* Starts an empty leaf after the last page. 0 or -1. */
static int new_leaf(struct stage_image *img)
{
	size_t leaves = img->npages - 1;   /* after this one */

	if (reserve_pages(img, img->npages + 1) < 0)
		return -1;
	/* room for the largest rowid of every leaf before the new one */
	if (array_grow((void **)&img->leaf_max, &img->leaf_cap, leaves, sizeof(*img->leaf_max), 64))
		return -1;
	img->npages++;
	memset(page(img, img->npages), 0, LEAF_HEADER);
	page(img, img->npages)[0] = 0x0d;
	img->ncells = 0;
	img->content = P;
	return 0;
}

/* Writes the page header fields every b-tree page has. */
static void put_btree_header(unsigned char *h, unsigned type, uint32_t ncells,
			     uint32_t content)
{
	h[0] = (unsigned char)type;
	put_be(h + 1, 0, 2);                       /* no freeblocks */
	put_be(h + 3, ncells, 2);
	put_be(h + 5, content == P ? 0 : content, 2);
	h[7] = 0;                                  /* no fragments */
}

/* Reserves len bytes for a cell at the end of the content area of page pg,
 * whose cell offset array starts at byte ptrs0, and records its offset:
 * where to write the cell, NULL if the page is full. */
static unsigned char *place_cell(unsigned char *pg, uint32_t ptrs0, uint32_t *ncells,
				 uint32_t *content, size_t len)
{
	uint32_t ptrs = ptrs0 + 2 * (*ncells + 1);

	if (ptrs > *content || *content - ptrs < len)
		return NULL;
	*content -= (uint32_t)len;
	put_be(pg + ptrs0 + 2 * *ncells, *content, 2);
	(*ncells)++;
	return pg + *content;
}

/* The common row in one pass: a header shorter than 128 bytes of one-byte
 * serial types (no text longer than SMALL_TEXT), so the body starts at a
 * known offset and each value follows the last. Writes the record at out
 * (room for SMALL_RECORD_ROOM bytes) and returns its length; 0 when the
 * row needs lay_out and write_record (a long text, too many columns), -1
 * when it is refused (a refused kind). An integer is stored as 8 bytes of
 * which its first len count: the next value overwrites the rest. The same
 * bytes as the two passes, in about two thirds of their time. */
#define SMALL_TEXT 57                 /* 13 + 2 * 57 = 127 */
#define SMALL_RECORD_ROOM (128 + MAX_COLS * (SMALL_TEXT + 8))

static long encode_small(unsigned char *out, const struct stage_row *r)
{
	size_t head = (size_t)r->lead + (size_t)r->ncols + 1, body = head;
	unsigned char *serial = out + 1 + r->lead;

	if (head > 0x7f || r->lead + r->ncols > MAX_COLS)
		return 0;
	out[0] = (unsigned char)head;
	memset(out + 1, SERIAL_NULL, (size_t)r->lead);
	for (int i = 0; i < r->ncols; i++) {
		uint8_t kind = r->kinds[i];
		unsigned len;

		if (kind == r->refuse[i])
			return -1;
		if (kind == STAGE_INT) {
			int64_t v = r->values[i];
			uint64_t be;

			serial[i] = (unsigned char)int_serial(v, &len);
			be = __builtin_bswap64(len ? (uint64_t)v << (64 - 8 * len) : 0);
			memcpy(out + body, &be, 8);
		} else if (kind == STAGE_TEXT) {
			const char *t = (const char *)(intptr_t)r->values[i];

			len = (unsigned)strnlen(t, SMALL_TEXT + 1);
			if (len > SMALL_TEXT)
				return 0;
			serial[i] = (unsigned char)SERIAL_TEXT(len);
			memcpy(out + body, t, len);
		} else {
			serial[i] = SERIAL_NULL;
			len = 0;
		}
		body += len;
	}
	return (long)body;
}

int stage_image_add(struct stage_image *img, int64_t rowid, const struct stage_row *row)
{
	unsigned char small[SMALL_RECORD_ROOM];
	long small_len = encode_small(small, row);
	struct record_layout l;
	size_t cell;
	unsigned char *at;

	if (small_len < 0)
		return 1;
	if (small_len)
		l.total = (size_t)small_len;
	else if (lay_out(&l, row) != 0)
		return 1;
	if (l.total > STAGE_MAX_RECORD)
		return 1;
	cell = varint_len(l.total) + varint_len((uint64_t)rowid) + l.total;
	at = img->npages > 2 ? place_cell(page(img, img->npages), LEAF_HEADER, &img->ncells,
					  &img->content, cell) : NULL;
	if (!at) {
		if (new_leaf(img) < 0)
			return -1;
		at = place_cell(page(img, img->npages), LEAF_HEADER, &img->ncells,
				&img->content, cell);
	}
	at += put_varint(at, l.total);
	at += put_varint(at, (uint64_t)rowid);
	if (small_len)
		memcpy(at, small, l.total);
	else
		write_record(at, &l, row);
	put_be(page(img, img->npages) + 3, img->ncells, 2);
	put_be(page(img, img->npages) + 5, img->content == P ? 0 : img->content, 2);
	img->leaf_max[img->npages - 3] = rowid;
	img->rows++;
	return 0;
}

/* Page 2: the single leaf moved there, an empty leaf, or an interior page
 * whose cells point at every leaf but the last (the right-most pointer). */
static int write_root(struct stage_image *img)
{
	uint32_t leaves = img->npages - 2, ncells = 0, content = P;
	unsigned char *root = page(img, 2), *at;

	if (leaves <= 1) {
		if (leaves == 1)
			memcpy(root, page(img, 3), P);
		else
			put_btree_header(root, 0x0d, 0, P);
		img->npages = 2;
		return 0;
	}
	for (uint32_t i = 0; i + 1 < leaves; i++) {
		uint64_t key = (uint64_t)img->leaf_max[i];
		at = place_cell(root, INTERIOR_HEADER, &ncells, &content, 4 + varint_len(key));
		if (!at)
			return -1;
		put_be(at, 3 + i, 4);
		put_varint(at + 4, key);
	}
	put_btree_header(root, 0x05, ncells, content);
	put_be(root + 8, 3 + leaves - 1, 4);
	return 0;
}

static void write_db_header(unsigned char *h, uint32_t npages)
{
	memset(h, 0, DB_HEADER);
	memcpy(h, "SQLite format 3", 16);
	put_be(h + 16, 1, 2);                      /* 1: 65536-byte pages */
	h[18] = h[19] = 1;                         /* rollback journal formats */
	h[21] = 64;
	h[22] = 32;
	h[23] = 32;
	put_be(h + 24, 1, 4);                      /* change counter */
	put_be(h + 28, npages, 4);
	put_be(h + 40, 1, 4);                      /* schema cookie */
	put_be(h + 44, 4, 4);                      /* schema format 4 */
	put_be(h + 56, 1, 4);                      /* UTF-8 */
	put_be(h + 92, 1, 4);                      /* version-valid-for = counter */
	put_be(h + 96, SQLITE_VERSION_NUMBER, 4);
}

/* Page 1: the header and the schema table's one row. */
static int write_schema_page(struct stage_image *img, const char *name, const char *sql)
{
	const uint8_t kinds[5] = { STAGE_TEXT, STAGE_TEXT, STAGE_TEXT, STAGE_INT, STAGE_TEXT };
	const uint8_t refuse[5] = { STAGE_NONE, STAGE_NONE, STAGE_NONE, STAGE_NONE, STAGE_NONE };
	const int64_t values[5] = { (int64_t)(intptr_t)"table", (int64_t)(intptr_t)name,
				    (int64_t)(intptr_t)name, 2, (int64_t)(intptr_t)sql };
	const struct stage_row row = { 0, 5, kinds, values, refuse };
	unsigned char *pg = page(img, 1), *at;
	uint32_t ncells = 0, content = P;
	struct record_layout l;

	if (lay_out(&l, &row) != 0)
		return -1;
	write_db_header(pg, img->npages);
	at = place_cell(pg, DB_HEADER + LEAF_HEADER, &ncells, &content,
			varint_len(l.total) + 1 + l.total);
	if (!at)
		return -1;
	at += put_varint(at, l.total);
	at += put_varint(at, 1);
	write_record(at, &l, &row);
	put_btree_header(pg + DB_HEADER, 0x0d, ncells, content);
	return 0;
}

int stage_image_finish(struct stage_image *img, const char *name, const char *sql,
		       size_t *size)
{
	if (reserve_pages(img, img->npages) < 0 || write_root(img) < 0 ||
	    write_schema_page(img, name, sql) < 0)
		return -1;
	*size = (size_t)img->npages * P;
	return 0;
}

/* One 512-byte page: the header (as write_db_header writes it, but for
 * the page size) and an empty schema table; constant, so that any thread
 * may hand it to SQLite. */
static const unsigned char empty_db[512] = {
	'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', 0,
	[16] = 0x02, [17] = 0x00, [18] = 1, [19] = 1, [21] = 64, [22] = 32, [23] = 32,
	[27] = 1, [31] = 1, [43] = 1, [47] = 4, [59] = 1, [95] = 1,
	[96] = (SQLITE_VERSION_NUMBER >> 24) & 0xff, [97] = (SQLITE_VERSION_NUMBER >> 16) & 0xff,
	[98] = (SQLITE_VERSION_NUMBER >> 8) & 0xff, [99] = SQLITE_VERSION_NUMBER & 0xff,
	[DB_HEADER] = 0x0d, [DB_HEADER + 5] = 0x02, [DB_HEADER + 6] = 0x00,
};

const unsigned char *stage_image_empty(size_t *size)
{
	*size = sizeof(empty_db);
	return empty_db;
}
