#!/bin/sh
# check_syscall_table.sh - the committed common/syscall_table.c (the one
# system call table of perfcap-record and perfcap-analyze) is what
# common/gen_syscall_table.sh makes from this machine's <asm/unistd_64.h>.
# Skips (77) where the x86_64 header is not installed.
#   check_syscall_table.sh SOURCE_ROOT
set -eu
root=$1
header=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
[ -r "$header" ] || { echo "SKIP: $header not installed"; exit 77; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
sh "$root/common/gen_syscall_table.sh" "$header" > "$tmp"
if ! cmp -s "$tmp" "$root/common/syscall_table.c"; then
	diff -u "$root/common/syscall_table.c" "$tmp" | head -40
	echo "FAIL: common/syscall_table.c is stale: rerun common/gen_syscall_table.sh"
	exit 1
fi
echo "PASS: syscall_table.c matches $header"
