#!/bin/bash
# flight_recorder.sh - --flight-recorder end to end: a long run keeps only
# the last ~64 KiB of compressed events; SIGUSR1 writes the capture and
# stops. The file is intact, its events start well after the recording
# did, the dropped chunks are counted, and the report still names the
# workload's functions (their stacks and process were seen long before the
# window and must still be in the file).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CPU_SPLIT:?}"
require_bpf
make_tmpdir
RUN_S=${FLIGHT_RUN_S:-20} # 64 KiB holds ~12 s of this workload's events

"$PERFCAP_RECORD" --flight-recorder 64K -F 999 -o "$TMP/fl.perfcap" -- "$CPU_SPLIT" 60 \
	> /dev/null 2> "$TMP/err" & rec=$!
sleep "$RUN_S"
kill -USR1 $rec
wait $rec
rc=$?
cat "$TMP/err"
[ $rc -eq 0 ] || fail "perfcap-record exited $rc after SIGUSR1"
grep -q "flight recorder: kept the last" "$TMP/err" || fail "no flight recorder summary"

"$PERFCAP_ANALYZE" info "$TMP/fl.perfcap" > "$TMP/info" || fail "perfcap-analyze info failed"
key() { awk -v k="$1" '$1 == k { print $2; exit }' "$TMP/info"; }
grep -q "status *intact, end marker present" "$TMP/info" || fail "capture not intact"
[ "$(key record.mode)" = flight-recorder ] || fail "META record.mode"
[ "$(key flight.size)" = 65536 ] || fail "META flight.size"
[ "$(key record.stop_reason)" = flight-dump ] || fail "STATS record.stop_reason"
dropped=$(key flight.chunks_dropped)
[ "${dropped:-0}" -gt 0 ] || fail "flight.chunks_dropped is '${dropped}', want > 0"
[ "$(key flight.events_dropped)" -gt 0 ] || fail "flight.events_dropped is 0"
# the earliest t_start of the EVENTS chunks written (the "time span" of
# info also covers PROC records, read when the process was first seen)
start=$(key record.start_ns)
first=$(key flight.window_start_ns)
[ "${first:-0}" -gt "$start" ] || fail "flight.window_start_ns '$first' <= record.start_ns $start"
late_ms=$(( (first - start) / 1000000 ))
[ $late_ms -ge 3000 ] || fail "events start ${late_ms} ms after record.start_ns, want >= 3 s"
echo "ok: window starts ${late_ms} ms after the start; $dropped chunks" \
	"($(key flight.events_dropped) events) dropped, counted"

"$PERFCAP_ANALYZE" report "$TMP/fl.perfcap" > "$TMP/report" 2>&1 || fail "report failed"
grep -q burn_a "$TMP/report" && grep -q burn_b "$TMP/report" \
	|| { head -40 "$TMP/report"; fail "the report does not name burn_a and burn_b"; }
echo "ok: report names burn_a and burn_b"
echo PASS
