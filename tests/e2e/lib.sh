# lib.sh - shared helpers for the end-to-end tests (sourced, not run).
# Tests that need eBPF call require_bpf: without root or BTF they skip
# loudly (exit 77, meson's skip code), unless PERFCAP_REQUIRE_BPF=1 (CI),
# which turns the skip into a failure.

fail() { echo "FAIL: $*" >&2; exit 1; }

skip_or_fail() {
	if [ "${PERFCAP_REQUIRE_BPF:-0}" = 1 ]; then
		echo "FAIL: eBPF required (PERFCAP_REQUIRE_BPF=1) but unavailable: $*" >&2
		exit 1
	fi
	echo "SKIP: eBPF unavailable: $* (set PERFCAP_REQUIRE_BPF=1 to fail instead)" >&2
	exit 77
}

require_bpf() {
	[ "$(id -u)" = 0 ] || skip_or_fail "not running as root"
	[ -r /sys/kernel/btf/vmlinux ] || skip_or_fail "no kernel BTF (/sys/kernel/btf/vmlinux)"
}

make_tmpdir() {
	TMP=$(mktemp -d /tmp/perfcap-e2e.XXXXXX)
	trap 'rm -rf "$TMP"' EXIT
}

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN;
# 1 after SECONDS
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le $(($3 * 10)) ] || return 1
		sleep 0.1
	done
}

# pct PART WHOLE -> integer percent
pct() { echo $(( 100 * $1 / ($2 > 0 ? $2 : 1) )); }

# within VALUE LOW HIGH
within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# start_redis [PREFIX...]: Debian's redis-server on 127.0.0.1 on a free
# port, no persistence, run under PREFIX if given (e.g. taskset -c 1);
# sets port and rpid (bpid, a benchmark's pid, may be set by the caller);
# stopped by pid when the test exits, with $TMP removed.
start_redis() {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$@" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no > "$TMP/redis.log" 2>&1 &
	rpid=$!
	bpid=
	trap 'cleanup_redis; rm -rf "$TMP"' EXIT
	for _ in $(seq 50); do
		redis-cli -p "$port" ping > /dev/null 2>&1 && break
		sleep 0.1
	done
}

cleanup_redis() {
	[ -n "${bpid:-}" ] && kill "$bpid" 2> /dev/null
	kill "$rpid" 2> /dev/null
	wait "$rpid" 2> /dev/null
}
