#!/usr/bin/env python3
"""build_page.py - builds the skeleton of perfcap-analyze's HTML page and
the C source that carries it (html_page_data.c, read by analyze/report/html_page.c).

Steps: install the pinned JavaScript libraries with `npm ci` (package.json
and package-lock.json in this directory) into a work directory, concatenate
them with page.html, page.css and page.js into one self-contained page, and
write it as three byte arrays: the text before the title, between the title
and the JSON data, and after the data ({{TITLE}} and {{DATA}} in page.html).
The libraries' LICENSE files are copied next to the output and their texts
kept inside the page as an HTML comment.

When the libraries cannot be had (npm missing or failing, or -Dhtml=disabled)
and the mode is not "enabled", the C source says why instead, so that
`--html` fails at run time with that reason rather than writing a broken page.

Usage: build_page.py --mode enabled|auto|disabled --npm PATH|"" --src DIR
                     --work DIR --out-c FILE --out-html FILE --out-licenses FILE
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys

# Libraries in load order: each UMD file adds itself to the global d3 object
# and uses the ones before it; d3-flame-graph comes last (global flamegraph).
# A None file: the package's code is bundled in another's file (internmap in
# d3-array), so only its license is added.
LIBRARIES = [
    ("d3-array", "dist/d3-array.min.js"),
    ("internmap", None),
    ("d3-color", "dist/d3-color.min.js"),
    ("d3-dispatch", "dist/d3-dispatch.min.js"),
    ("d3-ease", "dist/d3-ease.min.js"),
    ("d3-format", "dist/d3-format.min.js"),
    ("d3-interpolate", "dist/d3-interpolate.min.js"),
    ("d3-timer", "dist/d3-timer.min.js"),
    ("d3-selection", "dist/d3-selection.min.js"),
    ("d3-time", "dist/d3-time.min.js"),
    ("d3-time-format", "dist/d3-time-format.min.js"),
    ("d3-scale", "dist/d3-scale.min.js"),
    ("d3-transition", "dist/d3-transition.min.js"),
    ("d3-hierarchy", "dist/d3-hierarchy.min.js"),
    ("d3-flame-graph", "dist/d3-flamegraph.umd.min.js"),
]

NPM_TIMEOUT_S = 600


class BuildError(Exception):
    pass


def install_libraries(npm, src, work):
    """npm ci into work/, skipped when work/ already holds this lock file's tree."""
    os.makedirs(work, exist_ok=True)
    lock = os.path.join(src, "package-lock.json")
    done_lock = os.path.join(work, "installed-package-lock.json")
    modules = os.path.join(work, "node_modules")
    if os.path.isdir(modules) and os.path.exists(done_lock) and filecmp.cmp(lock, done_lock, shallow=False):
        return modules
    if not npm:
        raise BuildError("npm was not found at build time (install npm and rebuild)")
    shutil.copyfile(os.path.join(src, "package.json"), os.path.join(work, "package.json"))
    shutil.copyfile(lock, os.path.join(work, "package-lock.json"))
    if os.path.exists(done_lock):
        os.unlink(done_lock)
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund",
               "--loglevel=error", "--fetch-retries=1", "--fetch-timeout=60000"]
    try:
        result = subprocess.run(command, cwd=work, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, timeout=NPM_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise BuildError("npm ci failed: %s" % err)
    if result.returncode != 0:
        lines = result.stdout.decode("utf-8", "replace").splitlines()
        tail = [line for line in lines if line.strip()][-5:]
        sys.stderr.write("build_page.py: npm ci output:\n  " + "\n  ".join(tail) + "\n")
        raise BuildError("npm ci failed (exit %d) for html/package-lock.json" % result.returncode)
    shutil.copyfile(lock, done_lock)
    return modules


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_script_safe(name, text):
    """Script text must not end its script element, open an HTML comment or
    look like another script tag (the HTML parser's script states)."""
    lowered = text.lower()
    for bad in ("</script", "<!--", "<script"):
        if bad in lowered:
            raise BuildError("%s contains %r and cannot be inlined in a <script>" % (name, bad))


def comment_safe(text):
    """Text that cannot end the HTML comment it is placed in."""
    return text.replace("--", "- -")


def library_files(modules):
    """[(name, version, license_id, js_text, license_text)] in load order."""
    libraries = []
    for name, js_path in LIBRARIES:
        base = os.path.join(modules, name)
        meta = json.loads(read_text(os.path.join(base, "package.json")))
        js = read_text(os.path.join(base, js_path)) if js_path else None
        license_text = read_text(os.path.join(base, "LICENSE"))
        libraries.append((name, meta["version"], meta.get("license", "?"), js, license_text))
    return libraries


def licenses_comment(libraries):
    lines = ["perfcap-analyze HTML page. It embeds these JavaScript libraries from npm,",
             "each under its own license, reproduced below:"]
    for name, version, license_id, js, _ in libraries:
        lines.append("  %s %s (%s)%s" % (name, version, license_id,
                                         "" if js is not None else ", bundled in d3-array"))
    for name, version, _, _, text in libraries:
        lines.append("")
        lines.append("==== %s %s LICENSE ====" % (name, version))
        lines.append(text.strip())
    return "<!--\n" + comment_safe("\n".join(lines)) + "\n-->"


def licenses_file(libraries):
    parts = []
    for name, version, license_id, _, text in libraries:
        parts.append("==== %s %s (%s) ====\n%s\n" % (name, version, license_id, text.strip()))
    return "\n".join(parts)


def assemble(src, libraries):
    """The page as three strings split at {{TITLE}} and {{DATA}}."""
    page_js = read_text(os.path.join(src, "page.js"))
    page_css = read_text(os.path.join(src, "page.css"))
    check_script_safe("page.js", page_js)
    for name, _, _, js, _ in libraries:
        if js is not None:
            check_script_safe(name, js)
    if "</style" in page_css.lower():
        raise BuildError("page.css contains </style")
    fills = {
        "LICENSES": licenses_comment(libraries),
        "CSS": page_css,
        "LIBS": "\n".join("/* %s %s */\n%s" % (n, v, js) for n, v, _, js, _ in libraries
                          if js is not None),
        "PAGE_JS": page_js,
    }
    template = read_text(os.path.join(src, "page.html"))
    parts, current, expected = [], [], ["TITLE", "DATA"]
    pos = 0
    for match in re.finditer(r"\{\{([A-Z_]+)\}\}", template):
        current.append(template[pos:match.start()])
        pos = match.end()
        key = match.group(1)
        if key in fills:
            current.append(fills.pop(key))
        elif expected and key == expected[0]:
            expected.pop(0)
            parts.append("".join(current))
            current = []
        else:
            raise BuildError("page.html: unexpected or repeated {{%s}}" % key)
    current.append(template[pos:])
    parts.append("".join(current))
    if fills or expected:
        raise BuildError("page.html: missing {{%s}}" % "}}, {{".join(list(fills) + expected))
    return parts


def c_bytes(name, data):
    lines = ["static const unsigned char %s[%d] = {" % (name, max(len(data), 1))]
    for i in range(0, len(data), 24):
        lines.append("\t" + ",".join(str(b) for b in data[i:i + 24]) + ",")
    if not data:
        lines.append("\t0,")
    lines.append("};")
    return "\n".join(lines)


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


HEADER = """/* html_page_data.c - GENERATED by html/build_page.py from html/page.html,
 * page.css, page.js and the npm libraries pinned in html/package-lock.json.
 * Do not edit: edit those files and rebuild. */
#include <stddef.h>
"""


def c_source_available(parts):
    encoded = [p.encode("utf-8") for p in parts]
    out = [HEADER]
    for i, data in enumerate(encoded):
        out.append(c_bytes("part%d" % i, data))
    out.append("const unsigned char *const html_page_parts[3] = {part0, part1, part2};")
    out.append("const size_t html_page_part_lengths[3] = {%s};" %
               ", ".join("%d" % len(d) for d in encoded))
    out.append('const char html_page_unavailable[] = "";')
    return "\n".join(out) + "\n"


def c_source_unavailable(reason):
    return HEADER + "\n".join([
        "const unsigned char *const html_page_parts[3] = {NULL, NULL, NULL};",
        "const size_t html_page_part_lengths[3] = {0, 0, 0};",
        "const char html_page_unavailable[] = %s;" % c_string(reason),
    ]) + "\n"


def write_output(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["enabled", "auto", "disabled"], required=True)
    ap.add_argument("--npm", default="")
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out-c", required=True)
    ap.add_argument("--out-html", required=True)
    ap.add_argument("--out-licenses", required=True)
    args = ap.parse_args()

    try:
        if args.mode == "disabled":
            raise BuildError("configured with -Dhtml=disabled")
        modules = install_libraries(args.npm, args.src, args.work)
        libraries = library_files(modules)
        parts = assemble(args.src, libraries)
    except (BuildError, OSError, ValueError, KeyError) as err:
        if args.mode == "enabled":
            sys.stderr.write("build_page.py: error: %s (-Dhtml=enabled)\n" % err)
            return 1
        if args.mode == "auto":
            sys.stderr.write("build_page.py: WARNING: building without HTML support: %s\n" % err)
        write_output(args.out_c, c_source_unavailable(str(err)))
        write_output(args.out_html, "<!-- built without HTML support: %s -->\n"
                         % comment_safe(str(err)))
        write_output(args.out_licenses, "built without HTML support: %s\n" % err)
        return 0

    write_output(args.out_c, c_source_available(parts))
    write_output(args.out_html, "{{TITLE}}".join(parts[:2]) + "{{DATA}}" + parts[2])
    write_output(args.out_licenses, licenses_file(libraries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
