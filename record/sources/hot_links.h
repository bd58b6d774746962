/* hot_links.h - programs that run at every event of a kind on the host
 * (every context switch, every TCP call), traced task or not, attached
 * only in a source's time windows and detached between them, so that the
 * host pays nothing then rather than a program's entry and exit (about
 * 0.09 us a call). Used by the req and sched sources' windows.
 *
 * The recorder gives up capabilities after attach (session/privileges.c),
 * and a kernel may want them to attach a program again: before the first
 * detach, one program is attached once more as a probe; if that is
 * refused, the set stays attached throughout (state -1), the source's
 * windows then only say what they follow. */
#ifndef RECORD_HOT_LINKS_H
#define RECORD_HOT_LINKS_H

#include <stdbool.h>
#include <bpf/libbpf.h>

#define HOT_LINKS_MAX 4

struct hot_links {
	struct bpf_program *progs[HOT_LINKS_MAX];
	struct bpf_link **links[HOT_LINKS_MAX]; /* the skeleton's, destroyed with it */
	int n;
	int state;                 /* 1 attached, 0 detached, -1 cannot be attached again */
	int err;                   /* the last refusal: -errno */
	bool probed;
};

/* Adds program prog, attached by the skeleton at *link. */
void hot_links_add(struct hot_links *h, struct bpf_program *prog, struct bpf_link **link);

/* Detaches them all (probing first, the first time). false when they
 * stay attached: the probe was refused (state -1). */
bool hot_links_detach(struct hot_links *h);

/* Attaches them all again, or none: false when one was refused (they
 * stay detached; err says why). true when attached already. */
bool hot_links_attach(struct hot_links *h);

#endif /* RECORD_HOT_LINKS_H */
