/* syscall_windows.h - above --syscall-rate, the syscall program pairs
 * calls only in a window at the start of each second and is detached
 * between windows (syscall_windows.c). Driven by syscall_prog.c for the
 * sources that share the program. */
#ifndef RECORD_SYSCALL_WINDOWS_H
#define RECORD_SYSCALL_WINDOWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct chunk_buffer;
struct consumer;
struct syscall_bpf;

/* After the programs are attached: windows above budget calls a second
 * (0: none, every call is paired). */
void syscall_windows_begin(struct syscall_bpf *skel, uint64_t budget);

/* Each poll of the consumer loop: closes and opens windows at their
 * times (asking the loop for the next tick); final: the recording ends
 * (syscall_windows_end). */
void syscall_windows_tick(struct consumer *c, uint64_t now, bool final);
void syscall_windows_end(struct consumer *c, uint64_t now);

/* META syscall.windows.budget; STATS syscall.windows.* (cut: the kernel's
 * count of calls across an edge). 0 or -ENOMEM. */
int  syscall_windows_meta(struct chunk_buffer *kv);
int  syscall_windows_stats(struct chunk_buffer *kv, uint64_t cut);

/* The summary's line: how much of the recording calls were paired in
 * ("" when no period had a window). */
void syscall_windows_note(char *buf, size_t len);

#endif /* RECORD_SYSCALL_WINDOWS_H */
