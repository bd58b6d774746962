#!/bin/bash
# hostile_outputs.sh - issue 16 end to end for the recorder, which runs as
# root: a symlink planted at -o (to a file, dangling) is never followed,
# with or without -f, nor with --flight-recorder (the same -o, written at
# the end); an overwritten 0644 file becomes a new 0600 capture;
# a full disk stops recording AND the -- COMMAND; the summary says how
# many events --max-size dropped. (The analyzer's outputs: analyze-hardening.)
set -u
. "$(dirname "$0")/lib.sh"
: "${CPU_HOGS:?}" "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}"
require_bpf
make_tmpdir
cd "$TMP" || fail "no scratch directory"

intact() { [ "$(cat victim)" = victim ] || fail "$1: the symlink's target was written"; }
mode_is_0600() {
	[ ! -L "$1" ] && [ -f "$1" ] || fail "$1 is not a regular file"
	[ "$(stat -c %a "$1")" = 600 ] || fail "$1 has mode $(stat -c %a "$1"), want 600"
}

echo victim > victim
chmod 644 victim
ln -s victim link.perfcap
"$PERFCAP_RECORD" -e sched -o link.perfcap -- true 2> err && fail "-o over a link without -f"
grep -q "already exists" err || { cat err; fail "no 'already exists' error"; }
intact "-o link"
"$PERFCAP_RECORD" -e sched -f -o link.perfcap -- true 2> err || { cat err; fail "-f -o link"; }
intact "-f -o link"
mode_is_0600 link.perfcap
"$PERFCAP_ANALYZE" info link.perfcap > /dev/null || fail "the capture written over the link is unreadable"
echo "ok: a symlink at -o is replaced, its target untouched"

ln -s created-by-link dangling.perfcap
"$PERFCAP_RECORD" -e sched -o dangling.perfcap -- true 2> /dev/null && fail "-o over a dangling link"
[ -e created-by-link ] && fail "a dangling link at -o created its target"
"$PERFCAP_RECORD" -e sched -f -o dangling.perfcap -- true 2> /dev/null || fail "-f -o dangling"
[ -e created-by-link ] && fail "-f over a dangling link created its target"
mode_is_0600 dangling.perfcap
echo "ok: a dangling link at -o never creates its target"

ln -s victim flight.perfcap
"$PERFCAP_RECORD" --flight-recorder 64K -e sched -f -o flight.perfcap -- true 2> err \
	|| { cat err; fail "--flight-recorder -f -o link"; }
intact "--flight-recorder -f -o link"
mode_is_0600 flight.perfcap
"$PERFCAP_ANALYZE" info flight.perfcap > /dev/null || fail "the flight capture is unreadable"
echo "ok: a symlink at the flight recorder's -o is replaced, its target untouched"

echo old > old.perfcap
chmod 644 old.perfcap
"$PERFCAP_RECORD" -e sched -f -o old.perfcap -- true 2> /dev/null || fail "-f over a 0644 file"
mode_is_0600 old.perfcap
echo "ok: -f over a 0644 file leaves a 0600 capture"

mkfifo fifo.perfcap
"$PERFCAP_RECORD" -e sched -f -o fifo.perfcap -- true 2> err && fail "-f -o FIFO accepted"
[ -p fifo.perfcap ] || fail "-f removed a FIFO"
echo "ok: -f refuses a FIFO: $(cat err)"

# A full disk: a 256 KiB tmpfs; the command would run 60 s.
mkdir full
if mount -t tmpfs -o size=256k perfcap-full full 2> /dev/null; then
	trap 'umount "$TMP/full" 2> /dev/null; rm -rf "$TMP"' EXIT
	start=$(date +%s)
	# The recorded command burns CPU for 60 s (samples and switches fill the
	# disk in a few seconds) and writes its own pid, so that the check
	# below is by pid. (-a and a command cannot be combined: an earlier
	# version of this test passed on that usage error.)
	timeout 50 "$PERFCAP_RECORD" -e cpu,sched -F 999 -o full/x.perfcap -- \
		sh -c 'echo $$ > cmd.pid; exec "$0" 60 0' "$CPU_HOGS" 2> err
	rc=$?
	kill $(jobs -p) 2> /dev/null; wait 2> /dev/null
	cat err
	[ $rc -eq 124 ] && fail "the recorder did not stop on a full disk"
	[ $rc -ne 0 ] || fail "a full disk exited 0"
	grep -q "choose one target\|usage" err && fail "the recorder refused its command line"
	grep -qi "no space\|disk\|write" err || fail "the recorder did not say the disk is full"
	grep -q "still running" err && fail "the command was left running"
	cmd=$(cat cmd.pid 2> /dev/null)
	[ -n "$cmd" ] || fail "the command did not start"
	kill -0 "$cmd" 2> /dev/null && { kill "$cmd"; fail "the command (pid $cmd) is still running"; }
	[ $(( $(date +%s) - start )) -lt 45 ] || fail "took too long to stop"
	umount full
	echo "ok: a full disk stops the recording and its command (exit $rc)"
else
	echo "note: cannot mount a tmpfs here; full-disk check skipped"
fi

# --max-size: the events it drops are said in the summary.
"$CPU_HOGS" 30 0 & "$CPU_HOGS" 30 1 &   # busy CPUs; they end by themselves
timeout 30 "$PERFCAP_RECORD" --max-size 64K -a -e cpu,sched -F 999 -o ms.perfcap 2> err
kill $(jobs -p) 2> /dev/null; wait 2> /dev/null
dropped=$("$PERFCAP_ANALYZE" info ms.perfcap | awk '$1 == "record.max_size.events_dropped" { print $2 }')
if [ "${dropped:-0}" -gt 0 ]; then
	# the recorder groups thousands with commas whatever the locale
	grouped=$(echo "$dropped" | sed -E ':a; s/^([0-9]+)([0-9]{3})/\1,\2/; ta')
	grep -q "of these, $grouped events were dropped at --max-size" err \
		|| { cat err; fail "the summary does not say the $dropped dropped events"; }
	"$PERFCAP_ANALYZE" report ms.perfcap | grep -q "Dropped events: .* at --max-size" \
		|| fail "the report does not show the dropped events"
	echo "ok: $dropped events dropped at --max-size are shown"
else
	echo "note: --max-size dropped no events this time"
fi
echo PASS
