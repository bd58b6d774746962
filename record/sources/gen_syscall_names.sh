#!/bin/sh
# gen_syscall_names.sh - writes record/sources/syscall_names.c, the x86_64 system
# call names by number, from the kernel's UAPI header. perfcap-record uses
# it to validate --syscalls and to name syscalls in META and STATS.
#
#   sh record/sources/gen_syscall_names.sh [UNISTD_64_H] > record/sources/syscall_names.c
#
# The output is committed, so the recorder builds on hosts without the
# header; rerun the script when the kernel adds system calls.
set -eu
header=${1:-/usr/include/x86_64-linux-gnu/asm/unistd_64.h}
[ -r "$header" ] || { echo "gen_syscall_names.sh: $header: not readable" >&2; exit 1; }

cat <<'HEAD'
/* syscall_names.c - x86_64 system call names, indexed by number. GENERATED
 * by record/sources/gen_syscall_names.sh from <asm/unistd_64.h>: do not edit. */
#include "syscall_sets.h"

const char *const syscall_names[PERFCAP_SYSCALL_NR_MAX] = {
HEAD
sed -n 's/^#define __NR_\([a-z0-9_]*\)[ 	]\{1,\}\([0-9]\{1,\}\)[ 	]*$/\2 \1/p' "$header" |
	sort -n | awk '$1 < 512 { printf "\t[%d] = \"%s\",\n", $1, $2 }'
echo "};"
