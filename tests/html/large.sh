#!/bin/bash
# large.sh - a generated large report (gen_large.py: 20,000 stacks, 400
# threads x 2,000 spans) opened in headless chromium: no errors, frames
# drawn, every span accounted for, threads beyond 300 counted on the page.
set -u
. "$(dirname "$0")/lib.sh"
require_html_support
require_chromium
make_tmpdir
python3 "$(dirname "$0")/gen_large.py" > "$TMP/large.json" || fail "gen_large.py"
"$WRITE_PAGE" "$TMP/large.json" "$TMP/page.html" "large" || fail "write_page"
echo "page: $(stat -c %s "$TMP/page.html") bytes"
python3 "$(dirname "$0")/browser_check.py" "$TMP/page.html" "$TMP/large.json" hot_loop || fail "browser checks"
