/* test_wait_class.c - the kernel-stack wait classes (analyze/correlate/
 * wait_class.c) on stacks as Linux 6.x records them: the innermost telling
 * frame decides, generic sleeping primitives (schedule_hrtimeout_range
 * under ep_poll, schedule_timeout under sk_wait_data) do not, and a stack
 * with no telling frame gives no class. */
#include <criterion/criterion.h>

#include "correlate/wait_class.h"

#define CLASS(...) ({ \
	const char *const names_[] = { __VA_ARGS__ }; \
	wait_class_of_kernel_stack(names_, (int)(sizeof(names_) / sizeof(names_[0]))); })

Test(wait_class, user_lock_in_futex)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "futex_do_wait", "__futex_wait",
			   "futex_wait", "do_futex", "__x64_sys_futex"), WC_FUTEX);
}

Test(wait_class, epoll_not_the_timer_under_it)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_hrtimeout_range_clock",
			   "ep_poll", "do_epoll_wait", "__x64_sys_epoll_wait"), WC_POLL);
}

Test(wait_class, nanosleep_is_sleep)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "do_nanosleep", "hrtimer_nanosleep",
			   "common_nsleep", "__x64_sys_clock_nanosleep"), WC_SLEEP);
}

Test(wait_class, socket_receive_and_accept)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout", "wait_woken",
			   "sk_wait_data", "tcp_recvmsg_locked", "tcp_recvmsg"), WC_NET);
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout",
			   "inet_csk_accept", "inet_accept", "do_accept"), WC_ACCEPT);
}

Test(wait_class, disk_through_the_page_cache)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "io_schedule", "folio_wait_bit_common",
			   "filemap_fault"), WC_BLOCK_IO);
	cr_expect_eq(CLASS("__schedule", "schedule", "jbd2_log_wait_commit",
			   "ext4_sync_file", "do_fsync"), WC_BLOCK_IO);
}

Test(wait_class, kernel_lock_pipe_and_nothing)
{
	cr_expect_eq(CLASS("__schedule", "schedule", "rwsem_down_write_slowpath",
			   "down_write", "do_mprotect_pkey"), WC_KERNEL_LOCK);
	cr_expect_eq(CLASS("__schedule", "schedule", "pipe_read", "vfs_read"), WC_PIPE);
	cr_expect_eq(CLASS("__schedule", "schedule", "schedule_timeout", "wait_woken"), WC_N);
	cr_expect_eq(wait_class_of_kernel_stack(NULL, 0), WC_N);
}

Test(wait_class, names_are_the_documented_ones)
{
	cr_expect_str_eq(wait_class_name(WC_UNKNOWN), "unknown");
	cr_expect_str_eq(wait_class_name(WC_SLEEP), "sleep");
	cr_expect_str_eq(wait_class_name(WC_KERNEL_LOCK), "kernel_lock");
	cr_expect_str_eq(wait_class_name(WC_N), "unknown");
}
