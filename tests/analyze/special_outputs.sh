#!/bin/bash
# special_outputs.sh - outputs written under a temporary name and renamed
# into place (report --html, diff --html, export -o, import -o) never
# replace what is not a regular file: a device node (a copy of /dev/null's,
# where mknod is allowed), a FIFO, a directory. Each is refused with one
# line and a non-zero exit, and is still there, unchanged, afterwards.
# usage: special_outputs.sh FIXTURES_DIR (PERFCAP_ANALYZE: the binary)
set -u
: "${PERFCAP_ANALYZE:?}"
fixtures=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cap=$fixtures/real-mix.perfcap

mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
targets="$tmp/fifo $tmp/dir"
if mknod "$tmp/null" c 1 3 2> /dev/null; then
	targets="$targets $tmp/null"
else
	echo "note: mknod not allowed here; device node case skipped"
fi
for t in $targets; do
	kind=$(stat -c %F "$t")
	for cmd in "report --html $t $cap" "diff --html $t $cap $cap" \
		   "export --format speedscope -o $t $cap" "import -f $cap -o $t"; do
		# shellcheck disable=SC2086
		timeout 60 "$PERFCAP_ANALYZE" $cmd > /dev/null 2> "$tmp/err" < /dev/null
		rc=$?
		[ $rc -ne 0 ] || fail "$cmd: exit 0 over a $kind"
		[ $rc -ne 124 ] || fail "$cmd: hung on a $kind"
		[ "$(wc -l < "$tmp/err")" -ge 1 ] || fail "$cmd: no error line"
		[ "$(stat -c %F "$t")" = "$kind" ] || fail "$cmd: the $kind was replaced"
		echo "ok: $cmd: $(head -1 "$tmp/err")"
	done
done
ls "$tmp" | grep -q 'tmp-' && fail "a temporary file was left behind: $(ls "$tmp")"
echo "PASS: special outputs refused"
