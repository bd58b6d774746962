/* syscall_windows.c - the syscall program's time windows (--syscall-rate).
 *
 * The sys_enter and sys_exit programs run at every system call on the
 * host, traced task or not, and a traced call they pair costs more again
 * (record/sources listing: about 0.2 us a call on the host, 0.45 us a
 * traced call). Above a budget of traced calls a second, they are attached
 * only in a window at the start of each second, long enough for about the
 * budget at the last window's rate (never shorter than WIN_MIN_NS), and
 * detached between windows (hot_links.h), where the host pays nothing.
 *
 * The kernel pairs a call only when it enters at or after sc_win_start and
 * exits before sc_win_end (bpf/syscall.bpf.c), so the window a
 * SYSCALL_WINDOW record states is exactly the one calls were paired in,
 * however late this loop detaches. The record is written as the window
 * opens, before any of its calls reach the capture, so that a reader
 * weighs each call as it reads it: a call of duration d stands for
 * period / (open - d) calls (format/SPEC.md, SYSCALL_WINDOW).
 *
 * Below the budget the programs stay attached and the window never ends
 * (sc_win_end 0); a load that grows past it is followed to the end of its
 * second, then windowed from the next. Periods followed whole have no
 * record.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "consume/consumer.h"      /* perfcap_bpf.h, which the skeleton needs */
#include "syscall.skel.h"
#include "session/percpu_counts.h"
#include "util/util.h"
#include "hot_links.h"
#include "syscall_windows.h"

#define WIN_PERIOD_NS 1000000000ull
#define WIN_MIN_NS      20000000ull

static struct syscall_bpf *skel;
static struct hot_links hot;

static struct {
	uint64_t budget;            /* --syscall-rate; 0: no windows */
	uint64_t span_start;        /* the first period's start (0: not begun) */
	uint64_t period_start;      /* this period's, where its window opened */
	uint64_t open_len;          /* its window's length (WIN_PERIOD_NS: whole) */
	uint64_t paired_at_open;    /* PAIRED when it opened */
	uint64_t rate;              /* calls a second in the last window */
	uint64_t windows;           /* periods with a window shorter than the period */
	uint64_t covered_ns;        /* time in windows or periods followed whole */
	uint64_t span_ns;
	uint64_t attach_failed;     /* periods not followed: attach refused */
	bool open;                  /* the programs follow calls now */
	bool windowed;              /* this period has a window */
} win;

static uint64_t read_paired(void)
{
	uint64_t n[PERFCAP_SC_NR];

	if (percpu_counts_read(skel->maps.syscall_counters, n, PERFCAP_SC_NR))
		return win.paired_at_open;
	return n[PERFCAP_SC_PAIRED];
}

void syscall_windows_begin(struct syscall_bpf *s, uint64_t budget)
{
	skel = s;
	memset(&win, 0, sizeof(win));
	memset(&hot, 0, sizeof(hot));
	win.budget = budget;
	if (!budget)
		return;
	/* exit first: hot_links attaches in this order, and an entry is only
	 * written when the code that consumes it runs */
	hot_links_add(&hot, skel->progs.on_sys_exit, &skel->links.on_sys_exit);
	hot_links_add(&hot, skel->progs.on_sys_enter, &skel->links.on_sys_enter);
	win.span_start = win.period_start = monotonic_ns();
	win.open_len = WIN_PERIOD_NS;
	win.open = true;
	win.paired_at_open = read_paired();
}

static void write_window(struct consumer *c, uint64_t open_ns, uint64_t period_ns)
{
	struct pc_rec_syscall_window rec = {
		.h.type = PC_REC_SYSCALL_WINDOW,
		.ts = win.period_start,
		.open_ns = open_ns < period_ns ? open_ns : period_ns,
		.period_ns = period_ns,
		.rate = win.rate,
	};

	consumer_add_event(c, PERFCAP_SRC_SYSCALL, &rec, sizeof(rec), rec.ts);
}

/* The window ends: calls after sc_win_end are not paired already (the
 * kernel checks), so its rate is over its planned length. */
static void close_window(void)
{
	uint64_t len = win.open_len;

	win.open = false;
	win.rate = (read_paired() - win.paired_at_open) * WIN_PERIOD_NS / (len ? len : 1);
	win.covered_ns += len;
	hot_links_detach(&hot);   /* false: refused, they stay attached and idle */
}

/* A period followed whole ends at now: its rate. */
static void close_whole(uint64_t now)
{
	uint64_t len = now - win.period_start;

	win.rate = (read_paired() - win.paired_at_open) * WIN_PERIOD_NS / (len ? len : 1);
	win.covered_ns += len;
}

/* A new period from now: whole, or a window sized by the last rate. */
static void next_period(struct consumer *c, uint64_t now)
{
	uint64_t w = win.rate ? win.budget * WIN_PERIOD_NS / win.rate : WIN_PERIOD_NS;
	bool was_whole = win.open && !win.windowed;
	uint64_t t;

	if (was_whole)
		close_whole(now);
	win.windowed = w < WIN_PERIOD_NS;
	if (!win.windowed && was_whole) {   /* nothing changes: no edge, no cut */
		win.period_start = now;
		win.paired_at_open = read_paired();
		return;
	}
	if (win.windowed && w < WIN_MIN_NS)
		w = WIN_MIN_NS;
	if (!win.windowed)
		w = WIN_PERIOD_NS;
	if (!hot_links_attach(&hot)) {      /* not followed: said by open_ns 0 */
		win.attach_failed++;
		win.period_start = now;
		win.open = false;
		win.windowed = true;
		write_window(c, 0, WIN_PERIOD_NS);
		return;
	}
	t = monotonic_ns();
	win.period_start = t;
	win.open_len = w;
	win.paired_at_open = read_paired();
	skel->bss->sc_win_start = t;
	skel->bss->sc_win_end = win.windowed ? t + w : 0;
	win.open = true;
	if (win.windowed) {
		win.windows++;
		write_window(c, w, WIN_PERIOD_NS);
	}
}

void syscall_windows_tick(struct consumer *c, uint64_t now, bool final)
{
	if (!win.budget || !win.span_start)
		return;
	if (final) {
		syscall_windows_end(c, now);
		return;
	}
	if (win.open && win.windowed && now >= win.period_start + win.open_len)
		close_window();
	if (now >= win.period_start + WIN_PERIOD_NS)
		next_period(c, now);
	if (win.open && win.windowed)
		consumer_tick_by(c, win.period_start + win.open_len);
	consumer_tick_by(c, win.period_start + WIN_PERIOD_NS);
}

/* The last period, cut by the recording's end at now: a windowed one gets
 * its record again, with the lengths it had. */
void syscall_windows_end(struct consumer *c, uint64_t now)
{
	uint64_t len;

	if (!win.budget || !win.span_start || win.span_ns)
		return;
	len = now > win.period_start ? now - win.period_start : 0;
	if (win.windowed && len < WIN_PERIOD_NS) {
		if (win.open)
			win.covered_ns += len < win.open_len ? len : win.open_len;
		write_window(c, win.open_len, len);
	} else if (win.open) {
		win.covered_ns += len < win.open_len ? len : win.open_len;
	}
	win.open = false;
	win.span_ns = now - win.span_start;
}

int syscall_windows_meta(struct chunk_buffer *kv)
{
	return win.budget ? chunk_buffer_add_kv_u64(kv, "syscall.windows.budget", win.budget) : 0;
}

int syscall_windows_stats(struct chunk_buffer *kv, uint64_t cut)
{
	int err = 0;

	if (!win.budget)
		return 0;
	err |= chunk_buffer_add_kv_u64(kv, "syscall.windows.count", win.windows);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.windows.covered_ns", win.covered_ns);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.windows.span_ns", win.span_ns);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.windows.cut", cut);
	err |= chunk_buffer_add_kv_u64(kv, "syscall.windows.attach_failed", win.attach_failed);
	if (hot.state < 0)
		err |= chunk_buffer_add_kv(kv, "syscall.windows.detach", "refused");
	return err;
}

void syscall_windows_note(char *buf, size_t len)
{
	buf[0] = 0;
	if (win.windows && win.span_ns)
		snprintf(buf, len, "calls paired in %llu time windows, %.1f%% of the recording "
			 "(above --syscall-rate %llu; each stands for its second over its window)",
			 (unsigned long long)win.windows, 100.0 * win.covered_ns / win.span_ns,
			 (unsigned long long)win.budget);
}
