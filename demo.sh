#!/bin/bash
# demo.sh - sets everything up on a fresh Debian 12 machine and runs the main
# job: builds perfcap, records the bundled cpu_split workload with
# perfcap-record, prints perfcap-analyze's report (the diagnosis first) and
# writes the same report as a self-contained HTML page. Run as root.
set -euo pipefail
cd "$(dirname "$0")"
if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: needs root (apt-get and eBPF): run 'sudo ./demo.sh'" >&2
	exit 1
fi
.ci/install-deps
[ -f build/build.ninja ] || meson setup build --buildtype=release > /dev/null
ninja -C build > /dev/null
out=${1:-demo.perfcap}
echo "== perfcap-record -F 99 -f -o $out -- build/tests/workloads/cpu_split 5"
build/record/perfcap-record -F 99 -f -o "$out" -- build/tests/workloads/cpu_split 5
echo
echo "== perfcap-analyze report $out"
build/analyze/perfcap-analyze report "$out"
html=${out%.perfcap}.html
if build/analyze/perfcap-analyze report --html "$html" "$out" > /dev/null; then
	echo
	echo "The same report with a flame graph and a thread timeline: $html"
fi
