# syscall_lib.sh - helpers of the syscall and mux tests (sourced after
# lib.sh): start a workload, attach the recorder to it, read the dump.

# record_rw_count OUT N K [RECORDER OPTIONS...]: runs rw_count N K under the
# recorder attached with -p (so the loader's own reads are not in it), and
# leaves the workload's "tid=.. zero_fd=.. null_fd=.." line in $TMP/wl.out
# and OUT's records in OUT.dump.
record_rw_count() {
	out=$1 n=$2 k=$3
	shift 3
	# rec.err goes too: the background recorder truncates it only when it
	# starts, and a previous run's "recording pid" line must not count
	rm -f "$TMP/go" "$out" "$TMP/rec.err"
	"$RW_COUNT" "$n" "$k" "$TMP/go" > "$TMP/wl.out" &
	wl=$!
	wait_for "$TMP/wl.out" "tid=" 10 || fail "rw_count did not start"
	"$PERFCAP_RECORD" "$@" -p "$wl" -o "$out" 2> "$TMP/rec.err" &
	rec=$!
	if ! wait_for "$TMP/rec.err" "recording pid" 30; then
		cat "$TMP/rec.err" >&2
		kill "$wl" 2>/dev/null
		fail "the recorder did not attach"
	fi
	touch "$TMP/go"
	wait "$wl" || fail "rw_count failed"
	wait "$rec" || { cat "$TMP/rec.err" >&2; fail "perfcap-record failed"; }
	dump "$out"
}

# dump OUT: OUT's SYSCALL records into OUT.dump, one "syscall TID NR ARG0
# ARG1 ARG2 RET DURATION USTACK" line each (capcheck syscalls).
dump() {
	"$CAPCHECK" syscalls "$1" > "$1.tmp" || fail "cannot read $1"
	sed 's/^/syscall /' "$1.tmp" > "$1.dump"
}

# field NAME: a value of the workload's line ("tid", "zero_fd", ...)
field() { tr ' ' '\n' < "$TMP/wl.out" | sed -n "s/^$1=//p"; }

# kv CAPTURE meta|stat KEY: the value, or "missing"
kv() { "$CAPCHECK" "$2" "$1" "$3" 2>/dev/null || echo missing; }
