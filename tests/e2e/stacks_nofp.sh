#!/bin/bash
# stacks_nofp.sh - issue 11, end to end with real eBPF: nofp_chain and its
# library are built -O2 -fomit-frame-pointer, so frame-pointer walks break;
# with the default --stack-copy the capture carries user stack copies and
# the modules' .eh_frame. At least 90% of the workload's CPU samples must
# show the exact chain main;level_a;level_b;lib_c in report --folded, and
# at least 90% of its unwound stacks must be complete ("end"). Then the
# binary and the library are deleted: the capture alone (--no-local-files)
# must give the same chains.
# Off-CPU (issue 11, part 2): the workload blocks in nanosleep at its
# deepest level; recorded with -e cpu,sched, at least 90% of its blocked
# intervals must carry the unwound chain main;level_a;level_b;lib_c;...
# nanosleep, complete, from the copy taken at the switch-out.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${NOFP_CHAIN:?}" "${NOFP_LIB:?}"
require_bpf
make_tmpdir

cp "$NOFP_CHAIN" "$TMP/nofp_chain"
cp "$NOFP_LIB" "$TMP/$(basename "$NOFP_LIB")"
LD_LIBRARY_PATH="$TMP" "$PERFCAP_RECORD" -e cpu,sched -F 199 -o "$TMP/run.perfcap" -- \
	"$TMP/nofp_chain" 3 40 10 > "$TMP/record.out" 2> "$TMP/record.err" \
	|| { cat "$TMP/record.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/record.err"

# share (percent) of the workload's samples whose stack has the chain
chain_pct() {
	awk '
		$1 ~ /^nofp_chain;/ {
			n = $NF; total += n
			if ($0 ~ /;main;level_a;level_b;lib_c(;|[ ])/) hit += n
		}
		END { if (total == 0) print -1; else printf "%d %d\n", 100 * hit / total, total }' "$1"
}

check_chain() {   # $1 = label, remaining = extra analyze args
	local label=$1; shift
	"$PERFCAP_ANALYZE" report "$@" --folded "$TMP/run.perfcap" > "$TMP/folded" \
		|| fail "$label: report --folded failed"
	read -r pct total < <(chain_pct "$TMP/folded")
	echo "$label: ${pct}% of ${total} nofp_chain samples have main;level_a;level_b;lib_c"
	[ "${total:-0}" -ge 50 ] || fail "$label: only ${total:-0} samples"
	[ "$pct" -ge 90 ] || { head -20 "$TMP/folded"; fail "$label: chain in ${pct}% < 90%"; }
}

check_complete() {   # $1 = label, remaining = extra import args
	local label=$1; shift
	rm -f "$TMP/run.db"
	"$PERFCAP_ANALYZE" import "$@" "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null \
		|| fail "$label: import failed"
	local complete
	complete=$(sqlite3 "$TMP/run.db" "
		SELECT CAST(100.0 * SUM(u.stop = 'end') / COUNT(*) AS INT)
		FROM samples s JOIN user_stack_unwinds u ON u.stack_id = s.ustack_id
		WHERE s.pid IN (SELECT pid FROM processes WHERE comm = 'nofp_chain')")
	echo "$label: ${complete:-?}% of nofp_chain samples unwound to the outermost frame"
	[ "${complete:-0}" -ge 90 ] || fail "$label: complete stacks ${complete:-0}% < 90%"
}

# blocked intervals of the workload, and how many show the exact chain
# from a complete unwind
offcpu_chain() {
	"$PERFCAP_ANALYZE" query "$TMP/run.db" "
		WITH chain AS (
		  SELECT o.ustack_id AS id, (SELECT group_concat(name, ';') FROM (
		      SELECT f.name FROM stack_frames sf JOIN frames f USING (frame_id)
		      WHERE sf.stack_id = o.ustack_id ORDER BY sf.position DESC)) AS c
		  FROM offcpu o WHERE o.state != 0
		    AND o.pid IN (SELECT pid FROM processes WHERE comm = 'nofp_chain'))
		SELECT COUNT(*), SUM(c LIKE '%;main;level_a;level_b;lib_c;%nanosleep%'
		    AND id IN (SELECT stack_id FROM user_stack_unwinds WHERE stop = 'end'))
		FROM chain" | tail -1
}

check_offcpu() {   # $1 = label, remaining = extra import args
	local label=$1; shift
	rm -f "$TMP/run.db"
	"$PERFCAP_ANALYZE" import "$@" "$TMP/run.perfcap" -o "$TMP/run.db" > /dev/null \
		|| fail "$label: import failed"
	local total hit
	read -r total hit < <(offcpu_chain)
	echo "$label: ${hit:-0} of ${total:-0} blocked intervals show main;level_a;level_b;lib_c;..nanosleep"
	[ "${total:-0}" -ge 20 ] || fail "$label: only ${total:-0} blocked intervals"
	[ $((100 * ${hit:-0} / total)) -ge 90 ] || fail "$label: off-CPU chain in < 90%"
}

# the report's data quality says the same (user_stacks, docs/report-json.md)
check_quality() {
	"$PERFCAP_ANALYZE" report --json "$TMP/run.db" > "$TMP/report.json" \
		|| fail "report --json failed"
	python3 - "$TMP/report.json" <<'PY' || fail "user_stacks in the report"
import json, sys
u = json.load(open(sys.argv[1]))["user_stacks"]
proc = [p for p in u["processes"] if p["comm"] == "nofp_chain"][0]["stacks"]
print("report: complete share cpu %.3f offcpu %.3f nofp_chain %.3f, stops %s" %
      (u["cpu"]["complete_share"], u["offcpu"]["complete_share"],
       proc["complete_share"], u["stops"]))
assert proc["complete_share"] >= 0.9 and proc["dwarf"] >= 0.9 * proc["stacks"]
assert u["offcpu"]["complete_share"] >= 0.9
assert u["stops"].get("end", 0) >= 0.9 * sum(u["stops"].values())
PY
}

check_chain "with binaries"
check_offcpu "with binaries"
check_quality
command -v sqlite3 > /dev/null && check_complete "with binaries"
rm -f "$TMP/nofp_chain" "$TMP/$(basename "$NOFP_LIB")"
check_chain "binaries deleted" --no-local-files
check_offcpu "binaries deleted" --no-local-files
command -v sqlite3 > /dev/null && check_complete "binaries deleted" --no-local-files
echo "PASS"
