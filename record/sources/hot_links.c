/* hot_links.c - a set of programs detached between time windows (see
 * hot_links.h). */
#include <errno.h>

#include "hot_links.h"

void hot_links_add(struct hot_links *h, struct bpf_program *prog, struct bpf_link **link)
{
	if (h->n == 0)
		h->state = 1;
	if (h->n < HOT_LINKS_MAX) {
		h->progs[h->n] = prog;
		h->links[h->n++] = link;
	}
}

static void destroy_all(struct hot_links *h)
{
	for (int i = 0; i < h->n; i++) {
		bpf_link__destroy(*h->links[i]);
		*h->links[i] = NULL;
	}
}

bool hot_links_detach(struct hot_links *h)
{
	struct bpf_link *probe;

	if (h->state != 1)
		return h->state == 0;
	if (!h->probed && h->n) {
		probe = bpf_program__attach(h->progs[0]);
		if (!probe) {
			h->err = -errno;
			h->state = -1;
			return false;
		}
		bpf_link__destroy(probe);
		h->probed = true;
	}
	destroy_all(h);
	h->state = 0;
	return true;
}

bool hot_links_attach(struct hot_links *h)
{
	if (h->state != 0)
		return true;
	for (int i = 0; i < h->n; i++) {
		*h->links[i] = bpf_program__attach(h->progs[i]);
		if (!*h->links[i]) {
			h->err = -errno;
			destroy_all(h);
			return false;
		}
	}
	h->state = 1;
	return true;
}
