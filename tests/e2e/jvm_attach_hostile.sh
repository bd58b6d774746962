#!/bin/bash
# jvm_attach_hostile.sh - end to end with real eBPF: --jvm-perfmap against a
# process that looks like a JVM (it maps a file named libjvm.so) and whose
# root has /tmp as a symlink to the host's /etc. The recorder runs as root
# and would create its attach trigger file there if it followed the link;
# it must refuse, name why, count the failure, send no SIGQUIT and still
# write the capture. The fake JVM is yes(1) in a chroot (busy, so it has
# samples and is in the process table) with a shared library preloaded
# under the name libjvm.so.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${NOFP_LIB:?}"
require_bpf
make_tmpdir
root="$TMP/root"
mkdir -p "$root/bin" "$root/lib"
cp /usr/bin/yes "$root/bin/"
# its libraries and loader, at the paths the loader asks for
for lib in $(ldd /usr/bin/yes | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp "$lib" "$root$lib"
done
cp "$NOFP_LIB" "$root/lib/libjvm.so"
ln -s /etc "$root/tmp"
# (the host's chroot binary warns that it cannot preload the chroot's path)
LD_PRELOAD=/lib/libjvm.so chroot "$root" /bin/yes > /dev/null 2>&1 &
fake=$!
trap 'kill $fake 2> /dev/null; wait $fake 2> /dev/null; rm -f /etc/.attach_pid*; rm -rf "$TMP"' EXIT
sleep 0.5
grep -q libjvm.so "/proc/$fake/maps" || fail "the fake JVM does not map libjvm.so"

timeout 60 "$PERFCAP_RECORD" --jvm-perfmap -e cpu -d 1 -p "$fake" -o "$TMP/h.perfcap" \
	> /dev/null 2> "$TMP/h.err" || { cat "$TMP/h.err" >&2; fail "perfcap-record failed"; }
cat "$TMP/h.err"
ls /etc/.attach_pid* > /dev/null 2>&1 && fail "a trigger file was created in the host's /etc"
kill -0 "$fake" 2> /dev/null || fail "the fake JVM got a signal (SIGQUIT kills yes)"
grep -q "JVM $fake did not write its perf map: .*not a directory (a symlink?)" "$TMP/h.err" ||
	fail "the refusal is not named"
failed=$("$PERFCAP_ANALYZE" query --format csv "$TMP/h.perfcap" \
	"SELECT value FROM stats WHERE key = 'jit.jvm_perfmap.failed'" | tail -n +2 | tr -d '\r"')
[ "$failed" = 1 ] || fail "jit.jvm_perfmap.failed = '$failed', want 1"
echo "PASS"
