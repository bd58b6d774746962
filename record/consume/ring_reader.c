/* ring_reader.c - one consumer for all the sharded ring buffers.
 *
 * Records below a ring's wakeup threshold do not wake epoll, so each poll
 * ends with ring_buffer__consume(), which reads every ring in turn. Records
 * of different rings are therefore handled ring by ring, not in time order
 * (the capture format says so; readers that need order sort by ts).
 */
#include <errno.h>
#include <string.h>

#include "ring_reader.h"
#include "util/util.h"

int ring_reader_open(struct ring_reader *r, const struct shared_maps *m,
		     ring_buffer_sample_fn fn, void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->rb = ring_buffer__new(m->ring_fds[0], fn, ctx, NULL);
	if (!r->rb) {
		int err = -errno;

		error_line("cannot set up the ring buffer reader: %s", strerror(-err));
		return err;
	}
	for (uint32_t i = 1; i < m->nr_rings; i++) {
		int err = ring_buffer__add(r->rb, m->ring_fds[i], fn, ctx);

		if (err) {
			error_line("cannot add ring %u to the reader: %s", i, strerror(-err));
			return err;
		}
	}
	return 0;
}

int ring_reader_poll(struct ring_reader *r, int timeout_ms)
{
	int err = ring_buffer__poll(r->rb, timeout_ms);

	if (err < 0 && err != -EINTR)
		return err;
	err = ring_buffer__consume(r->rb);
	return err < 0 && err != -EINTR ? err : 0;
}

int ring_reader_drain(struct ring_reader *r)
{
	int err = r->rb ? ring_buffer__consume(r->rb) : 0;

	return err < 0 ? err : 0;
}

void ring_reader_close(struct ring_reader *r)
{
	ring_buffer__free(r->rb);
	r->rb = NULL;
}
