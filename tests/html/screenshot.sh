#!/bin/bash
# screenshot.sh FIXTURE.json - writes the page for a fixture, has headless
# chromium (no network) screenshot it at 1280x4000, and checks the PNG: its
# size, that it is not blank (many colours, much non-white) and that the
# flame graph and verdict colours are on it. The PNG is kept in the build
# directory (tests/html/FIXTURE.png) for people to look at.
set -u
. "$(dirname "$0")/lib.sh"
require_html_support
require_chromium
make_tmpdir
name=$(basename "$1" .json)
png="$HTML_OUT/$name.png"
rm -f "$png"
"$WRITE_PAGE" "$HTML_FIXTURES/$1" "$TMP/page.html" "perfcap test page" || fail "write_page $1"
chromium_offline --hide-scrollbars --window-size=1280,4000 --virtual-time-budget=5000 \
	--screenshot="$png" "file://$TMP/page.html" > "$TMP/chromium.log" 2>&1
[ -s "$png" ] || { tail -5 "$TMP/chromium.log" >&2; fail "chromium wrote no screenshot"; }
python3 "$(dirname "$0")/png_check.py" "$png" 1280 4000 "$1" || fail "screenshot $png"
