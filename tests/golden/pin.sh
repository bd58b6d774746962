#!/bin/bash
# pin.sh - pins what perfcap-analyze prints for fixed inputs: report (text,
# --json, --folded), info, query and diff on the fixture captures and on
# synthetic captures must print exactly the bytes stored in
# tests/golden/expected/. A refactoring that changes no behaviour keeps them;
# a change of behaviour updates them in the same commit, on purpose:
#
#   PERFCAP_ANALYZE=build/analyze/perfcap-analyze tests/golden/pin.sh --update
#
# The version line (which carries the git hash) is the only thing masked.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
expected=$here/expected
update=0
[ "${1:-}" = --update ] && update=1
: "${PERFCAP_ANALYZE:?}"
export DEBUGINFOD_URLS=
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

cp "$root/fixtures/golden-v1.perfcap" golden.perfcap
cp "$root/fixtures/future-minor.perfcap" future.perfcap
cp "$root/fixtures/real-mix.perfcap" real.perfcap
cp "$root/fixtures/real-lock.perfcap" lock.perfcap
# written by bench/gen_capture (3000 samples, 3 processes, 60 stacks;
# --events 30000), checked in because gen_capture stamps the time
cp "$root/fixtures/synthetic-samples.perfcap" samples.perfcap
cp "$root/fixtures/synthetic-events.perfcap" events.perfcap
# format 1.2: nofp_chain (-O2 -fomit-frame-pointer) recorded -e cpu,sched
# -F 49 --stack-copy 2K: USTACK copies (CPU and off-CPU) and UNWIND tables
cp "$root/fixtures/stacks-v1.2.perfcap" stacks.perfcap

mask() { sed -E 's/perfcap-analyze [0-9]+\.[0-9]+\.[0-9]+ \([^)]*\)/perfcap-analyze VERSION/g'; }
# run NAME ARGS...: stdout and the exit code, masked, into out/NAME.
mkdir out
run() {
	local name=$1; shift
	"$PERFCAP_ANALYZE" "$@" > out/raw 2> /dev/null
	local rc=$?
	{ mask < out/raw; echo "exit $rc"; } > "out/$name"
}
for cap in golden future real lock samples events stacks; do
	run "$cap.report.txt" report --no-local-files $cap.perfcap
	run "$cap.report.json" report --json --no-local-files $cap.perfcap
	run "$cap.folded" report --folded --no-local-files $cap.perfcap
	run "$cap.info.txt" info $cap.perfcap
done
run real.window.txt report --no-local-files --from 200ms --to 700ms real.perfcap
run real.top5.json report --json --no-local-files --top 5 real.perfcap
"$PERFCAP_ANALYZE" import --no-local-files real.perfcap -o real.db > /dev/null 2>&1
"$PERFCAP_ANALYZE" import --no-local-files lock.perfcap -o lock.db > /dev/null 2>&1
# every view, and pool_utilisation, a view until import computed it
views=$("$PERFCAP_ANALYZE" query real.db "SELECT name FROM sqlite_master WHERE type = 'view'
	OR name = 'pool_utilisation' ORDER BY name" | tail -n +2)
for db in real lock; do
	for view in $views; do
		# rows sorted whole: a view's order among equal keys is not pinned
		run "$db.view.$view.tsv" query $db.db "SELECT * FROM $view"
		{ head -n 1 "out/$db.view.$view.tsv"; tail -n +2 "out/$db.view.$view.tsv" |
			LC_ALL=C sort; } > out/sorted && mv out/sorted "out/$db.view.$view.tsv"
	done
done
run lock.diff-real.txt diff --no-local-files real.perfcap lock.perfcap
run real.diff-self.txt diff --no-local-files real.perfcap real.perfcap
run real.diff-self.json diff --json --no-local-files real.perfcap real.perfcap
run samples.diff-events.txt diff --no-local-files samples.perfcap events.perfcap

if [ $update = 1 ]; then
	rm -rf "$expected" && mkdir -p "$expected" && cp out/*.* "$expected/"
	echo "pin.sh: wrote $(ls "$expected" | wc -l) files to $expected"
	exit 0
fi
fail=0
for f in "$expected"/*; do
	name=$(basename "$f")
	if ! cmp -s "$f" "out/$name"; then
		echo "FAIL: $name differs from tests/golden/expected/$name:"
		diff -u "$f" "out/$name" | head -40
		fail=1
	fi
done
for f in out/*.*; do
	[ -e "$expected/$(basename "$f")" ] || { echo "FAIL: no expected file for $(basename "$f")"; fail=1; }
done
[ $fail = 0 ] && echo "pin.sh: $(ls "$expected" | wc -l) outputs identical"
exit $fail
