#!/bin/sh
# block_fsync.sh - the block source: N fsync'd 4 KiB writes to a file on a
# real block device (/var/tmp) show at least N write requests attributed
# to the writer thread, each with a nonzero service time.
#
#  1. `-e block -- fsync_writes`: the pid filter is applied to the
#     submitter, so every BLOCK record is the writer's (the journal thread's
#     requests are counted as block.untraced, not recorded);
#  2. `-a` (no filter) while fsync_writes runs: the writer's requests are
#     still attributed to it, and other submitters appear under their own
#     pids (nothing is given to the task that happened to complete it).
. "$(dirname "$0")/lib.sh"

require_bpf
make_tmpdir
N=50
FILE=/var/tmp/perfcap-block-e2e.$$

[ -x "$FSYNC_WRITES" ] && [ -x "$BLOCK_CHECK" ] || fail "FSYNC_WRITES/BLOCK_CHECK not set"

# awk: the write requests (op & 0xff == REQ_OP_WRITE, bytes > 0) of TID,
# and how many of them have a nonzero service time.
count_writes() { # DUMP TID -> "writes with_service"
	awk -v tid="$2" '$1 == "block" && $3 == tid && $5 % 256 == 1 && $7 > 0 {
		n++; if ($9 > 0) s++ } END { print n + 0, s + 0 }' "$1"
}

stat_of() { awk -v k="$2" '$1 == "stats" && $2 == k { print $3 }' "$1"; }

# ---- 1. the command alone ---------------------------------------------------
"$PERFCAP_RECORD" -e block -o "$TMP/cmd.perfcap" -- "$FSYNC_WRITES" "$FILE" $N \
	> "$TMP/cmd.out" 2> "$TMP/cmd.err" || { cat "$TMP/cmd.err"; fail "record (command)"; }
read -r _ PID TID < "$TMP/cmd.out"
"$BLOCK_CHECK" "$TMP/cmd.perfcap" > "$TMP/cmd.dump" || fail "block_check"
set -- $(count_writes "$TMP/cmd.dump" "$TID")
echo "command: $1 write requests of writer tid $TID, $2 with service time > 0"
[ "$1" -ge $N ] || fail "expected >= $N write requests of tid $TID, got $1"
[ "$2" -eq "$1" ] || fail "write requests without service time: $(($1 - $2))"
others=$(awk -v pid="$PID" '$1 == "block" && $2 != pid' "$TMP/cmd.dump" | wc -l)
[ "$others" -eq 0 ] || fail "$others BLOCK records of other processes despite the filter"
grep -q '^meta sources .*block' "$TMP/cmd.dump" || fail "META sources lacks block"
for k in block.started block.untraced block.unmatched block.flush_internal; do
	v=$(stat_of "$TMP/cmd.dump" $k)
	[ -n "$v" ] || fail "STATS lacks $k"
	echo "  $k $v"
done
[ "$(stat_of "$TMP/cmd.dump" block.started)" -ge $N ] || fail "block.started < $N"
[ "$(stat_of "$TMP/cmd.dump" block.lost.kernel)" = 0 ] || fail "kernel losses"

# The same count through the analyzer's SQL, once it has `query`.
if "$PERFCAP_ANALYZE" --help 2>&1 | grep -q '^ *query '; then
	q=$("$PERFCAP_ANALYZE" query "$TMP/cmd.perfcap" "SELECT count(*) FROM block_io WHERE \
		tid = $TID AND (op & 255) = 1 AND bytes > 0 AND service_ns > 0" | grep -Eo '[0-9]+' | tail -1)
	echo "query: $q write requests of tid $TID in block_io"
	[ "${q:-0}" -ge $N ] || fail "perfcap-analyze query: expected >= $N, got '$q'"
fi

# ---- 2. the whole system ----------------------------------------------------
"$PERFCAP_RECORD" -e block -a -d 30 -o "$TMP/all.perfcap" 2> "$TMP/all.err" &
rec=$!
i=0
until grep -q recording "$TMP/all.err"; do
	i=$((i + 1))
	[ $i -le 100 ] || { kill $rec; fail "the recorder did not start"; }
	sleep 0.1
done
"$FSYNC_WRITES" "$FILE.a" $N > "$TMP/all.out" || fail "fsync_writes failed"
kill -INT $rec
wait $rec || { cat "$TMP/all.err"; fail "record (-a)"; }
read -r _ PID TID < "$TMP/all.out"
"$BLOCK_CHECK" "$TMP/all.perfcap" > "$TMP/all.dump" || fail "block_check"
set -- $(count_writes "$TMP/all.dump" "$TID")
echo "system: $1 write requests of writer tid $TID, $2 with service time > 0"
[ "$1" -ge $N ] || fail "expected >= $N write requests of tid $TID, got $1"
total=$(grep -c '^block ' "$TMP/all.dump")
echo "system: $total BLOCK records in all"
echo "OK"
