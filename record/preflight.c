/* preflight.c - checks made before anything is attached: privileges and
 * kernel BTF. Each failure is one line saying what is missing. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "preflight.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BTF_PATH "/sys/kernel/btf/vmlinux"

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

void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}
