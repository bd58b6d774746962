#!/bin/bash
# syscall_storm.sh - recorder throughput on a syscall storm (not a test:
# numbers are reported, not judged).
#
# 1. The ladder: `perfcap-record -e syscall --syscalls getppid` on
#    tests/workloads/syscall_storm at rising total rates (THREADS storm
#    threads, each rate-limited), SECS seconds each, until a step loses
#    records (STATS syscall.lost.*) or the traced storm cannot reach the
#    rate asked. Reports the highest rate sustained with zero loss, and the
#    ceiling (the first lossy step, its loss counted).
# 2. Bytes per event on disk: EVENTS chunk payload (perfcap-analyze info)
#    divided by the records emitted, at the best zero-loss step.
# 3. Overhead, same run, unlimited storm on every CPU, REPS interleaved
#    rounds of OVERHEAD_SECS: calls/s (mean ± sd) with no tracing, under
#    perfcap-record, and under a peer (bpftrace pairing raw_syscalls
#    sys_enter/sys_exit per tid and counting calls and time per syscall in
#    the kernel); overhead = 1 - traced/untraced, and the ratio
#    perfcap/peer.
#
# Usage: bench/syscall_storm.sh [BUILD_DIR]
# Env: SECS (30), THREADS (number of CPUs), RATES (total calls/s per step),
#      OVERHEAD_THREADS (number of CPUs), OVERHEAD_SECS (10), REPS (3).
# Use a release build (meson setup build --buildtype=release), not ASan.
# Needs root, bpftrace (the peer; mounts tracefs if it is not mounted).
set -euo pipefail
build=${1:-build}
secs=${SECS:-30}
threads=${THREADS:-$(nproc)}
rates=${RATES:-"250000 500000 750000 1000000 1250000 1500000 2000000 2500000 3000000"}
othreads=${OVERHEAD_THREADS:-$(nproc)}
osecs=${OVERHEAD_SECS:-10}
reps=${REPS:-3}
rec=$build/record/perfcap-record
ana=$build/analyze/perfcap-analyze
storm=$build/tests/workloads/syscall_storm
tmp=$(mktemp -d /tmp/perfcap-storm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

for f in "$rec" "$ana" "$storm"; do
	[ -x "$f" ] || { echo "syscall_storm.sh: $f not built" >&2; exit 1; }
done

div() { awk "BEGIN { printf \"%.${3:-3}f\", ($1) / ($2) }"; }
# statkey CAPTURE KEY: a STATS value from perfcap-analyze info (0 if absent)
statkey() { "$ana" info "$1" | awk -v k="$2" '$1 == k && !f { gsub(/,/, "", $2); print $2; f = 1 } END { if (!f) print 0 }'; }
# storm_rate LOG: calls/s printed by syscall_storm
storm_rate() { awk '/calls\/s/ { print $(NF-1) }' "$1"; }
lost_of() { echo $(( $(statkey "$1" syscall.lost.kernel) + $(statkey "$1" syscall.lost.user) )); }
# mean_sd FILE: "mean sd" of the numbers in FILE, one a line
mean_sd() {
	awk '{ s += $1; q += $1 * $1; n++ }
	     END { m = s / n; v = n > 1 ? (q - n * m * m) / (n - 1) : 0
		   printf "%.0f %.0f\n", m, sqrt(v > 0 ? v : 0) }' "$1"
}

# record_storm OUT THREADS RATE SECONDS: the storm under perfcap-record.
record_storm() {
	"$rec" -e syscall --syscalls getppid -f -o "$1" -- "$storm" "$2" "$4" "$3" \
		> "$1.out" 2> "$1.err" || { cat "$1.err" >&2; exit 1; }
}

# ---- 1. the ladder --------------------------------------------------------
echo "== ladder: $threads storm thread(s), ${secs}s per step, -e syscall --syscalls getppid"
printf '%12s %12s %12s %10s\n' "asked/s" "events/s" "events" "lost"
best_rate=0 best_cap="" ceiling=""
for total in $rates; do
	out="$tmp/step-$total.perfcap"
	record_storm "$out" "$threads" $((total / threads)) "$secs"
	events=$(statkey "$out" syscall.emitted)
	lost=$(lost_of "$out")
	rate=$(div "$events" "$secs" 0)
	printf '%12d %12d %12d %10d\n' "$total" "$rate" "$events" "$lost"
	if [ "$lost" -gt 0 ]; then
		ceiling="asked $total/s, got $rate events/s: lost $lost of $((events + lost))"
		break
	fi
	best_rate=$rate best_cap=$out
	if [ "$rate" -lt $((total * 9 / 10)) ]; then
		ceiling="the traced storm tops out at $rate calls/s (CPU bound), still no loss"
		break
	fi
done
echo "highest rate with zero loss for ${secs}s: $best_rate events/s"
echo "ceiling: ${ceiling:-not reached by the ladder}"

# ---- 2. bytes per event ---------------------------------------------------
if [ -n "$best_cap" ]; then
	payload=$("$ana" info "$best_cap" |
		awk '$1 == "events" && $3 ~ /^[0-9,]+$/ && $4 ~ /^[0-9,]+$/ && !f { gsub(/,/, "", $3); print $3; f = 1 }')
	events=$(statkey "$best_cap" syscall.emitted)
	echo "== on disk at $best_rate events/s: EVENTS payload $payload bytes / $events events =" \
		"$(div "$payload" "$events" 2) bytes/event (whole file $(stat -c %s "$best_cap") bytes)"
fi

# ---- 3. overhead against no tracing and a peer -----------------------------
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
cat > "$tmp/peer.bt" <<'BT'
tracepoint:raw_syscalls:sys_enter /comm == "syscall_storm"/ { @start[tid] = nsecs; }
tracepoint:raw_syscalls:sys_exit /@start[tid]/ {
	@calls[args->id] = count();
	@ns[args->id] = sum(nsecs - @start[tid]);
	delete(@start[tid]);
}
BT

# peer_run OUT: the storm under bpftrace (attached before the storm starts)
peer_run() {
	bpftrace "$tmp/peer.bt" > "$1.log" 2>&1 &
	local bt=$!
	for _ in $(seq 100); do grep -q Attaching "$1.log" && break; sleep 0.1; done
	"$storm" "$othreads" "$osecs" 0 > "$1"
	kill -INT $bt
	wait $bt || true
}

echo "== overhead: unlimited storm, $othreads thread(s), ${osecs}s per run, $reps rounds" \
	"(no tracing, perfcap, bpftrace interleaved)"
: > "$tmp/base.rates"
: > "$tmp/pc.rates"
: > "$tmp/peer.rates"
pc_lost=0 pc_events=0
for _ in $(seq "$reps"); do
	"$storm" "$othreads" "$osecs" 0 > "$tmp/base.out"
	storm_rate "$tmp/base.out" >> "$tmp/base.rates"
	record_storm "$tmp/full.perfcap" "$othreads" 0 "$osecs"
	storm_rate "$tmp/full.perfcap.out" >> "$tmp/pc.rates"
	pc_events=$((pc_events + $(statkey "$tmp/full.perfcap" syscall.emitted)))
	pc_lost=$((pc_lost + $(lost_of "$tmp/full.perfcap")))
	peer_run "$tmp/peer.out"
	storm_rate "$tmp/peer.out" >> "$tmp/peer.rates"
done
read -r base base_sd < <(mean_sd "$tmp/base.rates")
read -r pc pc_sd < <(mean_sd "$tmp/pc.rates")
read -r peer peer_sd < <(mean_sd "$tmp/peer.rates")
ovh_pc=$(div "1 - $pc / $base" 1 4)
ovh_peer=$(div "1 - $peer / $base" 1 4)
printf '%-34s %18s %10s\n' "" "calls/s (mean±sd)" "overhead"
printf '%-34s %10d ±%7d %10s\n' "no tracing" "$base" "$base_sd" "-"
printf '%-34s %10d ±%7d %9.1f%%\n' "perfcap-record (1 record/call)" "$pc" "$pc_sd" \
	"$(div "$ovh_pc * 100" 1 1)"
printf '%-34s %10d ±%7d %9.1f%%\n' "bpftrace (count+sum in kernel)" "$peer" "$peer_sd" \
	"$(div "$ovh_peer * 100" 1 1)"
echo "perfcap: $pc_events records written, $pc_lost lost (all rounds)"
echo "throughput ratio perfcap/peer: $(div "$pc" "$peer")," \
	"overhead ratio perfcap/peer: $(div "$ovh_pc" "$ovh_peer" 2)"
