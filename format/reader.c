/* reader.c - reads the chunks of a capture, trusting nothing in the file.
 *
 * Every size is bounded before it is used. A chunk whose checksum or
 * compressed payload is bad is skipped and counted. When a chunk header is
 * unreadable the reader scans forward for the next chunk whose header and
 * checksum are valid, so damage in the middle of a file loses only the
 * damaged chunks. A file cut at any byte yields every complete chunk.
 * pc_reader_next_of steps over the chunks of types it was not asked for
 * by their headers alone, neither checking nor decompressing them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "perfcap_format.h"
#include "safe_file.h"

#define MAX_HEADER_SIZE 4096u
#define SCAN_WINDOW     (1u << 20)

struct pc_reader {
	int        fd;
	uint64_t   offset;        /* next chunk header */
	uint64_t   first_chunk;   /* offset of chunk 0 */
	ZSTD_DCtx *dctx;
	struct pc_buf disk;       /* header + payload as on disk */
	struct pc_buf raw;        /* decompressed payload */
	struct pc_buf scan;       /* resync's window, kept for the next resync */
	struct pc_reader_status st;
};

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Makes b exactly n bytes long (contents undefined). */
static int buf_size(struct pc_buf *b, size_t n)
{
	if (n > b->cap) {
		uint8_t *p = realloc(b->data, n);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = n;
	}
	b->len = n;
	return 0;
}

static int check_file_header(struct pc_reader *r, char *errbuf, size_t errlen)
{
	struct pc_file_header fh;

	if (r->st.file_size < PC_FILE_HEADER_SIZE ||
	    read_at(r->fd, &fh, sizeof(fh), 0) ||
	    memcmp(fh.magic, PC_FILE_MAGIC, sizeof(fh.magic))) {
		snprintf(errbuf, errlen, "not a perfcap capture (bad magic)");
		return -EINVAL;
	}
	r->st.major = fh.major;
	r->st.minor = fh.minor;
	if (fh.major > PC_FORMAT_MAJOR) {
		snprintf(errbuf, errlen,
			 "written by a newer perfcap (format %u.%u; this one reads %u.x)",
			 fh.major, fh.minor, PC_FORMAT_MAJOR);
		return -EPROTONOSUPPORT;
	}
	if (fh.header_size < PC_FILE_HEADER_SIZE || fh.header_size > MAX_HEADER_SIZE ||
	    fh.header_size > r->st.file_size) {
		snprintf(errbuf, errlen, "damaged file header (size %u)", fh.header_size);
		return -EINVAL;
	}
	r->first_chunk = r->offset = fh.header_size;
	return 0;
}

int pc_reader_open(struct pc_reader **out, const char *path,
		   char *errbuf, size_t errlen)
{
	struct pc_reader *r;
	struct stat sb;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = pc_open_regular(path, 0); /* a FIFO must not block */
	if (r->fd < 0 || fstat(r->fd, &sb) < 0) {
		err = r->fd < 0 ? r->fd : -errno;
		snprintf(errbuf, errlen, "%s",
			 err == -EINVAL ? "not a regular file" : strerror(-err));
		pc_reader_close(r);
		return err;
	}
	r->st.file_size = (uint64_t)sb.st_size;
	r->dctx = ZSTD_createDCtx();
	err = r->dctx ? check_file_header(r, errbuf, errlen) : -ENOMEM;
	if (err) {
		pc_reader_close(r);
		return err;
	}
	*out = r;
	return 0;
}

enum parse_result { CHUNK_OK, CHUNK_CUT, CHUNK_GARBAGE, CHUNK_BAD_CRC };

/* Reads and validates the chunk header at off: CHUNK_OK when its sizes
 * are sane and the chunk fits in the file. */
static enum parse_result load_header(struct pc_reader *r, uint64_t off,
				     struct pc_chunk_header *h)
{
	uint64_t left = r->st.file_size - off;

	if (left < PC_CHUNK_HEADER_SIZE)
		return CHUNK_CUT;
	if (read_at(r->fd, h, sizeof(*h), off))
		return CHUNK_CUT;
	if (h->magic != PC_CHUNK_MAGIC || h->header_size < PC_CHUNK_HEADER_SIZE ||
	    h->header_size > MAX_HEADER_SIZE || h->payload_size > PC_MAX_CHUNK_PAYLOAD ||
	    h->raw_size > PC_MAX_CHUNK_RAW)
		return CHUNK_GARBAGE;
	if (h->header_size + h->payload_size > left)
		return CHUNK_CUT;
	return CHUNK_OK;
}

/* Reads and validates the chunk at off into r->disk. */
static enum parse_result load_chunk(struct pc_reader *r, uint64_t off,
				    struct pc_chunk_header *h)
{
	enum parse_result head = load_header(r, off, h);
	uint32_t crc;

	if (head != CHUNK_OK)
		return head;
	if (buf_size(&r->disk, h->header_size + h->payload_size) ||
	    read_at(r->fd, r->disk.data, r->disk.len, off))
		return CHUNK_CUT;
	crc = h->crc32c;
	memset(r->disk.data + offsetof(struct pc_chunk_header, crc32c), 0, sizeof(crc));
	if (pc_crc32c(0, r->disk.data, r->disk.len) != crc)
		return CHUNK_BAD_CRC;
	return CHUNK_OK;
}

/* Puts the decompressed payload of r->disk into c. Returns 0 or -1. */
static int decode_payload(struct pc_reader *r, const struct pc_chunk_header *h,
			  struct pc_chunk *c)
{
	const uint8_t *payload = r->disk.data + h->header_size;
	size_t n;

	if (h->flags & ~PC_CHUNK_F_ZSTD)
		return -1; /* an encoding this reader does not know */
	if (!(h->flags & PC_CHUNK_F_ZSTD)) {
		if (h->payload_size != h->raw_size)
			return -1;
		c->data = payload;
		c->size = h->raw_size;
		return 0;
	}
	if (h->payload_size == 0)
		return -1; /* a zstd frame is never empty */
	if (buf_size(&r->raw, h->raw_size))
		return -1;
	n = ZSTD_decompressDCtx(r->dctx, r->raw.data, h->raw_size, payload,
				h->payload_size);
	if (ZSTD_isError(n) || n != h->raw_size)
		return -1;
	c->data = h->raw_size ? r->raw.data : (const uint8_t *)""; /* never NULL */
	c->size = h->raw_size;
	return 0;
}

/* After garbage at r->offset: finds the next offset holding a valid chunk
 * (magic, sane sizes, matching checksum), or the end of the file. The scan
 * window lives in the reader and is sized to what is left of the file (at
 * most SCAN_WINDOW), so a file with many damaged spots costs no allocation
 * per resync. */
static uint64_t resync(struct pc_reader *r)
{
	static const uint32_t magic = PC_CHUNK_MAGIC;
	uint64_t off = r->offset + 1;
	struct pc_chunk_header h;

	while (off + PC_CHUNK_HEADER_SIZE <= r->st.file_size) {
		size_t n = r->st.file_size - off < SCAN_WINDOW ?
			   (size_t)(r->st.file_size - off) : SCAN_WINDOW;
		if (buf_size(&r->scan, n) || read_at(r->fd, r->scan.data, n, off))
			break;
		for (size_t i = 0; i + sizeof(magic) <= n; i++) {
			if (memcmp(r->scan.data + i, &magic, sizeof(magic)))
				continue;
			if (load_chunk(r, off + i, &h) == CHUNK_OK)
				return off + i;
		}
		off += n - sizeof(magic) + 1;
	}
	return r->st.file_size;
}

static void note_stop(struct pc_reader *r, int *flag)
{
	if (!r->st.truncated && !r->st.garbage)
		r->st.stop_offset = r->offset;
	*flag = 1;
}

/* Does the caller of pc_reader_next_of want chunks of this type? */
static int wanted(uint16_t type, uint32_t types)
{
	return type < 32 && (types & (UINT32_C(1) << type));
}

/* The next chunk (types: all, or those of pc_reader_next_of). */
static int next_chunk(struct pc_reader *r, struct pc_chunk *c, int all, uint32_t types)
{
	struct pc_chunk_header h;

	while (r->offset < r->st.file_size) {
		/* a chunk not wanted: its header is enough to step over it, to
		 * the offset a full read would go to (intact or not) */
		if (!all && load_header(r, r->offset, &h) == CHUNK_OK && !wanted(h.type, types)) {
			r->offset += h.header_size + h.payload_size;
			continue;
		}
		switch (load_chunk(r, r->offset, &h)) {
		case CHUNK_CUT: {
			/* a cut tail, or a damaged size field with chunks after it */
			uint64_t next = resync(r);
			note_stop(r, next < r->st.file_size ? &r->st.garbage
							    : &r->st.truncated);
			r->offset = next;
			continue;
		}
		case CHUNK_GARBAGE:
			note_stop(r, &r->st.garbage);
			r->offset = resync(r);
			continue;
		case CHUNK_BAD_CRC:
			r->st.chunks_bad_crc++;
			r->offset += h.header_size + h.payload_size;
			continue;
		case CHUNK_OK:
			break;
		}
		r->offset += h.header_size + h.payload_size;
		memset(c, 0, sizeof(*c));
		c->hdr = h;
		c->offset = r->offset - h.header_size - h.payload_size;
		if (decode_payload(r, &h, c)) {
			r->st.chunks_bad_zstd++;
			continue;
		}
		r->st.chunks_ok++;
		if (h.type == PC_CHUNK_END)
			r->st.end_seen = 1;
		else if (h.type < PC_CHUNK_META || h.type > PC_CHUNK_END)
			r->st.chunks_unknown++;
		return 1;
	}
	return 0;
}

int pc_reader_next(struct pc_reader *r, struct pc_chunk *c)
{
	return next_chunk(r, c, 1, 0);
}

int pc_reader_next_of(struct pc_reader *r, struct pc_chunk *c, uint32_t types)
{
	return next_chunk(r, c, 0, types);
}

int pc_reader_rewind(struct pc_reader *r)
{
	uint64_t size = r->st.file_size;
	uint16_t major = r->st.major, minor = r->st.minor;

	memset(&r->st, 0, sizeof(r->st));
	r->st.file_size = size;
	r->st.major = major;
	r->st.minor = minor;
	r->offset = r->first_chunk;
	return 0;
}

const struct pc_reader_status *pc_reader_status(const struct pc_reader *r)
{
	return &r->st;
}

void pc_reader_close(struct pc_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ZSTD_freeDCtx(r->dctx);
	pc_buf_free(&r->disk);
	pc_buf_free(&r->raw);
	pc_buf_free(&r->scan);
	free(r);
}

const char *pc_reader_damage(const struct pc_reader *r, char *buf, size_t len)
{
	const struct pc_reader_status *st = &r->st;
	int n = 0;

	if (!st->truncated && !st->garbage && !st->chunks_bad_crc &&
	    !st->chunks_bad_zstd && st->end_seen)
		return NULL;
	buf[0] = 0;
	if (st->truncated)
		n += snprintf(buf + n, len - (size_t)n,
			      "file cut at byte %" PRIu64 " of %" PRIu64 " (incomplete last chunk); ",
			      st->stop_offset, st->file_size);
	if (st->garbage && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "unreadable data from byte %" PRIu64 " (skipped to the next valid chunk); ",
			      st->stop_offset);
	if ((st->chunks_bad_crc || st->chunks_bad_zstd) && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "%" PRIu64 " chunk(s) failed checksum, %" PRIu64 " failed to decompress (skipped); ",
			      st->chunks_bad_crc, st->chunks_bad_zstd);
	if (!st->end_seen && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "no end marker (recording did not finish cleanly); ");
	if (n >= 2 && (size_t)n <= len)
		buf[n - 2] = 0;
	return buf;
}
