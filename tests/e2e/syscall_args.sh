#!/bin/sh
# syscall_args.sh - the syscall options are validated with a clear error
# before anything is loaded (no eBPF needed), and numbers are accepted for
# calls newer than the name table.
set -eu
. "$(dirname "$0")/lib.sh"
make_tmpdir

# expect_error WORD ARGS...: exit status 1 and one line naming WORD.
expect_error() {
	word=$1
	shift
	if "$PERFCAP_RECORD" "$@" -a -d 1 -o "$TMP/x.perfcap" 2> "$TMP/err"; then
		fail "accepted: $*"
	fi
	grep -q -- "$word" "$TMP/err" || { cat "$TMP/err" >&2; fail "no clear error for: $*"; }
	[ ! -e "$TMP/x.perfcap" ] || fail "a capture was written for: $*"
	echo "ok: $* -> $(cat "$TMP/err")"
}

expect_error "unknown system call 'bogus'" -e syscall --syscalls bogus
expect_error "unknown system call 'bogus'" -e syscall --syscalls read,bogus,write
expect_error "empty system call name" -e syscall --syscalls read,,write
expect_error "empty system call name" -e syscall --syscalls ''
expect_error "unknown system call '512'" -e syscall --syscalls 512
expect_error "invalid --syscall-min" -e syscall --syscall-min 5xs
expect_error "invalid --syscall-min" -e syscall --syscall-min -1ms

"$PERFCAP_RECORD" --list-events --syscalls read,futex,455 > "$TMP/list" ||
	fail "--syscalls with names and a number was refused"
grep -q '^syscall ' "$TMP/list" || fail "--list-events does not list syscall"
grep -q '^mux ' "$TMP/list" || fail "--list-events does not list mux"
echo "PASS"
