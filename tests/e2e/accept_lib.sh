# accept_lib.sh - shared by the acceptance tests accept_*.sh (sourced,
# after lib.sh): each records a workload that injects one cause and prints
# its own measured ground truth, then checks what `perfcap-analyze report
# --json` says about it (docs/testing.md, "Acceptance scenarios").

# truth FILE KEY -> the value of KEY=VALUE in the workload's output
truth() {
	local v
	v=$(grep -o "$2=[0-9.]*" "$1" | head -1 | cut -d= -f2)
	[ -n "$v" ] || { cat "$1"; fail "the workload printed no $2"; }
	echo "$v"
}

# record OUT.perfcap LOG RECORD_ARGS... -- COMMAND: perfcap-record, the
# command's stdout in LOG, failing with the recorder's stderr on error
record() {
	local out=$1 log=$2
	shift 2
	timeout 60 "$PERFCAP_RECORD" --strict -o "$out" "$@" > "$log" 2> "$out.err" ||
		{ cat "$out.err" "$log"; fail "perfcap-record failed"; }
}

# check_report CAPTURE KIND KEY_NAME UNIT TRUTH [PYTHON]: the report's first
# cause is KIND with key number KEY_NAME (UNIT) within 25% of TRUTH; the
# report has its scope (sources, a positive duration) and a data-quality
# list. PYTHON, if given, runs after with `r` (the report) and `c` (the
# first cause) for scenario checks.
check_report() {
	local cap=$1
	"$PERFCAP_ANALYZE" report --json "$cap" > "$cap.json" 2> "$cap.report.err" ||
		{ cat "$cap.report.err"; fail "perfcap-analyze report --json failed"; }
	python3 - "$cap.json" "$2" "$3" "$4" "$5" "${6:-}" <<'PY' || fail "report check failed"
import json, sys
path, kind, key, unit, truth, extra = sys.argv[1:7]
r = json.load(open(path))
truth = float(truth)
d = r["diagnosis"]
print("summary:", r["summary"])
for c in d["causes"]:
    print("cause %d %s score %.3f %s=%s %s" % (c["rank"], c["kind"], c["score"],
          c["key_number"]["name"], c["key_number"]["value"], c["key_number"]["unit"]))
ok = True
def check(cond, what):
    global ok
    print(("ok:   " if cond else "FAIL: ") + what)
    ok = ok and cond
check(r.get("kind") == "report" and r.get("report_version") == 1, "a report, version 1")
s = r.get("scope") or {}
check(len(s.get("sources") or []) > 0 and (s.get("duration_ns") or 0) > 0,
      "scope names the sources (%s) and a duration (%s ns)" % (s.get("sources"), s.get("duration_ns")))
dq = r.get("data_quality")
check(isinstance(dq, list) and len(dq) > 0 and all("source" in q and "key" in q for q in dq),
      "data_quality lists %d counters" % (len(dq) if isinstance(dq, list) else -1))
check(len(d["causes"]) > 0, "at least one cause")
if not d["causes"]:
    sys.exit(1)
c = d["causes"][0]
k = c["key_number"]
check(c["kind"] == kind, "causes[0].kind is %s (got %s)" % (kind, c["kind"]))
check(k["name"] == key and k["unit"] == unit, "key number %s in %s (got %s in %s)" % (key, unit, k["name"], k["unit"]))
err = abs(k["value"] - truth) / truth if truth else float("inf")
check(err <= 0.25, "key number %.6g within 25%% of the measured %.6g (off by %.1f%%)" % (k["value"], truth, 100 * err))
if extra:
    exec(extra)
sys.exit(0 if ok else 1)
PY
}
