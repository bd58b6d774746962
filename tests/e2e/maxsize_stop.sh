#!/bin/bash
# maxsize_stop.sh - --max-size end to end: a busy system-wide recording
# stops by itself before the file passes the limit, the capture is intact
# (END present) and STATS says why it stopped; bad sizes are one clear
# error line.
set -u
. "$(dirname "$0")/lib.sh"
: "${CPU_HOGS:?}" "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
make_tmpdir

for bad in 10K 12Q -5M ""; do
	"$PERFCAP_RECORD" --max-size "$bad" -a -d 1 -o "$TMP/bad.perfcap" 2> "$TMP/err" \
		&& fail "--max-size '$bad' was accepted"
	[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "invalid --max-size" "$TMP/err" \
		|| { cat "$TMP/err"; fail "--max-size '$bad': not one clear error line"; }
done
echo "ok: bad sizes refused: $(cat "$TMP/err")"

require_bpf
LIMIT=$((200 * 1024))
# two busy loops so that both CPUs sample and switch
"$CPU_HOGS" 60 0 & "$CPU_HOGS" 60 1 &   # busy CPUs; they end by themselves
timeout 60 "$PERFCAP_RECORD" --max-size 200K -a -e cpu,sched -F 999 \
	-o "$TMP/ms.perfcap" 2> "$TMP/err"
rc=$?
kill $(jobs -p) 2> /dev/null; wait 2> /dev/null
cat "$TMP/err"
[ $rc -eq 0 ] || fail "perfcap-record exited $rc (want 0: stopped by itself at --max-size)"
grep -Eq "stopped at --max-size 200 KiB after [0-9.]+ s" "$TMP/err" || fail "no stop message"
size=$(stat -c %s "$TMP/ms.perfcap")
[ "$size" -le $LIMIT ] || fail "file is $size bytes, above --max-size $LIMIT"
"$PERFCAP_ANALYZE" info "$TMP/ms.perfcap" > "$TMP/info" || fail "perfcap-analyze info failed"
grep -q "status *intact, end marker present" "$TMP/info" || fail "capture not intact"
grep -Eq "^ *record.stop_reason +max-size$" "$TMP/info" || fail "STATS record.stop_reason != max-size"
grep -Eq "^ *record.max_size +$LIMIT$" "$TMP/info" || fail "META record.max_size missing"
grep -Eq "^ *symbols +[1-9]" "$TMP/info" || echo "note: the SYMBOLS did not fit"
echo "ok: stopped at $size of $LIMIT bytes;" \
	"$(grep -E '^ *record.max_size\.(chunks|events)_dropped' "$TMP/info" | tr -s ' ' | tr '\n' ';')"

# every other stop records its reason too
"$PERFCAP_RECORD" -e sched -o "$TMP/cmd.perfcap" -- true 2> /dev/null || fail "recording 'true' failed"
"$PERFCAP_ANALYZE" info "$TMP/cmd.perfcap" | grep -Eq "^ *record.stop_reason +command-exit$" \
	|| fail "stop_reason of a finished command is not command-exit"
"$PERFCAP_RECORD" -a -e sched -d 0.5 -o "$TMP/d.perfcap" 2> /dev/null || fail "-d 0.5 failed"
"$PERFCAP_ANALYZE" info "$TMP/d.perfcap" | grep -Eq "^ *record.stop_reason +duration$" \
	|| fail "stop_reason of -d is not duration"
echo "ok: stop reasons command-exit and duration"
echo PASS
