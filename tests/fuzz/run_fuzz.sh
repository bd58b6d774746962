#!/bin/bash
# run_fuzz.sh TARGET SEED_DIR [LIBFUZZER_ARGS...] - runs one libFuzzer
# target for FUZZ_SECONDS (default 20) on a copy of its seed corpus (the
# checked-in corpus is never written), under the build's ASan/UBSan.
# Exits non-zero on any crash, leak, timeout or sanitizer report; the
# reproducer (crash-*, leak-*, timeout-*) is kept in FUZZ_ARTIFACTS
# (default: a temporary directory, named on stderr). FUZZ_SEED (default 1)
# fixes libFuzzer's random seed, so that the smoke run in the test suite
# explores the same inputs on every run and a landing never fails on a
# finding that luck brought to one run only (long runs: FUZZ_SEED=0, random).
set -u
target=$1 seeds=$2
shift 2
secs=${FUZZ_SECONDS:-20}
work=$(mktemp -d /tmp/perfcap-fuzzrun.XXXXXX)
artifacts=${FUZZ_ARTIFACTS:-$work/artifacts}
mkdir -p "$work/corpus" "$artifacts"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$target" -max_total_time="$secs" -seed="${FUZZ_SEED:-1}" -timeout=25 -rss_limit_mb=2048 -max_len=65536 \
	-print_final_stats=1 -artifact_prefix="$artifacts/" "$@" \
	"$work/corpus" "$seeds" 2>&1 | grep -Ev '^#[0-9]+.*(NEW|REDUCE|pulse)|^perfcap-analyze: '
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "FAIL: $(basename "$target") exited $rc; reproducers in $artifacts" >&2
	ls -l "$artifacts" >&2
	exit 1
fi
rm -rf "$work"
echo "PASS: $(basename "$target") ran ${secs}s without a finding"
