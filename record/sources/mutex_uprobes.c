/* mutex_uprobes.c - placing the lock source's pthread_mutex_lock probes
 * and measuring what they cost (see mutex_uprobes.h).
 *
 * A probe pair is attached per target pid and per object defining the
 * function (path and file offset from uprobe_target.c); the kernel keeps
 * the breakpoints in that process's address space only, also across its
 * exec when the new image maps the same file. The cost is measured by
 * probing the recorder's own copy of the function: lock.bpf.c times the
 * calls of calib_tgid into calib_ns[] instead of emitting records.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "perfcap_bpf.h" /* before the skeleton: its types */
#include "lock.skel.h"
#include "mutex_uprobes.h"
#include "source.h"
#include "uprobe_target.h"

#define CALIB_CALLS 200  /* uncontended calls timed on ourselves */
#define CALIB_MAX   256  /* lock.bpf.c's CALIB_SAMPLES */

const char *const mutex_uprobe_functions[] = {
	"pthread_mutex_lock", "__pthread_mutex_lock", NULL
};

/* ---- attaching ------------------------------------------------------------ */

static int keep_link(struct mutex_uprobes *m, struct bpf_link *link)
{
	struct bpf_link **links = realloc(m->links, (m->nlinks + 1) * sizeof(*links));

	if (!links) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	m->links = links;
	m->links[m->nlinks++] = link;
	return 0;
}

static int attach_one(struct mutex_uprobes *m, struct bpf_program *prog, bool ret, pid_t pid,
		      const struct uprobe_target *t)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, pid, t->attach_path,
								 t->offset, &opts);
	int err = (int)libbpf_get_error(link);

	return err ? err : keep_link(m, link);
}

static int attach_pair(struct mutex_uprobes *m, pid_t pid, const struct uprobe_target *t)
{
	int err = attach_one(m, m->skel->progs.mutex_enter, false, pid, t);

	return err ? err : attach_one(m, m->skel->progs.mutex_exit, true, pid, t);
}

static void describe(struct mutex_uprobes *m, pid_t pid, const struct uprobe_target *t)
{
	size_t used = strlen(m->desc);

	snprintf(m->desc + used, sizeof(m->desc) - used, "%s%d:%s@0x%" PRIx64 "(%s)",
		 used ? "," : "", (int)pid, t->path, t->offset, t->symbol);
}

int mutex_uprobes_attach_pid(struct mutex_uprobes *m, pid_t pid, char *why, size_t len)
{
	struct uprobe_target t[UPROBE_TARGETS_MAX];
	int n = uprobe_target_find((uint32_t)pid, mutex_uprobe_functions, t, UPROBE_TARGETS_MAX,
				   why, len);
	int probed = 0, err = n < 0 ? n : -ENOENT;

	for (int i = 0; i < n; i++) {
		err = attach_pair(m, pid, &t[i]);
		if (err) {
			source_explain(why, len, "cannot attach the pthread_mutex_lock uprobes", err);
			continue;
		}
		describe(m, pid, &t[i]);
		probed++;
	}
	return probed ? probed : err;
}

static void detach_from(struct mutex_uprobes *m, size_t first)
{
	while (m->nlinks > first)
		bpf_link__destroy(m->links[--m->nlinks]);
}

void mutex_uprobes_detach(struct mutex_uprobes *m)
{
	detach_from(m, 0);
	free(m->links);
	m->links = NULL;
}

/* ---- the probes' own cost -------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Uncontended calls in this process, timed by the probes into calib_ns[]. */
static void time_own_calls(struct lock_bpf *skel)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	skel->bss->calib_n = 0;
	skel->bss->calib_tgid = (uint32_t)getpid();
	for (int i = 0; i < CALIB_CALLS; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	skel->bss->calib_tgid = 0;
}

static uint64_t median_of_samples(const struct lock_bpf *skel)
{
	uint32_t n = skel->bss->calib_n < CALIB_MAX ? skel->bss->calib_n : CALIB_MAX;
	uint64_t v[CALIB_MAX];

	if (n == 0)
		return 0;
	memcpy(v, (const void *)skel->bss->calib_ns, n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), by_value);
	return v[n / 2];
}

uint64_t mutex_uprobes_probe_cost(struct mutex_uprobes *m)
{
	struct uprobe_target t[UPROBE_TARGETS_MAX];
	size_t first = m->nlinks;
	char why[256];
	int n = uprobe_target_find((uint32_t)getpid(), mutex_uprobe_functions, t,
				   UPROBE_TARGETS_MAX, why, sizeof(why));

	for (int i = 0; i < n; i++) {
		if (attach_pair(m, getpid(), &t[i]))
			break;
	}
	if (m->nlinks > first)
		time_own_calls(m->skel);
	detach_from(m, first);
	return median_of_samples(m->skel);
}
