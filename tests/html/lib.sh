# lib.sh - shared helpers for the HTML page tests (sourced, not run). Uses
# the e2e convention: a missing tool skips loudly (exit 77) unless
# PERFCAP_REQUIRE_BPF=1 (CI), which turns the skip into a failure.
. "$(dirname "$0")/../e2e/lib.sh"

skip_or_fail_html() {
	if [ "${PERFCAP_REQUIRE_BPF:-0}" = 1 ]; then
		echo "FAIL: required for CI (PERFCAP_REQUIRE_BPF=1) but unavailable: $*" >&2
		exit 1
	fi
	echo "SKIP: $* (set PERFCAP_REQUIRE_BPF=1 to fail instead)" >&2
	exit 77
}

require_html_support() {
	local why
	why=$("$WRITE_PAGE" --available) || skip_or_fail_html "perfcap-analyze built without HTML support: $why"
}

require_chromium() {
	CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
	[ -n "$CHROMIUM" ] || skip_or_fail_html "chromium not installed (apt-get install chromium)"
	export CHROMIUM
}

# chromium_offline ARGS...: chromium in a network namespace of its own when
# we may make one (root), else with every host name unresolvable.
chromium_offline() {
	local isolate=()
	unshare -n true 2>/dev/null && isolate=(unshare -n)
	"${isolate[@]}" "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --no-default-browser-check --disable-extensions \
		--disable-background-networking --disable-component-update --disable-sync \
		--host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$TMP/profile" "$@"
}
