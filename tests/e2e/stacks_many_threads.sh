#!/bin/bash
# stacks_many_threads.sh - end to end with real eBPF: 300 threads of
# Debian's python3.11 (no frame pointers) blocked at the same time, each
# sleeping 5 ms at a time, recorded with the default options. Every
# blocked interval's stack is copied at the switch-out into a stash slot
# held until the switch-in; with more threads blocked at once than the
# slots chosen by tid alone, copies used to overwrite each other (18% of
# the intervals complete). Checks: >= 95% of the blocked intervals have a
# complete user stack, and STATS say how many copies had no slot or were
# overwritten (both counted, whatever they are).
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
command -v python3.11 > /dev/null ||
	{ echo "SKIP: no python3.11 (apt-get install python3.11)" >&2; exit 77; }
require_bpf
make_tmpdir
work="$(dirname "$(readlink -f "$0")")/../workloads/many_sleepers.py"
timeout 60 "$PERFCAP_RECORD" -o "$TMP/m.perfcap" -- python3.11 "$work" 300 2 \
	> /dev/null 2> "$TMP/m.err" || { cat "$TMP/m.err" >&2; fail "perfcap-record failed"; }
read -r stacks complete none < <("$PERFCAP_ANALYZE" report --json "$TMP/m.perfcap" 2> /dev/null |
	jq -r '.user_stacks.offcpu | "\(.stacks) \(.complete) \(.none)"')
stat() { "$PERFCAP_ANALYZE" query --format csv "$TMP/m.perfcap" \
	"SELECT value FROM stats WHERE key = '$1'" | tail -n +2 | tr -d '\r"'; }
no_slot=$(stat sched.ustack.no_slot)
overwritten=$(stat sched.ustack.overwritten)
echo "blocked intervals: $stacks with a stack copy, $complete complete, $none without;" \
	"no_slot $no_slot, overwritten $overwritten"
[ "${stacks:-0}" -gt 1000 ] || fail "only ${stacks:-0} blocked intervals recorded"
[ -n "$no_slot" ] && [ -n "$overwritten" ] || fail "STATS sched.ustack.no_slot/overwritten missing"
within "$(pct "${complete:-0}" "$((stacks + none))")" 95 100 ||
	fail "$complete of $((stacks + none)) blocked intervals have a complete stack, want >= 95%"
echo "PASS"
