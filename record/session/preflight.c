/* preflight.c - checks made before anything is attached: privileges and
 * kernel BTF. Each failure is one line saying what is missing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "preflight.h"
#include "util/util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BTF_PATH "/sys/kernel/btf/vmlinux"
#define TRACEFS_PATH "/sys/kernel/tracing"
#define TRACEFS_MAGIC_NUMBER 0x74726163

static bool has_effective_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

static bool has_privileges(void)
{
	struct __user_cap_header_struct header = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0)
		return true;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &header, data))
		return false;
	if (has_effective_cap(data, CAP_SYS_ADMIN))
		return true;
	return has_effective_cap(data, CAP_BPF) && has_effective_cap(data, CAP_PERFMON);
}

int preflight_check(void)
{
	if (!has_privileges()) {
		error_line("needs root or CAP_BPF and CAP_PERFMON (try sudo)");
		return -1;
	}
	if (access(BTF_PATH, R_OK)) {
		error_line("this kernel exposes no BTF (%s: %s); perfcap-record needs a kernel "
			   "built with CONFIG_DEBUG_INFO_BTF=y", BTF_PATH, strerror(errno));
		return -1;
	}
	return 0;
}

int preflight_mount_tracefs(void)
{
	struct statfs st;

	if (statfs(TRACEFS_PATH, &st) == 0 && st.f_type == TRACEFS_MAGIC_NUMBER)
		return 0;
	if (mount("tracefs", TRACEFS_PATH, "tracefs", 0, NULL)) {
		int err = -errno;

		warning_line("cannot mount tracefs at %s: %s", TRACEFS_PATH, strerror(-err));
		return err;
	}
	verbose_line("mounted tracefs at %s", TRACEFS_PATH);
	return 0;
}

int preflight_tracepoint_args(const char *tp)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	char name[128];
	int id, nargs = -ENOENT;

	if (!btf)
		return -errno;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	if (t)
		t = btf__type_by_id(btf, t->type);         /* pointer */
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);         /* function prototype */
	if (t && btf_is_func_proto(t))
		nargs = btf_vlen(t) - 1;                  /* without void *__data */
	btf__free(btf);
	return nargs;
}

bool preflight_kernel_has_func(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found;

	if (!btf)
		return false;
	found = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return found;
}

long long preflight_percpu_var(const struct btf *btf, const char *var, long long *size)
{
	int id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	const struct btf_type *sec = id > 0 ? btf__type_by_id(btf, (uint32_t)id) : NULL;
	const struct btf_var_secinfo *vs = sec ? btf_var_secinfos(sec) : NULL;

	for (int i = 0; vs && i < btf_vlen(sec); i++) {
		const struct btf_type *v = btf__type_by_id(btf, vs[i].type);
		const char *name = v ? btf__name_by_offset(btf, v->name_off) : NULL;

		if (name && strcmp(name, var) == 0) {
			if (size)
				*size = vs[i].size;
			return vs[i].offset;
		}
	}
	return -1;
}

long long preflight_percpu_offset(const char *var)
{
	struct btf *btf = btf__load_vmlinux_btf();
	long long off;

	if (!btf)
		return -1;
	off = preflight_percpu_var(btf, var, NULL);
	btf__free(btf);
	return off;
}

void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
