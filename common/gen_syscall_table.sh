#!/bin/sh
# gen_syscall_table.sh - writes common/syscall_table.c, the x86_64 system
# call names by number, from the kernel's UAPI header. perfcap-record uses
# it to validate --syscalls and to name syscalls in META and STATS;
# perfcap-analyze fills its syscall_names table from it.
#
#   sh common/gen_syscall_table.sh [UNISTD_64_H] > common/syscall_table.c
#
# The output is committed, so both programs build on hosts without the
# header; tests/analyze/check_syscall_table.sh compares it with the header
# when the header is installed. Rerun the script when the kernel adds calls.
set -eu
header=${1:-/usr/include/x86_64-linux-gnu/asm/unistd_64.h}
[ -r "$header" ] || { echo "gen_syscall_table.sh: $header: not readable" >&2; exit 1; }

cat <<'HEAD'
/* syscall_table.c - x86_64 system call names, indexed by number. GENERATED
 * by common/gen_syscall_table.sh from <asm/unistd_64.h>: do not edit; rerun
 * the script to update. */
#include "syscall_table.h"

const char *const syscall_names[SYSCALL_NR_MAX] = {
HEAD
sed -n 's/^#define __NR_\([a-z0-9_]*\)[ 	]\{1,\}\([0-9]\{1,\}\)[ 	]*$/\2 \1/p' "$header" |
	sort -n | awk '$1 < 512 { printf "\t[%d] = \"%s\",\n", $1, $2 }'
echo "};"
