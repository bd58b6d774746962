/* source_syscall.c - the syscall source (`-e syscall`): one SYSCALL record
 * per completed call of the set chosen with --syscalls (default: the calls
 * a diagnosis needs, SYSCALL_DEFAULT_SET), at least --syscall-min long,
 * with every call still counted per syscall in STATS. The BPF program is
 * shared with mux, net, lock and mem (syscall_prog.c); this file only
 * binds it to the source interface.
 */
#include "source.h"
#include "syscall_prog.h"

static int syscall_load(const struct source_env *env, char *why, size_t len)
{
	return syscall_prog_load(PERFCAP_SRC_SYSCALL, env, why, len);
}

static int syscall_attach(const struct source_env *env, char *why, size_t len)
{
	(void)env;
	return syscall_prog_attach(PERFCAP_SRC_SYSCALL, why, len);
}

static void syscall_detach(void)
{
	syscall_prog_detach(PERFCAP_SRC_SYSCALL);
}

static void syscall_destroy(void)
{
	syscall_prog_destroy(PERFCAP_SRC_SYSCALL);
}

static int syscall_meta(struct chunk_buffer *kv, const struct source_env *env)
{
	(void)env;
	return syscall_prog_meta(PERFCAP_SRC_SYSCALL, kv);
}

static int syscall_stats(struct chunk_buffer *kv, const struct consumer *c)
{
	(void)c;
	return syscall_prog_stats(PERFCAP_SRC_SYSCALL, kv);
}

/* The syscall program's windows (--syscall-rate): ticked and told by the
 * program's primary holder only (syscall_prog.c). */
static void syscall_tick(struct consumer *c, uint64_t now_ns, bool final)
{
	syscall_prog_tick(PERFCAP_SRC_SYSCALL, c, now_ns, final);
}

static void syscall_note(char *buf, size_t len)
{
	syscall_prog_note(PERFCAP_SRC_SYSCALL, buf, len);
}

static const uint16_t syscall_event_types[] = { PERFCAP_EV_SYSCALL, 0 };

const struct source syscall_source = {
	.summary = "completed system calls with duration, fd/bytes args and return value "
		   "(--syscalls, --syscall-min); all calls counted per syscall; above "
		   "--syscall-rate, calls in a window of each second",
	.id = PERFCAP_SRC_SYSCALL,
	.event_types = syscall_event_types,
	.load = syscall_load,
	.attach = syscall_attach,
	.detach = syscall_detach,
	.destroy = syscall_destroy,
	.handle = syscall_prog_handle,
	.meta = syscall_meta,
	.stats = syscall_stats,
	.tick = syscall_tick,
	.summary_note = syscall_note,
};
