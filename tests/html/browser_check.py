#!/usr/bin/env python3
"""browser_check.py - opens a page written by html_page_write() in headless
chromium (no network) and checks what a person would see, against the JSON
the page was made from:

  browser_check.py PAGE.html FIXTURE.json SEARCH_TERM

- no console errors, uncaught exceptions or error log entries (CSP
  violations, failed loads), and no request other than the file itself;
- the verdict text is the JSON's summary; the flame graph SVG has frames;
- search highlights exactly the frames whose name contains SEARCH_TERM;
- clicking a frame zooms to it (full width, ancestors faded), reset undoes it;
- report: one histogram per latency histogram with one bar per bucket, one
  timeline rect per span, one data-quality row per counter; a note under
  the requests row exactly when it is weighted (latency.requests.followed);
- diff: one findings row per finding, two overlaid bars per bucket, frame
  colours follow the sign of each frame's change (red grew, blue shrank)
  in both directions, and base-only frames appear only in new -> base.
Exit 0 pass, 1 fail."""
import json
import os
import sys
import tempfile
import shutil

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

WIDTH, HEIGHT = 1400, 1000
SEARCH_FILL = "#e600e6"
failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def frames(page):
    """[{name, fill, width, fade}] of the drawn flame-graph frames."""
    return page.evaluate("""Array.from(document.querySelectorAll('#flamegraph svg g.frame')).map(g => {
        const r = g.querySelector('rect');
        return {name: g.getAttribute('name'), fill: (r.getAttribute('fill') || '').toLowerCase(),
                width: parseFloat(r.getAttribute('width') || '0'), fade: g.classList.contains('fade')};
    })""")


def visible(frame_list):
    return [f for f in frame_list if f["width"] > 0]


def search(page, term):
    page.evaluate("""(() => { const i = document.querySelector('#flamegraph input.flame-search');
        i.value = %s; i.dispatchEvent(new Event('input')); })()""" % json.dumps(term))
    page.settle(0.8)


def check_common(page, data, term):
    rendered = page.evaluate("document.body.getAttribute('data-rendered')")
    check(rendered == data["kind"], "page rendered as %r (got %r)" % (data["kind"], rendered))
    verdict = page.evaluate("(document.getElementById('verdict-text') || {}).textContent")
    check(verdict == data["summary"], "verdict text is the JSON summary")
    errors = page.evaluate("document.querySelectorAll('.section-error').length")
    check(errors == 0, "no section reports a drawing error (%d do)" % errors)

    drawn = visible(frames(page))
    check(len(drawn) >= 5, "flame graph has frames (%d drawn)" % len(drawn))

    search(page, term)
    drawn = visible(frames(page))
    matching = [f for f in drawn if term.lower() in (f["name"] or "").lower()]
    highlighted = [f for f in drawn if f["fill"] == SEARCH_FILL]
    check(len(matching) > 0, "frames named like %r are drawn (%d)" % (term, len(matching)))
    if not matching:
        return
    check(all(f["fill"] == SEARCH_FILL for f in matching),
          "search %r highlights every matching frame" % term)
    check(len(highlighted) == len(matching), "search highlights only matching frames (%d of %d)"
          % (len(highlighted), len(drawn)))
    page.evaluate("""Array.from(document.querySelectorAll('#flamegraph button'))
        .find(b => b.textContent === 'Clear').click()""")
    page.settle(0.5)
    check(not any(f["fill"] == SEARCH_FILL for f in frames(page)), "clear removes the highlight")

    # Zoom: click the first matching frame; it then spans the whole graph.
    svg_width = page.evaluate("parseFloat(document.querySelector('#flamegraph svg').getAttribute('width'))")
    page.evaluate("""(() => { const g = Array.from(document.querySelectorAll('#flamegraph svg g.frame'))
        .find(g => g.getAttribute('name') === %s);
        g.dispatchEvent(new MouseEvent('click', {bubbles: true})); })()""" % json.dumps(matching[0]["name"]))
    page.settle(0.9)
    after = frames(page)
    zoomed = max(f["width"] for f in after if f["name"] == matching[0]["name"])
    check(zoomed >= 0.95 * svg_width, "click zooms %r to full width (%.0f of %.0f px)"
          % (matching[0]["name"], zoomed, svg_width))
    check(any(f["fade"] for f in after), "zoom fades the ancestors")
    page.evaluate("""Array.from(document.querySelectorAll('#flamegraph button'))
        .find(b => b.textContent === 'Reset zoom').click()""")
    page.settle(0.9)
    check(not any(f["fade"] for f in frames(page)), "reset zoom shows the whole graph again")


def check_report(page, data):
    latency = data.get("latency") or {}
    req = latency.get("requests")
    note = page.evaluate("document.querySelector('#latency p.note') !== null")
    if isinstance(req, dict) and isinstance(req.get("followed"), (int, float)):
        check(note, "requests followed in time windows: the page says the row is weighted")
    else:
        check(not note, "no weighting note without time windows")
    histograms = latency.get("histograms") or []
    charts = page.evaluate("document.querySelectorAll('#latency svg.histogram').length")
    check(charts == len(histograms), "one chart per latency histogram (%d)" % charts)
    bars = page.evaluate("document.querySelectorAll('#latency svg.histogram rect.bar').length")
    check(bars == sum(len(h["buckets"]) for h in histograms), "one bar per bucket (%d)" % bars)

    timeline = data.get("timeline") or {}
    threads = timeline.get("threads") or []
    spans = [s for t in threads[:300] for s in t["spans"] if s[1] > s[0]]
    rects = page.evaluate("""Array.from(document.querySelectorAll('#timeline rect.span')).map(r =>
        ({spans: parseInt(r.getAttribute('data-spans')), merged: r.classList.contains('merged'),
          state: Array.from(r.classList).find(c => c.startsWith('state-')).slice(6)}))""")
    represented = sum(r["spans"] for r in rects)
    check(represented == len(spans), "timeline accounts for every span (%d of %d, in %d rects)"
          % (represented, len(spans), len(rects)))
    rows = page.evaluate("document.querySelectorAll('#timeline svg > text:not(.axis)').length")
    check(rows == min(len(threads), 300), "one timeline row per thread (%d)" % rows)
    if not threads:
        check(page.evaluate("document.querySelector('#timeline .empty') !== null"),
              "an empty timeline says why")
    if len(threads) > 300:
        check(page.evaluate("/more threads/.test(document.getElementById('timeline').textContent)"),
              "threads not drawn are counted on the page")
    merged = any(r["merged"] for r in rects)
    for state in sorted({s[2] for s in spans}):
        want = sum(1 for s in spans if s[2] == state)
        drawn = sum(r["spans"] for r in rects if r["state"] == state)
        if merged:
            check(drawn > 0 or want < len(spans) / 100, "timeline state %s drawn (%d rects' spans)" % (state, drawn))
        else:
            check(drawn == want, "timeline state %s: %d spans" % (state, drawn))

    if spans:
        check_timeline_zoom(page)

    for section in ("io", "contention"):
        members = data.get(section) or {}
        want = sum(len(v) for v in members.values() if isinstance(v, list)) + \
            sum(len(v) for v in members.values() if isinstance(v, dict))
        rows = page.evaluate("document.querySelectorAll('#%s tbody tr').length" % section)
        check(rows == want, "%s: one table row per entry (%d of %d)" % (section, rows, want))
        nones = page.evaluate("document.querySelectorAll('#%s .empty').length" % section)
        want_nones = sum(1 for v in members.values() if v == []) if members else 1
        check(nones == want_nones, "%s: empty members say so (%d)" % (section, nones))

    edges = (data.get("wakeup_graph") or {}).get("edges") or []
    rows = page.evaluate("document.querySelectorAll('#wakeups tbody tr').length")
    check(rows == len(edges), "wakeup graph: one table row per edge (%d of %d)" % (rows, len(edges)))
    arrows = page.evaluate("document.querySelectorAll('#wakeups path.wake-edge').length")
    check(arrows == len(edges), "wakeup graph: one arrow per edge (%d of %d)" % (arrows, len(edges)))
    if edges:
        text = page.evaluate("document.getElementById('wakeups').textContent")
        check(edges[0]["waker_kind"] in text and edges[0]["wait_class"] in text,
              "wakeup graph names the first edge's waker kind and wait class")
    else:
        check(page.evaluate("document.querySelectorAll('#wakeups .empty').length") == 1,
              "wakeup graph without edges says so")

    quality = data.get("data_quality") or []
    rows = page.evaluate("document.querySelectorAll('#quality tbody tr').length")
    check(rows == len(quality), "data-quality panel lists every counter (%d)" % rows)
    causes = page.evaluate("document.querySelectorAll('#diagnosis .cause').length")
    check(causes == len((data.get("diagnosis") or {}).get("causes") or []),
          "diagnosis lists every cause (%d)" % causes)


def check_timeline_zoom(page):
    """Drag across the middle fifth of the timeline: the axis then starts
    after 0 and spans are redrawn; a double-click restores the full range."""
    def axis():
        return page.evaluate("Array.from(document.querySelectorAll('#timeline text.axis')).map(t => t.textContent)")
    before = axis()
    page.evaluate("""(() => {
        const svg = document.querySelector('#timeline svg'), box = svg.getBoundingClientRect();
        const plotLeft = box.left + 190, plotWidth = box.width - 200, y = box.top + 8;
        const at = (type, f) => svg.dispatchEvent(new MouseEvent(type, {bubbles: true,
            clientX: plotLeft + f * plotWidth, clientY: y}));
        at('mousedown', 0.4); at('mousemove', 0.5); at('mouseup', 0.6);
    })()""")
    zoomed = axis()
    check(before[0] == "0" and zoomed[0] != "0" and zoomed != before,
          "dragging zooms the timeline (axis %s .. %s)" % (zoomed[0], zoomed[-1]))
    page.evaluate("document.querySelector('#timeline svg').dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))")
    check(axis() == before, "double-click restores the whole timeline")


def change_signs(pairs, shares=True):
    """{frame name: +1/-1/0} of the change base -> new (of the frame's share
    of its side's samples, or of its raw count), for names that sit at one
    stack position only (so a drawn frame maps to one node)."""
    totals = {"base": sum(p["base"] for p in pairs), "new": sum(p["new"] for p in pairs)}
    nodes = {}
    for p in pairs:
        frames_ = p["stack"].split(";")
        for depth in range(1, len(frames_) + 1):
            node = nodes.setdefault(tuple(frames_[:depth]), {"base": 0, "new": 0})
            node["base"] += p["base"]
            node["new"] += p["new"]
    by_name = {}
    for path, counts in nodes.items():
        by_name.setdefault(path[-1], []).append(counts)
    signs = {}
    for name, list_ in by_name.items():
        if len(list_) != 1:
            continue
        c = list_[0]
        if shares:
            delta = c["new"] / totals["new"] - c["base"] / totals["base"]
        else:
            delta = c["new"] - c["base"]
        signs[name] = (delta > 0) - (delta < 0)
    return signs, by_name


def rgb(fill):
    inner = fill[fill.index("(") + 1:fill.index(")")]
    return [int(float(x)) for x in inner.split(",")]


def check_colours(page, signs, direction):
    drawn = visible(frames(page))
    checked = 0
    for f in drawn:
        sign = signs.get(f["name"])
        if sign is None or not f["fill"].startswith("rgb"):
            continue
        r, _, b = rgb(f["fill"])
        seen = (r > b) - (r < b)
        check(seen == sign, "%s: %r coloured %s (%s)" % (direction, f["name"],
              {1: "red", -1: "blue", 0: "grey"}[seen], f["fill"]))
        checked += 1
    check(checked >= 5, "%s: colours checked on %d frames" % (direction, checked))
    return {f["name"] for f in drawn}


def check_diff(page, data):
    rows = page.evaluate("document.querySelectorAll('#findings tbody tr').length")
    check(rows == len(data["findings"]), "findings table has every finding (%d)" % rows)
    significant = page.evaluate("document.querySelectorAll('#findings tbody tr.significant').length")
    check(significant == sum(1 for f in data["findings"] if f["significant"]),
          "significant findings are marked (%d)" % significant)
    histograms = data["histograms"]
    bars = page.evaluate("document.querySelectorAll('#latency svg.histogram rect.bar').length")
    check(bars == 2 * sum(len(h["buckets"]) for h in histograms), "base and new bars overlaid (%d)" % bars)
    if isinstance(data.get("verdict"), str):
        word = page.evaluate("(document.getElementById('verdict-word') || {}).textContent")
        check(word == data["verdict"], "verdict word shown (%r)" % word)
    conditional = data.get("conditional") is True or (isinstance(data.get("verdict"), dict)
                                                      and data["verdict"].get("conditional") is True)
    shown = page.evaluate("/conditional/.test(document.getElementById('verdict').textContent)")
    check(shown == conditional, "conditional badge shown iff the diff is conditional (%s)" % shown)
    for key in ("appeared", "disappeared"):
        n = page.evaluate("document.querySelectorAll('#findings ul.%s li').length" % key)
        check(n == len(data.get(key) or []), "every %s function listed (%d)" % (key, n))
    labels = page.evaluate("""Array.from(document.querySelectorAll('#latency svg.histogram text'))
        .map(t => t.textContent).join(' ')""")
    check("NaN" not in labels and "e+" not in labels, "histogram labels are readable numbers")
    bad = page.evaluate("""Array.from(document.querySelectorAll('#findings td')).map(td => td.textContent)
        .filter(t => /\\b(NaN|undefined|null|Infinity)\\b/.test(t))""")
    check(not bad, "findings table has no NaN/undefined/null/Infinity cell %s" % bad[:3])
    warnings = page.evaluate("document.querySelectorAll('#warnings li').length")
    check(warnings == len(data["warnings"]), "every warning shown (%d)" % warnings)

    signs, by_name = change_signs(data["folded_pairs"])
    only_base = {n for n, lst in by_name.items() if all(c["new"] == 0 for c in lst)}
    only_new = {n for n, lst in by_name.items() if all(c["base"] == 0 for c in lst)}
    forward = check_colours(page, signs, "base -> new")
    check(not (only_base & forward), "base -> new hides frames absent from new %s" % sorted(only_base))
    check(only_new <= forward, "base -> new shows frames new in new %s" % sorted(only_new))
    page.evaluate("document.getElementById('diff-backward').click()")
    page.settle(0.9)
    side = page.evaluate("document.querySelector('#flamegraph .flame').getAttribute('data-side')")
    check(side == "base", "new -> base sizes frames by the base (%s)" % side)
    backward = check_colours(page, signs, "new -> base")
    check(only_base <= backward, "new -> base shows frames gone from new %s" % sorted(only_base))
    check(not (only_new & backward), "new -> base hides frames absent from base %s" % sorted(only_new))
    raw_signs, _ = change_signs(data["folded_pairs"], shares=False)
    check(raw_signs != signs, "the fixture has frames whose raw count and share move apart")
    page.evaluate("document.getElementById('diff-normalize').click()")
    page.settle(0.9)
    check_colours(page, raw_signs, "new -> base, raw counts")
    page.evaluate("document.getElementById('diff-normalize').click()")
    page.settle(0.9)
    check_colours(page, signs, "new -> base, shares again")
    hostile = [n for n in by_name if "<" in n]
    for name in hostile:
        check(name in backward, "frame named %r drawn as text" % name)
    injected = page.evaluate("document.querySelectorAll('main b, main img, main script').length")
    check(injected == 0, "no markup injected from frame names (%d elements)" % injected)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    page_path, fixture, term = sys.argv[1:]
    data = json.load(open(fixture))
    chromium = os.environ.get("CHROMIUM", "chromium")
    profile = tempfile.mkdtemp(prefix="perfcap-html-")
    command, isolated = cdp.without_network(cdp.chromium_command(chromium, profile))
    print("chromium %s a network namespace" % ("in" if isolated else "WITHOUT (unshare failed);"))
    browser = cdp.Browser(command)
    try:
        url = "file://" + os.path.abspath(page_path)
        page = browser.open_page(url, WIDTH, HEIGHT)
        page.wait_until("document.body.hasAttribute('data-rendered') || "
                        "document.querySelector('.section-error') !== null")
        page.settle(1.0)
        check_common(page, data, term)
        if data["kind"] == "report":
            check_report(page, data)
        else:
            check_diff(page, data)
    except cdp.CdpError as err:
        check(False, "browser session: %s" % err)
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)

    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            check(False, "console %s: %s" % (params["type"], text))
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            check(False, "uncaught exception: %s" % (d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            check(False, "log %s: %s" % (params["entry"]["level"], params["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            req = params.get("request", {}).get("url", "")
            check(req.startswith("file:") or req.startswith("data:") or req == "about:blank",
                  "request stays local: %s" % req[:100])
    console = sum(1 for e in browser.events if e.get("method") == "Runtime.consoleAPICalled")
    print("console messages seen: %d" % console)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
