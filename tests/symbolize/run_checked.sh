#!/bin/sh
# run_checked.sh TEST [ARGS...] - runs a criterion test binary and fails if a
# sanitizer reported anything. Criterion runs each test in a child process
# and ignores how that child exits after reporting, so a LeakSanitizer
# report at exit would otherwise pass unnoticed.
log=$(mktemp /tmp/perfcap-sym-log.XXXXXX) || exit 1
"$@" >"$log" 2>&1
status=$?
cat "$log"
if grep -q -E 'Sanitizer|runtime error' "$log"; then
	echo "run_checked.sh: sanitizer report above" >&2
	status=1
fi
rm -f "$log"
exit $status
