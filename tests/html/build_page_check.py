#!/usr/bin/env python3
"""build_page_check.py HTML_DIR - checks html/build_page.py's assembly on
small made-up templates: the page splits into three parts at {{TITLE}}
and {{DATA}}, build-time fills land where they belong, and script text
that could end its element (</script, <script, <!--), a missing or
repeated placeholder, or </style in the CSS stop the build. Exit 0 or 1."""
import os
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[1])
import build_page  # noqa: E402

TEMPLATE = ("<!DOCTYPE html>{{LICENSES}}<title>{{TITLE}}</title><style>{{CSS}}</style>"
            "<script type=\"application/json\">{{DATA}}</script><script>{{LIBS}}</script>"
            "<script>{{PAGE_JS}}</script>")
LIBS = [("lib-a", "1.0.0", "ISC", "var a = 1;", "ISC license text -- with dashes -->"),
        ("lib-b", "2.0.0", "MIT", None, "MIT license text")]
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def assemble(template=TEMPLATE, js="main();", css="body{}", libs=LIBS):
    src = tempfile.mkdtemp()
    for name, text in (("page.html", template), ("page.js", js), ("page.css", css)):
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    return build_page.assemble(src, libs)


def refuses(what, **kwargs):
    try:
        assemble(**kwargs)
    except build_page.BuildError as err:
        check(True, "refuses %s (%s)" % (what, err))
        return
    check(False, "refuses %s" % what)


parts = assemble()
check(len(parts) == 3, "three parts")
check(parts[0].endswith("<title>"), "part 0 ends where the title goes")
check(parts[1].startswith("</title>") and parts[1].endswith('<script type="application/json">'),
      "part 1 runs from the title to the data")
check(parts[2].startswith("</script><script>/* lib-a 1.0.0 */\nvar a = 1;"), "libraries inlined in order")
check("lib-b" not in parts[2], "a license-only library adds no script")
check("main();" in parts[2] and "body{}" in parts[1], "page.js and page.css inlined")
check("lib-b 2.0.0 (MIT), bundled" in parts[0] and "MIT license text" in parts[0],
      "every license is in the comment")
comment = parts[0][parts[0].index("<!--") + 4:parts[0].index("-->")]
check("ISC license text" in comment and "-->" not in comment, "license text cannot end the comment")
for bad in ("</script>", "<script>", "<!--"):
    refuses("page.js with %r" % bad, js="var s = '%s';" % bad)
refuses("a library with </SCRIPT", libs=[("x", "1", "MIT", "'</SCRIPT>'", "t")])
refuses("CSS with </style", css="a{} </style>")
refuses("a template without {{DATA}}", template=TEMPLATE.replace("{{DATA}}", ""))
refuses("a repeated {{TITLE}}", template=TEMPLATE + "{{TITLE}}")
refuses("an unknown placeholder", template=TEMPLATE + "{{NOPE}}")
refuses("{{DATA}} before {{TITLE}}", template="{{LICENSES}}{{CSS}}{{LIBS}}{{PAGE_JS}}{{DATA}}{{TITLE}}")
print("%d check(s) failed" % len(failures) if failures else "all checks passed")
sys.exit(1 if failures else 0)
