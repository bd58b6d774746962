/* writer.c - appends chunks to a capture file.
 *
 * Each chunk goes out with a single write() of header + payload, so a crash
 * or kill -9 leaves at most one partial chunk at the tail, which readers
 * report and skip. If a write fails part way (ENOSPC), the file is cut back
 * to its last complete chunk so it stays clean.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "perfcap_format.h"
#include "safe_file.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the capture format is little-endian; this host is not");
_Static_assert(sizeof(struct pc_chunk_header) == PC_CHUNK_HEADER_SIZE,
	       "chunk header layout");
_Static_assert(sizeof(struct pc_file_header) == PC_FILE_HEADER_SIZE,
	       "file header layout");

struct pc_writer {
	int        fd;
	uint64_t   offset;     /* bytes of complete chunks (and header) */
	uint64_t   seq;
	ZSTD_CCtx *cctx;
	struct pc_buf out;     /* header + compressed payload of one chunk */
};

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pc_writer_open(struct pc_writer **out, const char *path, int flags)
{
	struct pc_file_header fh = { .magic = PC_FILE_MAGIC };
	struct pc_writer *w;
	int err;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	/* never through a symlink planted at path; always a new 0600 file */
	w->fd = pc_create_output(path, flags & PC_WRITE_FORCE);
	if (w->fd < 0) {
		err = w->fd;
		free(w);
		return err;
	}
	w->cctx = ZSTD_createCCtx();
	fh.major = PC_FORMAT_MAJOR;
	fh.minor = PC_FORMAT_MINOR;
	fh.header_size = PC_FILE_HEADER_SIZE;
	fh.created_ns = realtime_ns();
	err = w->cctx ? write_all(w->fd, &fh, sizeof(fh)) : -ENOMEM;
	if (err) {
		pc_writer_abort(w);
		return err;
	}
	w->offset = sizeof(fh);
	*out = w;
	return 0;
}

/* Makes w->out hold at least n bytes; its contents are overwritten. */
static int out_capacity(struct pc_writer *w, size_t n)
{
	uint8_t *p;

	if (w->out.cap >= n)
		return 0;
	p = realloc(w->out.data, n);
	if (!p)
		return -ENOMEM;
	w->out.data = p;
	w->out.cap = n;
	return 0;
}

/* Compresses raw into w->out after room for the header; stores the payload
 * as is when zstd does not make it smaller. */
static int build_payload(struct pc_writer *w, const void *raw, size_t raw_size,
			 uint32_t *flags)
{
	size_t bound = ZSTD_compressBound(raw_size);
	size_t n;

	if (out_capacity(w, PC_CHUNK_HEADER_SIZE + (bound > raw_size ? bound : raw_size)))
		return -ENOMEM;
	n = ZSTD_compressCCtx(w->cctx, w->out.data + PC_CHUNK_HEADER_SIZE, bound,
			      raw, raw_size, PC_ZSTD_LEVEL);
	if (!ZSTD_isError(n) && n < raw_size) {
		*flags = PC_CHUNK_F_ZSTD;
		w->out.len = PC_CHUNK_HEADER_SIZE + n;
		return 0;
	}
	*flags = 0;
	if (raw_size)
		memcpy(w->out.data + PC_CHUNK_HEADER_SIZE, raw, raw_size);
	w->out.len = PC_CHUNK_HEADER_SIZE + raw_size;
	return 0;
}

int pc_writer_add_chunk(struct pc_writer *w, uint16_t type, uint16_t version,
			const void *raw, size_t raw_size, uint64_t count,
			uint64_t t_start, uint64_t t_end)
{
	struct pc_chunk_header h = { 0 };
	uint32_t flags;
	int err;

	if (raw_size > PC_MAX_CHUNK_RAW)
		return -EFBIG;
	err = build_payload(w, raw, raw_size, &flags);
	if (err)
		return err;
	h.magic = PC_CHUNK_MAGIC;
	h.type = type;
	h.version = version;
	h.header_size = PC_CHUNK_HEADER_SIZE;
	h.flags = flags;
	h.seq = w->seq;
	h.payload_size = w->out.len - PC_CHUNK_HEADER_SIZE;
	h.raw_size = raw_size;
	h.count = count;
	h.t_start = t_start;
	h.t_end = t_end;
	h.crc32c = pc_crc32c(pc_crc32c(0, &h, sizeof(h)),
			     w->out.data + PC_CHUNK_HEADER_SIZE, h.payload_size);
	memcpy(w->out.data, &h, sizeof(h));
	err = write_all(w->fd, w->out.data, w->out.len);
	if (err) {
		/* leave no partial chunk behind; best effort */
		if (ftruncate(w->fd, (off_t)w->offset) == 0)
			lseek(w->fd, (off_t)w->offset, SEEK_SET);
		return err;
	}
	w->offset += w->out.len;
	w->seq++;
	return 0;
}

uint64_t pc_writer_bytes(const struct pc_writer *w)
{
	return w->offset;
}

uint64_t pc_writer_chunks(const struct pc_writer *w)
{
	return w->seq;
}

int pc_writer_finish(struct pc_writer *w, const struct pc_buf *end_kv)
{
	static const struct pc_buf empty;
	const struct pc_buf *kv = end_kv ? end_kv : &empty;
	uint64_t pairs = 0;
	int err;

	for (size_t i = 0; i < kv->len; i++)
		pairs += kv->data[i] == 0;
	err = pc_writer_add_chunk(w, PC_CHUNK_END, PC_END_VERSION, kv->data,
				  kv->len, pairs / 2, 0, 0);
	if (!err && fsync(w->fd) < 0 && errno != EINVAL)
		err = -errno;
	if (close(w->fd) < 0 && !err)
		err = -errno;
	w->fd = -1;
	pc_writer_abort(w);
	return err;
}

void pc_writer_abort(struct pc_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	ZSTD_freeCCtx(w->cctx);
	pc_buf_free(&w->out);
	free(w);
}
