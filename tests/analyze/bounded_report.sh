#!/bin/bash
# bounded_report.sh - the report's memory for requests and for system
# call durations is bounded (PERFCAP_REPORT_REQUEST_BYTES and
# PERFCAP_REPORT_CALL_BYTES, 256 MiB each by default): past it the
# percentiles are found in more reads of the tables and the requests'
# spans are read again, sorted by thread and merged with the thread states
# (report_requests.c, query/calls.c). The answers
# must not change: the report (text and JSON; the whole capture, a window,
# one process) with a few hundred bytes, and with one, equals the report
# that keeps everything, and stderr says what was read again.
# usage: bounded_report.sh FIXTURES_DIR (PERFCAP_ANALYZE: the binary)
set -u
: "${PERFCAP_ANALYZE:?}"
fixtures=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$PERFCAP_ANALYZE" import -o "$tmp/mix.db" "$fixtures/real-mix.perfcap" > /dev/null ||
	fail "import of real-mix"
n=$(sqlite3 "$tmp/mix.db" "SELECT count(*) FROM requests")
[ "$n" -ge 20 ] || fail "real-mix has $n requests: too few to slice"
pid=$(sqlite3 "$tmp/mix.db" "SELECT pid FROM requests LIMIT 1")
i=0
for scope in "" "--from 300ms --to 450ms" "--pid $pid"; do
	for fmt in "" "--json"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$PERFCAP_ANALYZE" report $fmt $scope "$tmp/mix.db" > "$tmp/all.$i" 2> "$tmp/all.err" ||
			fail "report $fmt $scope: $(cat "$tmp/all.err")"
		grep -q "exceed the report's memory" "$tmp/all.err" &&
			fail "report $fmt $scope read again with the default memory"
		for bytes in 400 1; do
			# shellcheck disable=SC2086
			PERFCAP_REPORT_REQUEST_BYTES=$bytes PERFCAP_REPORT_CALL_BYTES=$bytes \
				"$PERFCAP_ANALYZE" report $fmt $scope \
				"$tmp/mix.db" > "$tmp/small.$i" 2> "$tmp/small.err" ||
				fail "report $fmt $scope with $bytes bytes: $(cat "$tmp/small.err")"
			cmp -s "$tmp/all.$i" "$tmp/small.$i" || {
				diff "$tmp/all.$i" "$tmp/small.$i" | head -20
				fail "report $fmt $scope changed with $bytes bytes for requests"
			}
			grep -q "percentiles found in [1-9][0-9]* more reads\\? of the table" "$tmp/small.err" ||
				fail "report $fmt $scope, $bytes bytes: no note of the percentiles' reads"
			grep -q "durations of [0-9,]* system calls .* percentiles found in" \
				"$tmp/small.err" ||
				fail "report $fmt $scope, $bytes bytes: no note of the calls' reads"
			if [ -z "$scope" ]; then
				grep -Eq "spans of $n requests .* read again sorted by thread" \
					"$tmp/small.err" ||
					fail "report $fmt, $bytes bytes: no note of the spans read again"
			fi
		done
	done
done
grep -q "Requests on sockets" "$tmp/all.1" || fail "the report shows no requests"
echo "OK: $i reports of $n requests equal with 400 bytes and 1 byte for them and for calls"
