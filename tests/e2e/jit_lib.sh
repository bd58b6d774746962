# jit_lib.sh - shared measurement of the JIT tests (jit_node.sh,
# jit_java.sh); sourced after lib.sh, with $PERFCAP_ANALYZE and $TMP.
#
# jit_measure DB PID HOT: sets
#   user   the process's CPU samples with a user stack
#   jit    those whose user stack has a frame in JIT code: a frame named by
#          the perf map (frames.source 'perfmap') or an address in no mapped
#          file ('[unknown]', innermost) or a return address in none (junk,
#          dropped from the stack: stacks whose quality counts one)
#   named  those of jit whose JIT frames are all named (no '[unknown]' frame)
#   hot    samples with HOT (a substring of a perf-map name) on the stack
#   junk   return addresses in no mapped file dropped as junk (whole
#          capture, quality frames sampled.junk): unnamed JIT callers
#   share  named / jit in percent, hot_share hot / user in percent
#   top    the report's top function by self samples
jit_measure() {
	local db=$1 pid=$2 hot_name=$3 ips ips_named
	q() { "$PERFCAP_ANALYZE" query --format csv "$db" "$1" | tail -n +2 | tr -d "\r\""; }
	# per user stack: has a perf-map frame, has an unnamed JIT frame
	local with="WITH st AS (SELECT sf.stack_id,
		max(f.source = 'perfmap') AS pm,
		max(f.module = '[unknown]') AS unk,
		max(f.source = 'perfmap' AND f.function LIKE '%$hot_name%') AS hot
		FROM stack_frames sf JOIN frames f USING (frame_id) GROUP BY sf.stack_id)"
	user=$(q "SELECT count(*) FROM samples WHERE pid = $pid AND ustack_id IS NOT NULL")
	jit=$(q "$with SELECT count(*) FROM samples c JOIN st ON st.stack_id = c.ustack_id
		WHERE c.pid = $pid AND (st.pm OR st.unk)")
	named=$(q "$with SELECT count(*) FROM samples c JOIN st ON st.stack_id = c.ustack_id
		WHERE c.pid = $pid AND st.pm AND NOT st.unk")
	hot=$(q "$with SELECT count(*) FROM samples c JOIN st ON st.stack_id = c.ustack_id
		WHERE c.pid = $pid AND st.hot")
	share=$(pct "${named:-0}" "${jit:-0}")
	hot_share=$(pct "${hot:-0}" "${user:-0}")
	"$PERFCAP_ANALYZE" report "$db" > "$TMP/report" 2>&1 || fail "report failed"
	top=$(sed -n '/^Top functions/,/^$/p' "$TMP/report" | sed -n 3p)
	junk=$(q "SELECT value FROM quality WHERE source = 'frames' AND key = 'sampled.junk'")
	ips=$(q "SELECT value FROM stats WHERE key = 'jit.ips'")
	ips_named=$(q "SELECT value FROM stats WHERE key = 'jit.ips.named'")
	echo "  user samples $user, in JIT code $jit, JIT frames all named $named ($share%)," \
		"$hot with $hot_name ($hot_share% of user samples); junk frames ${junk:-0};" \
		"jit.ips $ips, named $ips_named"
	echo "  report's top function: $top"
}

# jit_check LABEL TOP: the assertions of issue 17 on what jit_measure set;
# TOP must appear in the report's top function line
jit_check() {
	[ "${jit:-0}" -ge 20 ] || fail "$1: only ${jit:-0} samples in JIT code"
	within "$share" 80 100 || fail "$1: named share $share% of JIT samples, want >= 80%"
	within "$hot_share" 60 100 || fail "$1: hot function in $hot_share% of user samples, want >= 60%"
	echo "$top" | grep -q -- "$2" || { cat "$TMP/report"; fail "$1: top function is not $2: $top"; }
}
