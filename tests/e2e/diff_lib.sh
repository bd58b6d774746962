# diff_lib.sh - shared helpers of the diff end-to-end tests (sourced after
# lib.sh). Each test records diff_workload with and without one injected
# regression and checks what "perfcap-analyze diff" finds.
#
# Thresholds: the tests run on a shared 2-CPU virtual machine where CPU
# steal and neighbouring jobs move CPU time per request and blocking
# latencies by up to ~20% between two identical runs (measured while
# writing these tests: a caller's total CPU per request -19.7%, kernel
# sleep-path CPU 3 -> 25 us per request). So the diffs here use
# --min-effect 30% and --min-impact 5% (of the base's mean request
# latency) as the minimum practical effect; every injected regression is
# far above them (+100% CPU, +5 ms per lock wait, +1 ms and +2 ms per
# request). Acceptance: the injected cause ranked first, significant, in
# the right direction, its size within 25% of the workload's own ground
# truth; sides swapped give the same finding with the opposite sign.

: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${DIFF_WORKLOAD:?}"
DIFF_THRESHOLDS="--min-effect 30% --min-impact 5%"
EVENTS=cpu,sched,syscall,net,lock,block

# record NAME SECONDS [WORKLOAD FLAGS...]: $TMP/NAME.perfcap, its ground
# truth in $TMP/NAME.out
record() {
	local name=$1 seconds=$2
	shift 2
	timeout 60 "$PERFCAP_RECORD" -e $EVENTS -F 999 -o "$TMP/$name.perfcap" -- \
		"$DIFF_WORKLOAD" --seconds "$seconds" --dir "$TMP" "$@" \
		> "$TMP/$name.out" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "recording $name failed"; }
	echo "$name: $(tr '\n' ' ' < "$TMP/$name.out")"
}

# diff_start: root and BTF or skip, $TMP, and the baseline run
# $TMP/base.perfcap (3 s)
diff_start() {
	require_bpf
	make_tmpdir
	record base 3
}

# truth NAME KEY: a ground-truth value the workload printed
truth() { sed -n "s/^$2=//p" "$TMP/$1.out"; }

# diff_json OUT BASE NEW [OPTIONS...]: the JSON diff of two captures
diff_json() {
	local out=$1 base=$2 new=$3
	shift 3
	"$PERFCAP_ANALYZE" diff --json $DIFF_THRESHOLDS "$@" "$TMP/$base.perfcap" \
		"$TMP/$new.perfcap" > "$TMP/$out.json" 2> "$TMP/$out.err" ||
		{ cat "$TMP/$out.err"; fail "diff $base $new failed"; }
}

# top FILE: "kind|name|direction|effect|delta|impact_ns|appeared|disappeared|significant|rank"
# of the first finding of a JSON diff, and the summary on stderr
top() {
	python3 - "$TMP/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kind"] == "diff"
print(d["summary"], file=sys.stderr)
for w in d["warnings"]:
    print("warning:", w, file=sys.stderr)
f = d["findings"][0] if d["findings"] and d["findings"][0]["significant"] else None
if f is None:
    print("none")
else:
    print("|".join(str(f[k]) for k in ("kind", "name", "direction", "effect", "delta",
          "impact_ns", "appeared", "disappeared", "significant", "rank")))
PY
}

# field N LINE: the Nth |-separated field of a top line
field() { echo "$2" | cut -d'|' -f"$1"; }

# ratio_ok VALUE WANT: VALUE within 25% of WANT (floats)
ratio_ok() {
	python3 -c "import sys; v, w = float(sys.argv[1]), float(sys.argv[2]); \
sys.exit(0 if w != 0 and abs(v - w) <= 0.25 * abs(w) else 1)" "$1" "$2"
}

# expect_top FILE KIND NAME_PREFIX DIRECTION: the first finding is KIND,
# significant, ranked 1, named NAME_PREFIX..., going DIRECTION
expect_top() {
	local line
	line=$(top "$1")
	echo "top of $1: $line"
	[ "$(field 1 "$line")" = "$2" ] || fail "$1: top finding is not a $2: $line"
	case "$(field 2 "$line")" in "$3"*) ;; *) fail "$1: top finding is not $3: $line" ;; esac
	[ "$(field 3 "$line")" = "$4" ] || fail "$1: top finding does not go $4: $line"
	[ "$(field 9 "$line")" = True ] || fail "$1: top finding not significant: $line"
	[ "$(field 10 "$line")" = 1 ] || fail "$1: top finding not ranked 1: $line"
	TOP=$line
}

# expect_exit STATUS ARGS...: perfcap-analyze diff ARGS exits STATUS
expect_exit() {
	local want=$1 got
	shift
	"$PERFCAP_ANALYZE" diff $DIFF_THRESHOLDS "$@" > "$TMP/exit.out" 2> "$TMP/exit.err"
	got=$?
	[ "$got" = "$want" ] || { cat "$TMP/exit.out" "$TMP/exit.err"; \
		fail "diff $* exited $got, expected $want"; }
}
