#!/bin/bash
# bad_input.sh - every kind of bad input gets one clear error line on stderr
# and a non-zero exit, never a crash (exit >= 128 means a signal) or a hang.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${PERFCAP_FIXTURES:?}"
make_tmpdir
failures=0

# expect_error WANT_REGEX CMD... : non-zero exit, no signal, message matches
expect_error() {
	local want=$1; shift
	timeout 60 "$@" > "$TMP/out" 2> "$TMP/err"
	local rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
		echo "FAIL: '$*' exited $rc (want a clean error)"; failures=$((failures + 1)); return
	fi
	if ! grep -Eqi -- "$want" "$TMP/err"; then
		echo "FAIL: '$*': stderr lacks /$want/:"; sed 's/^/    /' "$TMP/err"
		failures=$((failures + 1)); return
	fi
	echo "ok: $* -> exit $rc: $(head -1 "$TMP/err")"
}

# --- analyzer: files it cannot use ---------------------------------------
echo "just some text" > "$TMP/text.perfcap"
expect_error "not a perfcap capture" "$PERFCAP_ANALYZE" info "$TMP/text.perfcap"
expect_error "not a perfcap capture" "$PERFCAP_ANALYZE" report "$TMP/text.perfcap"
: > "$TMP/empty.perfcap"
expect_error "not a perfcap capture" "$PERFCAP_ANALYZE" report "$TMP/empty.perfcap"
expect_error "no such file" "$PERFCAP_ANALYZE" info "$TMP/missing.perfcap"
cp "$PERFCAP_FIXTURES/golden-v1.perfcap" "$TMP/newer.perfcap"
printf '\x02\x00' | dd of="$TMP/newer.perfcap" bs=1 seek=8 conv=notrunc status=none
expect_error "newer" "$PERFCAP_ANALYZE" info "$TMP/newer.perfcap"
expect_error "usage|unknown|invalid" "$PERFCAP_ANALYZE" frobnicate
expect_error "usage|missing|capture" "$PERFCAP_ANALYZE" report

# --- analyzer: damaged captures still yield their complete chunks --------
# (exit 3: analyzed, but the capture is damaged; the damage is named)
size=$(stat -c %s "$PERFCAP_FIXTURES/golden-v1.perfcap")
head -c $((size - 5)) "$PERFCAP_FIXTURES/golden-v1.perfcap" > "$TMP/cut.perfcap"
expect_error "cut|truncat|end marker" "$PERFCAP_ANALYZE" info "$TMP/cut.perfcap"
grep -q "samples\|SAMPLE\|sample" "$TMP/out" || { echo "FAIL: info of a cut file printed no content"; failures=$((failures + 1)); }
cp "$PERFCAP_FIXTURES/golden-v1.perfcap" "$TMP/flip.perfcap"
printf '\xff' | dd of="$TMP/flip.perfcap" bs=1 seek=200 conv=notrunc status=none
expect_error "checksum|unreadable|damage" "$PERFCAP_ANALYZE" info "$TMP/flip.perfcap"

# --- recorder: parameters -------------------------------------------------
for f in 0 -5 abc 99999999 1e3; do
	expect_error "freq|-F|frequency" "$PERFCAP_RECORD" -F "$f" -o "$TMP/f.perfcap" -a -d 1
done
expect_error "duration|-d" "$PERFCAP_RECORD" -d -3 -o "$TMP/d.perfcap" -a
expect_error "no such process|not found|does not exist" "$PERFCAP_RECORD" -p 999999999 -o "$TMP/p.perfcap" -d 1
expect_error "pid" "$PERFCAP_RECORD" -p 12abc -o "$TMP/p.perfcap" -d 1
expect_error "target|one of|-p|-a" "$PERFCAP_RECORD" -o "$TMP/none.perfcap" -d 1
expect_error "No such file|cannot|directory" "$PERFCAP_RECORD" -o "$TMP/no/such/dir/x.perfcap" -a -d 1
touch "$TMP/exists.perfcap"
expect_error "exists|-f" "$PERFCAP_RECORD" -o "$TMP/exists.perfcap" -a -d 1
[ -s "$TMP/exists.perfcap" ] && { echo "FAIL: existing file was modified"; failures=$((failures + 1)); }

# --- recorder: privileges -------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	chmod 755 "$TMP"
	expect_error "root|CAP_BPF|permission|privilege" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$PERFCAP_RECORD" -o "$TMP/np.perfcap" -a -d 1
fi

[ $failures -eq 0 ] || fail "$failures bad-input case(s) misbehaved"
echo PASS
