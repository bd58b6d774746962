#!/bin/bash
# bounded_diff.sh - diff's memory for latency values is bounded
# (PERFCAP_DIFF_LATENCY_BYTES, 256 MiB by default, shared by the runs):
# a run past its share moves its values into a temporary database and the
# comparison reads them sorted from there (diff_spill.c, series_walk.c).
# The answers must not change: every comparison (--all; text and JSON) of
# one run a side, of two runs a side, and of a capture against itself,
# with 8 bytes and with 4 KiB, equals the diff that keeps everything, and
# stderr says which runs were spilled.
# usage: bounded_diff.sh FIXTURES_DIR (PERFCAP_ANALYZE: the binary)
set -u
: "${PERFCAP_ANALYZE:?}"
fixtures=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for f in real-mix real-lock; do
	"$PERFCAP_ANALYZE" import -o "$tmp/$f.db" "$fixtures/$f.perfcap" > /dev/null ||
		fail "import of $f"
done
mix=$tmp/real-mix.db lock=$tmp/real-lock.db
i=0
for inputs in "$mix $lock" "$mix $mix" "--base $mix $lock --new $lock $mix"; do
	for fmt in "" "--json"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		"$PERFCAP_ANALYZE" diff --all $fmt $inputs > "$tmp/all.$i" 2> "$tmp/all.err"
		[ $? -le 1 ] || fail "diff $fmt $inputs: $(cat "$tmp/all.err")"
		grep -q "kept in a temporary database" "$tmp/all.err" &&
			fail "diff $fmt $inputs spilled with the default memory"
		for bytes in 8 4096; do
			# shellcheck disable=SC2086
			PERFCAP_DIFF_LATENCY_BYTES=$bytes "$PERFCAP_ANALYZE" diff --all $fmt $inputs \
				> "$tmp/small.$i" 2> "$tmp/small.err"
			[ $? -le 1 ] || fail "diff $fmt $inputs with $bytes bytes: $(cat "$tmp/small.err")"
			cmp -s "$tmp/all.$i" "$tmp/small.$i" || {
				diff "$tmp/all.$i" "$tmp/small.$i" | head -20
				fail "diff $fmt $inputs changed with $bytes bytes for latencies"
			}
			grep -q "latency values of .*real-mix.db exceed the diff's memory" \
				"$tmp/small.err" || fail "diff $fmt $inputs, $bytes bytes: no note"
		done
	done
done
grep -q '"test": "Mann-Whitney U' "$tmp/all.2" || fail "no latency series compared"
echo "OK: $i diffs equal with 8 bytes and 4 KiB for latencies"
