#!/bin/bash
# go_stripped.sh - end to end with real eBPF: a Go program built with
# -ldflags='-s -w' (no .symtab: how Go programs ship) is recorded with the
# default options; its functions are named from the pclntab the recorder
# reads (common/gopclntab.c) and embeds like ELF symbols. The binary is
# deleted before the analysis, so the names come from the capture. Checks:
# the report's top user function is main.hotLoop, >= 80% of the process's
# user frames in the Go binary are named (sample-weighted), and STATS
# modules.gopclntab says one module was named that way, and the process is
# identified as Go (from those names: nothing else shows). The same for a
# stripped PIE linked by the system linker with cgo (the table inside
# .data.rel.ro, its text start from a relocation; skipped when it could
# not be built). The unstripped build (its .symtab) gives the same top
# function without reading the pclntab. Both unwind the leaf main.hotLoop
# to main.main: the unstripped build from its .debug_frame, the stripped
# one from CFI the recorder makes from its pclntab.
set -u
. "$(dirname "$0")/lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${GO_HOT_STRIPPED:?}" "${GO_HOT_FULL:?}"
: "${GO_HOT_EXTPIE:?}"
[ -s "$GO_HOT_STRIPPED" ] || {
	echo "SKIP: $GO_HOT_STRIPPED is empty: no go at build time (install golang-go)" >&2
	exit 77
}
require_bpf
make_tmpdir

q() { "$PERFCAP_ANALYZE" query --format csv "$1" "$2" | tail -n +2 | tr -d "\r\""; }

# record_go LABEL BINARY: records BINARY (copied to $TMP/go_hot) for 2 s,
# deletes it, checks the names; prints the named share
record_go() {
	local label=$1 cap="$TMP/$1.perfcap"
	cp "$2" "$TMP/go_hot"
	"$PERFCAP_RECORD" -o "$cap" -- "$TMP/go_hot" 2 \
		> "$TMP/record.out" 2> "$TMP/record.err" \
		|| { cat "$TMP/record.err" >&2; fail "$label: perfcap-record failed"; }
	rm -f "$TMP/go_hot"   # the analyzer must not need it

	local pid
	pid=$(q "$cap" "SELECT pid FROM processes WHERE comm = 'go_hot' LIMIT 1")
	[ -n "$pid" ] || fail "$label: no go_hot process in the capture"

	"$PERFCAP_ANALYZE" report --no-local-files "$cap" > "$TMP/$label.report" \
		|| fail "$label: report failed"
	# the first row of "Top functions" outside the kernel
	local top
	top=$(awk '/^Top functions/ { on = 1; next }
		on && /^$/ { exit }
		on && /%/ && !/kernel/ { for (i = 1; i <= NF; i++) if ($i ~ /^\[/) { print $(i - 1); exit } }' \
		"$TMP/$label.report")
	echo "$label: top user function in the report: ${top:-none}"
	[ "$top" = main.hotLoop ] || { cat "$TMP/$label.report"; fail "$label: top user function '$top'"; }

	# every user frame of the process's samples in the Go binary, weighted
	# by its sample count: how many are named
	"$PERFCAP_ANALYZE" import --no-local-files "$cap" -o "$TMP/$label.db" > /dev/null \
		|| fail "$label: import failed"
	local counts total named
	counts=$("$PERFCAP_ANALYZE" query --format csv "$TMP/$label.db" "
		SELECT sum(c.count), sum(CASE WHEN f.function IS NOT NULL THEN c.count ELSE 0 END)
		FROM sample_counts c JOIN stack_frames sf ON sf.stack_id = c.ustack_id
		JOIN frames f ON f.frame_id = sf.frame_id
		WHERE c.pid = $pid AND f.kind = 'user' AND f.module LIKE '%/go_hot'" | tail -n +2 | tr -d '\r"')
	total=${counts%%,*}
	named=${counts##*,}
	local share
	share=$(pct "${named:-0}" "${total:-0}")
	echo "$label: $named of $total user frames in the Go binary named ($share%)"
	[ "${total:-0}" -gt 50 ] || fail "$label: only ${total:-0} user frames in the Go binary"
	within "$share" 80 100 || fail "$label: named share $share%, want >= 80%"

	local sources
	sources=$("$PERFCAP_ANALYZE" query --format csv "$TMP/$label.db" "
		SELECT DISTINCT source FROM frames WHERE function = 'main.hotLoop'" | tail -n +2 | tr -d '\r"')
	[ "$sources" = capture ] || fail "$label: main.hotLoop named by '$sources', want the capture"
	# the names are what identifies a (static, stripped) Go process
	local runtime
	runtime=$("$PERFCAP_ANALYZE" query --format csv "$TMP/$label.db" "
		SELECT runtime FROM process_runtimes WHERE pid = $pid" | tail -n +2 | tr -d '\r"')
	echo "$label: runtime identified: ${runtime:-none}"
	[ "$runtime" = go ] || fail "$label: runtime '$runtime', want go"
	gopcln=$(q "$cap" "SELECT value FROM stats WHERE key = 'modules.gopclntab'")
	refused=$(q "$cap" "SELECT value FROM stats WHERE key = 'modules.gopclntab_refused'")
	echo "$label: stats modules.gopclntab=$gopcln modules.gopclntab_refused=$refused"
	[ "$refused" = 0 ] || fail "$label: a pclntab was refused"
}

record_go stripped "$GO_HOT_STRIPPED"
[ "$gopcln" = 1 ] || fail "stripped: modules.gopclntab = $gopcln, want 1"
if [ -s "$GO_HOT_EXTPIE" ]; then
	record_go extpie "$GO_HOT_EXTPIE"
	[ "$gopcln" = 1 ] || fail "extpie: modules.gopclntab = $gopcln, want 1"
else
	echo "extpie: not built (no cgo at build time), not checked" >&2
fi
record_go unstripped "$GO_HOT_FULL"
[ "$gopcln" = 0 ] || fail "unstripped: modules.gopclntab = $gopcln, want 0 (.symtab used)"

# Go code has no .eh_frame, and main.hotLoop, a leaf, saves no frame
# pointer: a frame-pointer walk from it skips main.main. The unstripped
# build's .debug_frame (compressed, as Go writes it) is embedded; for the
# stripped build the recorder writes one from the pclntab's SP deltas
# (STATS unwind.go_synthesized). Either unwinds it: main.main above
# main.hotLoop in the CPU samples whose innermost user frame is
# main.hotLoop, from the capture alone.
leaf_caller() {   # LABEL SYNTHESIZED
	local label=$1 above leaves with_main synth
	above=$("$PERFCAP_ANALYZE" query --format csv "$TMP/$label.db" "
		WITH leaf AS (SELECT c.ustack_id, c.count FROM sample_counts c
			JOIN stack_frames sf ON sf.stack_id = c.ustack_id AND sf.position = 0
			JOIN frames f ON f.frame_id = sf.frame_id WHERE f.function = 'main.hotLoop')
		SELECT sum(count) AS leaves, sum(CASE WHEN EXISTS (SELECT 1 FROM stack_frames sf
			JOIN frames f ON f.frame_id = sf.frame_id
			WHERE sf.stack_id = leaf.ustack_id AND f.function = 'main.main')
			THEN count ELSE 0 END) AS with_main FROM leaf" | tail -n +2 | tr -d '\r"')
	leaves=${above%%,*}
	with_main=${above##*,}
	synth=$(q "$TMP/$label.perfcap" "SELECT value FROM stats WHERE key = 'unwind.go_synthesized'")
	echo "$label: main.main above main.hotLoop in $with_main of $leaves samples" \
		"(unwind.go_synthesized $synth)"
	[ "${synth:-0}" = "$2" ] || fail "$label: unwind.go_synthesized ${synth:-0}, want $2"
	[ "${leaves:-0}" -gt 20 ] || fail "$label: only ${leaves:-0} samples in main.hotLoop"
	within "$(pct "${with_main:-0}" "$leaves")" 95 100 ||
		fail "$label: main.main above main.hotLoop in $with_main of $leaves samples, want >= 95%"
}
leaf_caller stripped 1
leaf_caller unstripped 0
# the cgo PIE: its .eh_frame covers the C side only, the Go side gets the
# second, synthesized table
[ -s "$GO_HOT_EXTPIE" ] && leaf_caller extpie 1
echo "PASS"
