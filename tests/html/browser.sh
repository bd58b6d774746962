#!/bin/bash
# browser.sh FIXTURE.json SEARCH_TERM - writes the page for a JSON fixture
# with write_page (analyze/report/html_page.c) and checks it in headless chromium
# with browser_check.py (console errors, flame graph, verdict, search, zoom,
# histograms, timeline, findings, diff colours).
set -u
. "$(dirname "$0")/lib.sh"
require_html_support
require_chromium
make_tmpdir
fixture="$HTML_FIXTURES/$1"
"$WRITE_PAGE" "$fixture" "$TMP/page.html" "perfcap test page" || fail "write_page $1"
python3 "$(dirname "$0")/browser_check.py" "$TMP/page.html" "$fixture" "$2" || fail "browser checks on $1"
