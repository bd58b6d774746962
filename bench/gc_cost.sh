#!/bin/bash
# gc_cost.sh - what the probes of `-e gc` cost the traced program, per hit:
#   go_jump   a Go function with the stack-check prologue, called N times,
#             under `-e uprobe:BIN:main.f`: the entry probe goes on the
#             prologue's JBE, which the kernel emulates (what -e gc does
#             with the runtime's functions)
#   go_first  a Go leaf function (no prologue), N calls: the probe is on its
#             first instruction, single-stepped out of line
#   py_usdt   CPython: N gc.collect(0) on an empty young generation under
#             `-e gc` (two USDT hits per collection, with their arguments)
# Each against the same run under `-e cpu`, ABBA over ROUNDS rounds; the
# programs time themselves (ns per call), so the recorder's start-up is
# not counted. Not a test: on a shared machine state the load average.
# Usage: bench/gc_cost.sh [BUILD_DIR] [ROUNDS] [N]
set -euo pipefail
build=$(realpath "${1:-build}")
rounds=${2:-4}
n=${3:-100000}
rec=$build/record/perfcap-record
py=/usr/bin/python3.11
command -v go > /dev/null || { echo "go is not installed (apt-get install golang-go)" >&2; exit 1; }
tmp=$(mktemp -d /tmp/perfcap-gc-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/src"
cat > "$tmp/src/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func leaf(x int) int { return x + 1 }

//go:noinline
func f(x int) int { return leaf(x) + 1 }

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	call := f
	if os.Args[2] == "leaf" {
		call = leaf
	}
	t, s := time.Now(), 0
	for i := 0; i < n; i++ {
		s = call(s)
	}
	fmt.Printf("ns=%d s=%d\n", time.Since(t).Nanoseconds()/int64(n), s)
}
EOF
(cd "$tmp/src" && export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" GOTOOLCHAIN=local \
	CGO_ENABLED=0 && go mod init gccost > /dev/null 2>&1 && go build -ldflags='-s -w' -o "$tmp/calls" .)
cat > "$tmp/collect.py" <<'EOF'
import gc, sys, time
gc.disable()
n = int(sys.argv[1])
t = time.monotonic_ns()
for _ in range(n):
    gc.collect(0)
print("ns=%d" % ((time.monotonic_ns() - t) // n))
EOF

ns() { sed -n 's/.*ns=\([0-9]*\).*/\1/p'; }

# one MODE TRACED(0/1): ns per call
one() {
	local ev=cpu
	case $1 in
	go_jump) [ "$2" = 1 ] && ev="uprobe:$tmp/calls:main.f"
		"$rec" -f -o "$tmp/c.perfcap" --probe-no-stack -e "$ev" -- "$tmp/calls" "$n" f ;;
	go_first) [ "$2" = 1 ] && ev="uprobe:$tmp/calls:main.leaf"
		"$rec" -f -o "$tmp/c.perfcap" --probe-no-stack -e "$ev" -- "$tmp/calls" "$n" leaf ;;
	py_usdt) [ "$2" = 1 ] && ev=cpu,gc
		"$rec" -f -o "$tmp/c.perfcap" -e "$ev" -- "$py" "$tmp/collect.py" "$n" ;;
	esac 2> /dev/null | ns
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $rounds rounds ABBA, $n calls per run; $(go version)"
for m in go_jump go_first py_usdt; do
	: > "$tmp/runs"
	for ((r = 1; r <= rounds; r++)); do
		for t in 0 1 1 0; do echo "$t $(one $m $t)" >> "$tmp/runs"; done
	done
	awk -v m="$m" '{ s[$1] += $2; c[$1]++ }
		END { printf "%-9s untraced %6.0f ns/call, traced %6.0f ns/call: +%.0f ns per call\n",
			m, s[0] / c[0], s[1] / c[1], s[1] / c[1] - s[0] / c[0] }' "$tmp/runs"
done
