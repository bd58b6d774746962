/* source_mux.c - the mux source (`-e mux`): waits in epoll_wait,
 * epoll_pwait(2), poll, ppoll, select and pselect6 per thread, as SYSCALL
 * records (args[0] is the epoll fd or the fd array, the duration is the
 * wait). It has no BPF program of its own: it contributes its set to the
 * syscall program (syscall_prog.c, syscall_sets.c), which loads once
 * whichever of syscall/mux/net/lock/mem are selected.
 */
#include "source.h"
#include "syscall_prog.h"

static int mux_load(const struct source_env *env, char *why, size_t len)
{
	return syscall_prog_load(PERFCAP_SRC_MUX, env, why, len);
}

static int mux_attach(const struct source_env *env, char *why, size_t len)
{
	(void)env;
	return syscall_prog_attach(PERFCAP_SRC_MUX, why, len);
}

static void mux_detach(void)
{
	syscall_prog_detach(PERFCAP_SRC_MUX);
}

static void mux_destroy(void)
{
	syscall_prog_destroy(PERFCAP_SRC_MUX);
}

static int mux_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	(void)env;
	return syscall_prog_meta(PERFCAP_SRC_MUX, kv);
}

static int mux_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	(void)c;
	return syscall_prog_stats(PERFCAP_SRC_MUX, kv);
}

/* The syscall program's windows (--syscall-rate): ticked and told by the
 * program's primary holder only (syscall_prog.c). */
static void mux_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	syscall_prog_tick(PERFCAP_SRC_MUX, c, now_ns, final);
}

static void mux_note(char *buf, size_t len)
{
	syscall_prog_note(PERFCAP_SRC_MUX, buf, len);
}

static const uint16_t mux_event_types[] = { PERFCAP_EV_SYSCALL, 0 };

const struct source mux_source = {
	.summary = "epoll_wait/poll/select waits per thread (the syscall program's mux set)",
	.id = PERFCAP_SRC_MUX,
	.event_types = mux_event_types,
	.load = mux_load,
	.attach = mux_attach,
	.detach = mux_detach,
	.destroy = mux_destroy,
	.handle = syscall_prog_handle,
	.meta = mux_meta,
	.stats = mux_stats,
	.tick = mux_tick,
	.summary_note = mux_note,
};
