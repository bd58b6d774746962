#!/bin/bash
# page_write.sh - the page file html_page_write() produces, without a
# browser: a build without HTML support refuses with one line and leaves no
# file; a build with it writes a page whose embedded JSON parses back to
# the input (with every '<' escaped), whose title is escaped, which loads
# nothing from the network, and which carries each library's license.
set -u
. "$(dirname "$0")/lib.sh"
make_tmpdir

# Without HTML support: one line, non-zero exit, no file, no .tmp.
why=$("$WRITE_PAGE_NONE" --available) && fail "write_page_none claims HTML support"
[ -n "$why" ] || fail "no reason given for missing HTML support"
"$WRITE_PAGE_NONE" "$HTML_FIXTURES/report.json" "$TMP/none.html" 2> "$TMP/none.err" \
	&& fail "writing a page without HTML support succeeded"
[ "$(wc -l < "$TMP/none.err")" = 1 ] || fail "expected one error line, got: $(cat "$TMP/none.err")"
grep -q "^perfcap-analyze was built without HTML support: configured with -Dhtml=disabled$" "$TMP/none.err" \
	|| fail "unexpected error: $(cat "$TMP/none.err")"
[ ! -e "$TMP/none.html" ] && [ ! -e "$TMP/none.html.tmp" ] || fail "a file was left behind"

require_html_support

# An unwritable destination: one line naming it, no file.
"$WRITE_PAGE" "$HTML_FIXTURES/report.json" "$TMP/missing-dir/page.html" 2> "$TMP/bad.err" \
	&& fail "writing into a missing directory succeeded"
[ "$(wc -l < "$TMP/bad.err")" = 1 ] && grep -q "missing-dir" "$TMP/bad.err" \
	|| fail "unexpected error: $(cat "$TMP/bad.err")"

: > "$TMP/empty.json"
"$WRITE_PAGE" "$TMP/empty.json" "$TMP/empty.html" 2> "$TMP/empty.err" && fail "an empty JSON made a page"
[ ! -e "$TMP/empty.html" ] && [ ! -e "$TMP/empty.html.tmp" ] || fail "empty JSON left a file"
grep -q "empty.html: Invalid argument" "$TMP/empty.err" || fail "unexpected error: $(cat "$TMP/empty.err")"

title='orders <api> & "v2" '\''x'\'''
for fixture in report.json report_minimal.json report_recorded.json diff.json diff_tool.json diff_recorded.json; do
	"$WRITE_PAGE" "$HTML_FIXTURES/$fixture" "$TMP/page.html" "$title" || fail "write_page $fixture"
	"$WRITE_PAGE" "$HTML_FIXTURES/$fixture" - "$title" > "$TMP/stdout.html" || fail "write_page $fixture -"
	cmp -s "$TMP/page.html" "$TMP/stdout.html" || fail "file and stdout pages differ"
	[ ! -e "$TMP/page.html.tmp" ] || fail "page.html.tmp left behind"
	python3 - "$TMP/page.html" "$HTML_FIXTURES/$fixture" "$title" \
		"$(dirname "$0")/../../html/package-lock.json" <<'PY' || fail "page checks on $fixture"
import html, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
fixture = json.load(open(sys.argv[2]))
title = sys.argv[3]
lock = json.load(open(sys.argv[4]))
bad = []
if not page.startswith("<!DOCTYPE html>"):
    bad.append("does not start with <!DOCTYPE html>")
m = re.search(r'<script type="application/json" id="perfcap-data">(.*?)</script>', page, re.S)
if not m:
    bad.append("no data element")
else:
    text = m.group(1)
    if "<" in text:
        bad.append("a '<' is left unescaped in the data")
    if json.loads(text) != fixture:
        bad.append("embedded JSON differs from the input")
t = re.search(r"<title>(.*?)</title>", page, re.S)
if not t or t.group(1) != html.escape(title, quote=True).replace("&#x27;", "&#39;"):
    bad.append("title not escaped: %r" % (t.group(1) if t else None))
if html.unescape(t.group(1)) != title:
    bad.append("title does not unescape to the input")
external = re.findall(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', page)
if external:
    bad.append("external resources referenced: %s" % external[:3])
if page.count("<script") != 3:
    bad.append("expected 3 script elements, found %d" % page.count("<script"))
head = page[:page.index("<html")]
for key, meta in lock["packages"].items():
    name = key.rsplit("node_modules/", 1)[-1]
    if not key:
        continue  # the root package (perfcap's own)
    if "==== %s %s LICENSE ====" % (name, meta["version"]) not in head:
        bad.append("license of %s %s missing from the page" % (name, meta["version"]))
for b in bad:
    print("FAIL " + b)
print("%s: %d bytes, %d problems" % (sys.argv[2].rsplit("/", 1)[-1], len(page), len(bad)))
sys.exit(1 if bad else 0)
PY
done
echo "page_write: ok"
