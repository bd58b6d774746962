/* syscall_prog.h - the one syscall BPF program (bpf/syscall.bpf.c) that
 * the syscall, mux, net, lock and mem sources share.
 *
 * Each of those sources calls these functions from its own load, attach,
 * detach, destroy, handle and meta, passing its source id. The first load
 * opens and loads the program with the union of the selected sources'
 * syscall sets (syscall_sets.h); the first attach attaches it; the last
 * detach/destroy detaches/destroys it. So `-e mux` alone, `-e syscall,mux`
 * or `-e net,lock` all load it exactly once.
 *
 * A source sharing it lists PERFCAP_EV_SYSCALL in its event_types and
 * hands those records to syscall_prog_handle(), which writes SYSCALL
 * capture records counted for the source owning the call's number.
 */
#ifndef RECORD_SYSCALL_PROG_H
#define RECORD_SYSCALL_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"

struct bpf_object;
struct chunk_buffer;
struct consumer;

int  syscall_prog_load(int source, const struct source_env *env, char *why, size_t len);

/* The net or mem source's object (obj, opened, not loaded) takes the maps
 * of that source's part of the sys_exit program (net: fds, socks, ports,
 * net_counts, bpf/net_calls.bpf.h; mem: mem_counters, bpf/mem_calls.bpf.h),
 * so both objects read and write the same ones. After
 * syscall_prog_load(source, ...). 0 or -errno (why). */
int  syscall_prog_share_maps(int source, struct bpf_object *obj, char *why, size_t len);
int  syscall_prog_attach(int source, char *why, size_t len);
void syscall_prog_detach(int source);
void syscall_prog_destroy(int source);

/* One PERFCAP_EV_SYSCALL kernel record. */
void syscall_prog_handle(struct consumer *c, const void *rec, size_t size);

/* META: `syscall.set` (source syscall) or `syscall.set.NAME` (the others),
 * and once per recording the keys of the program itself. */
int  syscall_prog_meta(int source, struct chunk_buffer *kv);

/* STATS: once per recording, the counters of the program (calls and ns
 * per syscall, emitted, filtered, unmatched...); nothing for the others. */
int  syscall_prog_stats(int source, struct chunk_buffer *kv);

/* The windows above --syscall-rate (syscall_windows.h), driven by the
 * primary holder's tick; its summary line (empty for the others). */
void syscall_prog_tick(int source, struct consumer *c, uint64_t now_ns, bool final);
void syscall_prog_note(int source, char *buf, size_t len);

#endif /* RECORD_SYSCALL_PROG_H */
