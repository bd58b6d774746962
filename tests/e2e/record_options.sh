#!/bin/bash
# record_options.sh - the recorder's multi-source options end to end:
# --list-events, -e validation, --strict, parameter validation (one clear
# error line each), filters and sampling settings stored in the META, the
# --comm and --cgroup filters applied in the kernel, the capability drop
# after attach, and the command run as the sudo user.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${SLEEPER:?}" "${CAPCHECK:?}"
make_tmpdir
failures=0

bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_error WANT_REGEX ARGS... : a clean non-zero exit, message matches
expect_error() {
	local want=$1; shift
	timeout 60 "$PERFCAP_RECORD" "$@" > "$TMP/out" 2> "$TMP/err"
	local rc=$?
	if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
		bad "'$*' exited $rc (want a clean error)"; return
	fi
	[ "$(wc -l < "$TMP/err")" -eq 1 ] || { bad "'$*': not one error line:"; cat "$TMP/err"; }
	grep -Eq -- "$want" "$TMP/err" || { bad "'$*': stderr lacks /$want/:"; cat "$TMP/err"; return; }
	echo "ok: $* -> $(cat "$TMP/err")"
}

# --- without privileges: listing and validation -----------------------------
"$PERFCAP_RECORD" --list-events > "$TMP/list" || bad "--list-events failed"
cat "$TMP/list"
for name in proc cpu sched; do
	grep -Eq "^$name +(always|default|-) +[a-zA-Z]" "$TMP/list" || bad "--list-events lacks $name"
done
expect_error "unknown event source 'bogus' \(valid: cpu, sched" -e bogus -a -d 1
expect_error "unknown event source ''|invalid event list" -e cpu,,sched -a -d 1
expect_error "invalid --offcpu-min '0x'.*500us" --offcpu-min 0x -a -d 1
expect_error "invalid --offcpu-min" --offcpu-min 5 -a -d 1
expect_error "invalid --offcpu-min" --offcpu-min -1ms -a -d 1
expect_error "invalid --offcpu-stack-reuse .5parsecs.*100ms" --offcpu-stack-reuse 5parsecs -a -d 1
expect_error "invalid --offcpu-stack-reuse" --offcpu-stack-reuse 2h -a -d 1
expect_error "invalid --offcpu-min" --offcpu-min 2h -a -d 1
expect_error "invalid --sample '0'" --sample 0 -a -d 1
expect_error "invalid --sched-rate 'lots'" --sched-rate lots -a -d 1
expect_error "invalid --sched-rate" --sched-rate -5 -a -d 1
expect_error "invalid --sched-rate" --sched-rate 100000001 -a -d 1
expect_error "invalid --sample" --sample 10:abc -a -d 1
expect_error "invalid --sample" --sample 99999999 -a -d 1
expect_error "invalid --rate-cap '0'" --rate-cap 0 -a -d 1
expect_error "invalid --rate-cap" --rate-cap lots -a -d 1
expect_error "invalid --comm" --comm a-name-longer-than-15 -a -d 1
expect_error "invalid --comm" --comm "" -a -d 1
expect_error "invalid --cgroup: cgroup '/no/such/cgroup': No such file" \
	--cgroup /no/such/cgroup -a -d 1
expect_error "not a cgroup v2 directory" --cgroup /tmp -a -d 1

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	[ $failures -eq 0 ] || fail "$failures case(s) failed"
	require_bpf # skips (77) or fails (CI) here
fi

# --- --strict, and every setting in the META --------------------------------
"$PERFCAP_RECORD" -e sched --strict --offcpu-min 500us --sample 4:7 --rate-cap 1000 \
	--comm sleeper -o "$TMP/meta.perfcap" -- true 2> "$TMP/err" \
	|| { cat "$TMP/err"; bad "-e sched --strict did not record"; }
meta() { "$CAPCHECK" meta "$TMP/meta.perfcap" "$1"; }
for pair in sources=proc,sched sources.selected=proc,sched sched.offcpu_min_ns=500000 \
	sampling.events.one_in=4 sampling.events.seed=7 sampling.events.rate_cap=1000 \
	filter.comm=sleeper filter.cgroup=none filter.pids="$(meta target.pids)"; do
	[ "$(meta "${pair%%=*}")" = "${pair#*=}" ] || bad "META ${pair%%=*} is '$(meta "${pair%%=*}")', want '${pair#*=}'"
done
echo "ok: META of -e sched --strict --offcpu-min 500us --sample 4:7 --rate-cap 1000 --comm sleeper"

# --- --sample and --rate-cap leave records out, counted -------------------
stat() { "$CAPCHECK" stat "$1" "$2"; }
"$PERFCAP_RECORD" -e sched --sample 4:1 -o "$TMP/sample.perfcap" -- "$SLEEPER" 40 \
	> /dev/null 2> "$TMP/err" || { cat "$TMP/err"; bad "--sample 4:1 recording failed"; }
kept=$(stat "$TMP/sample.perfcap" sched.switches)
out=$(stat "$TMP/sample.perfcap" sched.sampled_out)
# SWITCH and WAKEUP are sampled: about 3 of 4 of them left out
pct_out=$(( 100 * out / (kept + $(stat "$TMP/sample.perfcap" sched.wakeups) + out + 1) ))
within "$pct_out" 55 95 || bad "--sample 4: ${pct_out}% sampled out, want about 75%"
grep -q "records sampled out (--sample)" "$TMP/err" || bad "no sampled-out line at exit"
echo "ok: --sample 4:1 left out ${pct_out}% of SWITCH+WAKEUP ($out), counted"
"$PERFCAP_RECORD" -e sched --rate-cap 20 -o "$TMP/cap.perfcap" -- "$SLEEPER" 40 \
	> /dev/null 2> "$TMP/err" || { cat "$TMP/err"; bad "--rate-cap recording failed"; }
[ "$(stat "$TMP/cap.perfcap" sched.rate_capped)" -gt 0 ] || bad "--rate-cap 20 capped nothing"
echo "ok: --rate-cap 20 capped $(stat "$TMP/cap.perfcap" sched.rate_capped) records"

# offcpu_pids FILE: the pids of every OFFCPU record (traced tasks only)
offcpu_pids() { "$CAPCHECK" threads "$1" | awk '$5 > 0 { print $2 }' | sort -u; }

# --- --comm: a system-wide recording keeps only processes of that name ------
cp "$SLEEPER" "$TMP/sleeper"
"$TMP/sleeper" 30 > /dev/null & spid=$!
"$PERFCAP_RECORD" -a -e sched --comm sleeper -d 1.5 -o "$TMP/comm.perfcap" 2> "$TMP/err" \
	|| { cat "$TMP/err"; bad "--comm recording failed"; }
wait $spid
pids=$(offcpu_pids "$TMP/comm.perfcap")
[ "$pids" = "$spid" ] || bad "--comm sleeper: OFFCPU records of pids '$pids', want only $spid"
echo "ok: --comm sleeper kept only pid $spid"

# --- --cgroup: a system-wide recording keeps only tasks of that cgroup ------
cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg_root" ] && mkdir "$cg_root/perfcap-test-$$" 2> /dev/null; then
	cg="$cg_root/perfcap-test-$$"
	sh -c "echo \$\$ > '$cg/cgroup.procs' && exec '$TMP/sleeper' 30" > /dev/null & cpid=$!
	"$TMP/sleeper" 30 > /dev/null & opid=$!
	"$PERFCAP_RECORD" -a -e sched --cgroup "$cg" -d 1.5 -o "$TMP/cg.perfcap" 2> "$TMP/err" \
		|| { cat "$TMP/err"; bad "--cgroup recording failed"; }
	wait $cpid $opid
	rmdir "$cg"
	pids=$(offcpu_pids "$TMP/cg.perfcap")
	[ "$pids" = "$cpid" ] || bad "--cgroup: OFFCPU records of pids '$pids', want only $cpid"
	[ "$("$CAPCHECK" meta "$TMP/cg.perfcap" filter.cgroup)" = "$cg" ] || bad "META filter.cgroup"
	echo "ok: --cgroup $cg kept only pid $cpid"
else
	echo "skip: no writable cgroup v2 hierarchy for the --cgroup check"
fi

# --- capabilities after attach, and the command as the sudo user -----------
chmod 711 "$TMP" # nobody must reach $TMP/nobody
mkdir -m 777 "$TMP/nobody"
SUDO_UID=65534 SUDO_GID=65534 "$PERFCAP_RECORD" -e sched -o "$TMP/sudo.perfcap" -- \
	sh -c "id -u > '$TMP/nobody/uid'; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/\$PPID/status > '$TMP/nobody/caps'" \
	2> "$TMP/err" || { cat "$TMP/err"; bad "recording as SUDO_UID=65534 failed"; }
[ "$(cat "$TMP/nobody/uid" 2> /dev/null)" = 65534 ] || bad "the command did not run as uid 65534"
[ "$("$CAPCHECK" meta "$TMP/sudo.perfcap" target.command.uid)" = 65534 ] || bad "META target.command.uid"
eff=$(awk '$1 == "CapEff:" { print $2 }' "$TMP/nobody/caps")
bnd=$(awk '$1 == "CapBnd:" { print $2 }' "$TMP/nobody/caps")
nnp=$(awk '$1 == "NoNewPrivs:" { print $2 }' "$TMP/nobody/caps")
# kept at most: kill(5) dac_read_search(2) sys_ptrace(19) checkpoint_restore(40) bpf(39)
allowed=$(( (1 << 5) | (1 << 2) | (1 << 19) | (1 << 40) | (1 << 39) ))
if [ -z "$eff" ] || [ $(( 0x$eff & ~allowed )) -ne 0 ] || [ $(( 0x$bnd & ~allowed )) -ne 0 ] \
	|| [ "$nnp" != 1 ]; then
	bad "recorder still holds capabilities after attach: CapEff $eff CapBnd $bnd NoNewPrivs $nnp"
else
	echo "ok: recorder after attach: CapEff $eff CapBnd $bnd NoNewPrivs $nnp;" \
		"kept $("$CAPCHECK" meta "$TMP/sudo.perfcap" record.privileges.kept)"
fi

[ $failures -eq 0 ] || fail "$failures case(s) failed"
echo PASS
