#!/bin/bash
# gc_go.sh - Go's collector pauses from `perfcap-record -e gc`, end to
# end: a Go program built here with Debian's golang-go (stripped with
# -ldflags='-s -w', and unstripped) turns automatic collection off
# (debug.SetGCPercent(-1): no collection but its own), keeps a heap alive,
# calls runtime.GC() N times and reads its own account of them
# (debug.ReadGCStats: NumGC, PauseTotal; no stop of the world itself), with
# one runtime.ReadMemStats inside, which stops the world for no collection.
# Checks, per build:
#   - the runtime made exactly N collections in its counting window;
#   - gc_pauses has exactly 2 x N pauses of runtime go starting in that
#     window (a collection stops the world twice: sweep termination and
#     mark termination), all paired (no gc.*_unmatched), and the
#     ReadMemStats stop counted apart (gc.other_stops >= 1), not a pause;
#   - their total is within 20% of the runtime's own PauseTotal delta;
#   - the probes are entry probes (no uretprobe on Go code), META
#     probe.N.origin gc:go.
# Then: the program run through a shell (sh -c), which execs it after the
# recording started: its probes are placed at its exec (described in
# STATS) and the same counts hold; `-e uprobe:STRIPPED:main.work` counts
# every call through the pclntab (entry only), `(ret)` on it is refused
# with one line, and -e gc on a process with no runtime fails with one.
# Skips loudly (exit 77) without go.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${CAPCHECK:?}"
command -v go > /dev/null || { echo "SKIP: go is not installed (apt-get install golang-go)" >&2; exit 77; }
require_bpf
make_tmpdir

N=${GC_COLLECTIONS:-30}
LIVE=${GC_LIVE:-100000}

mkdir -p "$TMP/src"
cat > "$TMP/src/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// CLOCK_MONOTONIC in ns: the recorder's clock
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

type node struct {
	next *node
	pad  [6]int64
}

var keep []*node

//go:noinline
func work(n int) *node {
	var head *node
	for j := 0; j < n; j++ {
		head = &node{next: head}
	}
	return head
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	live, _ := strconv.Atoi(os.Args[2])
	settle, _ := time.ParseDuration(os.Args[3])
	debug.SetGCPercent(-1) // no collection but ours
	for i := 0; i < live; i++ {
		keep = append(keep, &node{})
	}
	runtime.GC()
	time.Sleep(settle) // a late-placed probe is in place before the window
	var before, after debug.GCStats
	var ms runtime.MemStats
	debug.ReadGCStats(&before)
	t0 := monotonic()
	for i := 0; i < n; i++ {
		work(20000)
		runtime.GC()
		if i == n/2 {
			runtime.ReadMemStats(&ms) // stops the world, collects nothing
		}
	}
	t1 := monotonic()
	debug.ReadGCStats(&after)
	fmt.Printf("collections=%d pause_ns=%d t0=%d t1=%d\n", after.NumGC-before.NumGC,
		int64(after.PauseTotal-before.PauseTotal), t0, t1)
}
EOF
(cd "$TMP/src" && export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS=-trimpath \
	GOTOOLCHAIN=local CGO_ENABLED=0 && go mod init gcgo > /dev/null 2>&1 &&
	go build -o "$TMP/gc_go.full" . && go build -ldflags='-s -w' -o "$TMP/gc_go" .) ||
	fail "go build failed"
go version

q() { "$PERFCAP_ANALYZE" query "$1" "$2" | tail -n +2; }

# check LABEL CAPTURE OUT: the runtime's counts against gc_pauses
check() {
	local label=$1 cap=$2 out=$3 db="$TMP/$1.db"
	cat "$out"
	val() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "$out"; }
	local own pause_ns t0 t1
	own=$(val collections) pause_ns=$(val pause_ns) t0=$(val t0) t1=$(val t1)
	[ -n "$pause_ns" ] && [ -n "$t0" ] && [ -n "$t1" ] || fail "$label: no program output"
	[ "$own" = "$N" ] || fail "$label: the runtime counted $own collections in its window, want $N"
	"$PERFCAP_ANALYZE" import -f "$cap" -o "$db" > /dev/null || fail "$label: import failed"
	q "$db" "SELECT probe_id, kind, name, hits, records, attached FROM probes" |
		sed "s/^/$label: probe /"
	local kinds
	kinds=$(q "$db" "SELECT group_concat(DISTINCT kind) FROM probes")
	[ "$kinds" = entry ] || fail "$label: probe kinds '$kinds', want entry only"
	q "$db" "SELECT key, value FROM quality WHERE source = 'probe' AND key LIKE 'gc.%'" |
		sed "s/^/$label: quality /"
	local unpaired other
	unpaired=$(q "$db" "SELECT sum(value) FROM quality WHERE source = 'probe' AND key IN
		('gc.begin_unmatched', 'gc.end_unmatched', 'gc.unrecorded')")
	other=$(q "$db" "SELECT value FROM quality WHERE source = 'probe' AND key = 'gc.other_stops'")
	[ "$unpaired" = 0 ] || fail "$label: $unpaired GC probe hits made no pause"
	[ "${other:-0}" -ge 1 ] || fail "$label: the ReadMemStats stop was not counted apart"
	local inside inside_ns
	read -r inside inside_ns <<< "$(q "$db" "SELECT count(*), coalesce(sum(duration), 0)
		FROM gc_pauses WHERE runtime = 'go' AND source = 'uprobe'
		AND start_ts >= $t0 AND start_ts < $t1" | tr '\t' ' ')"
	echo "$label: $inside pauses in the window totalling $inside_ns ns; the runtime's own:" \
	     "$own collections, $pause_ns ns ($(pct "$inside_ns" "$pause_ns")%)"
	[ "$inside" -eq $((2 * N)) ] || fail "$label: $inside pauses in the window, want $((2 * N))"
	within "$inside_ns" $((pause_ns * 80 / 100)) $((pause_ns * 120 / 100)) ||
		fail "$label: pauses total $inside_ns ns, not within 20% of the runtime's $pause_ns ns"
}

for build in gc_go gc_go.full; do
	timeout 120 "$PERFCAP_RECORD" --strict -o "$TMP/$build.perfcap" -e cpu,gc -- \
		"$TMP/$build" "$N" "$LIVE" 0s > "$TMP/$build.out" 2> "$TMP/$build.err" ||
		{ cat "$TMP/$build.err"; fail "$build: perfcap-record failed"; }
	check "$build" "$TMP/$build.perfcap" "$TMP/$build.out"
	origin=$("$CAPCHECK" meta "$TMP/$build.perfcap" probe.0.origin)
	[ "$origin" = gc:go ] || fail "$build: probe.0.origin '$origin', want gc:go"
done

# through a shell: the probes are placed when it execs the program
timeout 120 "$PERFCAP_RECORD" -o "$TMP/shell.perfcap" -e gc -- \
	sh -c "\"$TMP/gc_go\" $N $LIVE 500ms; true" > "$TMP/shell.out" 2> "$TMP/shell.err" ||
	{ cat "$TMP/shell.err"; fail "shell: perfcap-record failed"; }
cat "$TMP/shell.err"
check shell "$TMP/shell.perfcap" "$TMP/shell.out"
late=$("$CAPCHECK" stat "$TMP/shell.perfcap" probe.gc.late_runtimes)
[ "$late" = 1 ] || fail "shell: probe.gc.late_runtimes '$late', want 1"

# a user's uprobe on the stripped binary: an entry probe through the pclntab
timeout 120 "$PERFCAP_RECORD" --strict -o "$TMP/work.perfcap" -e "uprobe:$TMP/gc_go:main.work" -- \
	"$TMP/gc_go" "$N" 1000 0s > /dev/null 2> "$TMP/work.err" ||
	{ cat "$TMP/work.err"; fail "uprobe on main.work failed"; }
cat "$TMP/work.err"
hits=$("$CAPCHECK" stat "$TMP/work.perfcap" probe.0.hits)
kind=$("$CAPCHECK" meta "$TMP/work.perfcap" probe.0.kind)
echo "uprobe main.work: $hits hits, kind $kind"
[ "$hits" = "$N" ] && [ "$kind" = entry ] || fail "main.work: $hits hits of kind $kind, want $N entry"

# bad cases: one line each
if "$PERFCAP_RECORD" --strict -o "$TMP/ret.perfcap" -e "uprobe:$TMP/gc_go:main.work(ret)" -- \
	"$TMP/gc_go" 1 10 0s > /dev/null 2> "$TMP/ret.err"; then
	fail "(ret) on a Go function was accepted"
fi
cat "$TMP/ret.err"
grep -q "is a Go binary: entry probes only" "$TMP/ret.err" || fail "(ret): no clear reason"
[ "$(grep -c . "$TMP/ret.err")" -le 2 ] || fail "(ret): more than the reason"
sleep 30 & spid=$!
if "$PERFCAP_RECORD" -o "$TMP/none.perfcap" -e gc -p "$spid" -d 1 > /dev/null 2> "$TMP/none.err"; then
	kill "$spid"; fail "-e gc on a process without a runtime succeeded"
fi
kill "$spid"
cat "$TMP/none.err"
grep -q "gc: no runtime with known GC probes" "$TMP/none.err" || fail "-e gc: no clear reason"
echo "PASS: gc_go"
