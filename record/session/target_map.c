/* target_map.c - the processes being followed: the shared `targets` map and
 * the delayed removal of exited processes from it. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "target_map.h"
#include "util/util.h"

#define RETIRE_DELAY_NS (1000ull * 1000 * 1000)

void targets_init(struct targets *t, int map_fd, uint64_t *bits, uint32_t words)
{
	memset(t, 0, sizeof(*t));
	t->map_fd = map_fd;
	t->bits = bits;
	t->words = words;
}

/* pid's bit on or off; atomic: proc.bpf.c sets bits of the same words at
 * forks. A pid beyond the bitmap is in the hash only. */
static void set_bit(struct targets *t, uint32_t pid, bool on)
{
	uint64_t mask = 1ull << (pid % 64);

	if (!t->bits || pid / 64 >= t->words)
		return;
	if (on)
		__atomic_fetch_or(&t->bits[pid / 64], mask, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_and(&t->bits[pid / 64], ~mask, __ATOMIC_SEQ_CST);
}

int targets_add(struct targets *t, uint32_t pid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(t->map_fd, &pid, &one, BPF_ANY))
		return -errno;
	set_bit(t, pid, true);
	return 0;
}

void targets_retire(struct targets *t, uint32_t pid, uint64_t now_ns)
{
	struct retired_target *r = array_reserve(t->retired, &t->retired_cap,
						 t->nretired + 1, sizeof(*r));
	if (!r) /* keep it in the map: harmless */
		return;
	t->retired = r;
	t->retired[t->nretired].pid = pid;
	t->retired[t->nretired].at_ns = now_ns;
	t->nretired++;
}

void targets_remove_retired(struct targets *t, uint64_t now_ns)
{
	uint32_t done = 0;

	while (done < t->nretired && now_ns - t->retired[done].at_ns >= RETIRE_DELAY_NS) {
		uint32_t pid = t->retired[done].pid;

		set_bit(t, pid, false);
		bpf_map_delete_elem(t->map_fd, &pid);
		done++;
	}
	if (!done)
		return;
	memmove(t->retired, t->retired + done, (t->nretired - done) * sizeof(*t->retired));
	t->nretired -= done;
}

int targets_list(const struct targets *t, uint32_t **pids, uint32_t *n)
{
	uint32_t key, next, cap = 0, *out = NULL, *grown;
	const uint32_t *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(t->map_fd, prev, &next) == 0) {
		grown = array_reserve(out, &cap, *n + 1, sizeof(*out));
		if (!grown) {
			free(out);
			return -ENOMEM;
		}
		out = grown;
		out[(*n)++] = next;
		key = next;
		prev = &key;
	}
	*pids = out;
	return 0;
}

void targets_free(struct targets *t)
{
	free(t->retired);
	memset(t, 0, sizeof(*t));
	t->map_fd = -1;
}
