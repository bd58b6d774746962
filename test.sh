#!/bin/bash
# test.sh - runs the whole test suite: installs what is missing, builds with
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs every test
# (unit, golden fixtures, end-to-end with real eBPF when run as root).
# Set PERFCAP_REQUIRE_BPF=1 to make eBPF tests fail instead of skip when
# eBPF is unavailable (CI does).
set -uo pipefail
cd "$(dirname "$0")"
if [ "$(id -u)" = 0 ]; then
	.ci/install-deps || exit 1
fi
builddir=build-test
if [ ! -f $builddir/build.ninja ]; then
	meson setup $builddir -Db_sanitize=address,undefined -Db_lundef=false \
		--buildtype=debugoptimized -Dwerror=true > $builddir.setup.log 2>&1 \
		|| { cat $builddir.setup.log; exit 1; }
fi
ninja -C $builddir || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
meson test -C $builddir --print-errorlogs --num-processes 2 "$@"
rc=$?
# Fuzz smoke (tests/fuzz, docs/testing.md): each libFuzzer target runs
# FUZZ_SECONDS (20) under ASan/UBSan in a clang build. PERFCAP_FUZZ=0 skips.
if [ "${PERFCAP_FUZZ:-1}" = 1 ] && [ $# -eq 0 ] && command -v clang > /dev/null; then
	fuzzdir=build-fuzz
	# -Dwerror=false: clang warns about GNU extensions gcc's build allows
	[ -f $fuzzdir/build.ninja ] || CC=clang meson setup $fuzzdir -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dwerror=false \
		> $fuzzdir.setup.log 2>&1 || { cat $fuzzdir.setup.log; exit 1; }
	meson test -C $fuzzdir --print-errorlogs --suite fuzz || rc=1
fi
# One closing line any CI can read.
python3 - "$builddir/meson-logs/testlog.json" <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0, "EXPECTEDFAIL": 0, "UNEXPECTEDPASS": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    counts[r] = counts.get(r, 0) + 1
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"] + counts["UNEXPECTEDPASS"]
print(f"{counts['OK'] + counts['EXPECTEDFAIL']} passed, {failed} failed, {counts['SKIP']} skipped")
PY
exit $rc
