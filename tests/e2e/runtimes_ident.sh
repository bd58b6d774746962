#!/bin/bash
# runtimes_ident.sh - runtime identification on real runtimes from Debian
# packages: Debian's python3.11, node and OpenJDK's java, each recorded
# with -e cpu; perfcap-analyze must name each process's runtime in
# process_runtimes (python 3.11 from its executable, node from its
# executable, the JVM from a mapped libjvm.so with its version), in the
# report's "Runtimes" with the advice that names its frames, and in
# `info` straight from the capture. A runtime that is not installed is
# skipped (named); the test skips loudly when none is.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
make_tmpdir

ran=0
# check NAME RUNTIME ADVICE_WORD CMD...: record CMD, expect RUNTIME for its
# pid; sets version
check() {
	local name=$1 want=$2 advice=$3 row
	shift 3
	timeout 120 "$PERFCAP_RECORD" -e cpu -F 199 -o "$TMP/$name.perfcap" -- "$@" \
		> /dev/null 2> "$TMP/$name.err" || { cat "$TMP/$name.err"; fail "$name: perfcap-record failed"; }
	"$PERFCAP_ANALYZE" import "$TMP/$name.perfcap" -o "$TMP/$name.db" > /dev/null 2>&1 ||
		fail "$name: import failed"
	row=$("$PERFCAP_ANALYZE" query "$TMP/$name.db" "SELECT runtime, coalesce(version, '-'),
		confidence, evidence FROM process_runtimes r JOIN (SELECT pid FROM processes
		ORDER BY ts LIMIT 1) USING (pid)" | tail -n +2)
	echo "$name: $row"
	[ "$(echo "$row" | cut -f1)" = "$want" ] || fail "$name: runtime is not $want: '$row'"
	"$PERFCAP_ANALYZE" report "$TMP/$name.db" 2>&1 | sed -n '/^Runtimes/,/^$/p' > "$TMP/$name.report"
	grep -q -- "$advice" "$TMP/$name.report" || { cat "$TMP/$name.report"; fail "$name: no advice '$advice'"; }
	"$PERFCAP_ANALYZE" info "$TMP/$name.perfcap" | sed -n '/^Runtimes/,/^$/p' |
		grep -q " $want " || fail "$name: info names no $want"
	ran=$((ran + 1))
	version=$(echo "$row" | cut -f2)
}

if [ -x /usr/bin/python3.11 ]; then
	check python python "usdt" /usr/bin/python3.11 -c 's = 0
for i in range(2000000): s += i'
	[ "$version" = 3.11 ] || fail "python: version '$version', want 3.11"
else
	echo "(no /usr/bin/python3.11: python not checked)"
fi
if command -v node > /dev/null; then
	check node node "perf-basic-prof" node -e 'let s = 0; for (let i = 0; i < 2e7; i++) s += i'
else
	echo "(no node: Node.js not checked)"
fi
if command -v java > /dev/null; then
	check java jvm "PreserveFramePointer" java -version
	case "$version" in [0-9]*) ;; *) fail "jvm: no version from libjvm's path: '$version'" ;; esac
else
	echo "(no java: the JVM not checked)"
fi
[ $ran -gt 0 ] || { echo "SKIP: none of python3.11, node, java is installed" >&2; exit 77; }
echo "PASS: runtimes_ident ($ran runtimes)"
