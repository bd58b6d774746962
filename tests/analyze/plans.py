#!/usr/bin/env python3
"""plans.py - pins the shape of the analyzer's query plans: no full scan
of a big table inside a loop or inside a correlated subquery, and no
automatic index built over a big table, in any statement that import,
report (text, --json, --html) and diff run on a server capture
(bench/gen_capture --requests) and on a small real recording. A full
scan of millions of rows once is fine; once per row of another table, or
per row of the result, is the minutes-long report of a busy server; an
automatic index sorts every row of the table each time the statement
runs (an import's UPDATE joined on (tid, start_ts) built one over 2.2M
thread states to change 4,056: docs/perfcap-analyze.md, PERFORMANCE).

usage: plans.py PERFCAP_ANALYZE GEN_CAPTURE FIXTURES_DIR"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

# Tables that grow with the capture (rows per event, sample or request).
BIG = {"samples", "syscalls", "syscall_rows", "requests", "thread_state_rows", "switches", "wakeups",
       "stack_frames", "frames", "offcpu", "block_io", "page_faults", "kernel_locks",
       "user_mutexes", "forks", "process_events", "tcp_states", "tcp_retransmits",
       "sample_counts", "thread_time_shares", "user_stack_unwinds", "sockets"}

# The checker must see what it is for: a per-row subquery over samples and
# a join whose inner loop scans syscalls.
KNOWN_BAD = ["SELECT (SELECT count(*) FROM samples s2 WHERE s2.cpu + 0 = s.cpu) FROM samples s",
             "SELECT count(*) FROM samples s, syscalls c WHERE c.ret + s.cpu = 5",
             "UPDATE thread_state_rows SET wait_class_code = o.state FROM offcpu o"
             " WHERE thread_state_rows.tid = o.tid AND thread_state_rows.start_ts = o.ts"]
KEYWORDS = {"WHERE", "JOIN", "ON", "USING", "LEFT", "INNER", "CROSS", "GROUP", "ORDER",
            "LIMIT", "UNION", "WINDOW", "NATURAL", "HAVING", "AND", "OR"}


def aliases(sql):
    """Plan rows name a table by its alias: alias (or name) -> table."""
    names = {t: t for t in BIG}
    for t in BIG:
        for m in re.finditer(r"\b%s\s+(?:AS\s+)?(\w+)" % t, sql, re.I):
            if m.group(1).upper() not in KEYWORDS:
                names[m.group(1)] = t
    return names
SCAN = re.compile(r"^SCAN (\w+)")
AUTO = re.compile(r"^(?:SEARCH|SCAN) (\w+) USING AUTOMATIC")


def statements(log, writes=False):
    """The distinct SELECT statements of a PERFCAP_SQL_LOG file (writes:
    UPDATE and DELETE too, and INSERT ... SELECT)."""
    seen = []
    kinds = r"(?i)^(SELECT|WITH|UPDATE|DELETE|INSERT\b.*\bSELECT)\b" if writes else \
        r"(?i)^(SELECT|WITH)\b"
    for line in open(log, encoding="utf-8", errors="replace"):
        sql = line.rstrip("\n").split("\t", 1)[1].strip()
        if re.match(kinds, sql) and sql not in seen:
            seen.append(sql)
    return seen


def violations(db, sql):
    """Full scans of big tables inside loops or correlated subqueries."""
    rows = db.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    nodes = {r[0]: (r[1], r[3]) for r in rows}
    children = {}
    for node_id, (parent, _) in nodes.items():
        children.setdefault(parent, []).append(node_id)
    bad = []
    names = aliases(sql)
    for node_id, (parent, detail) in nodes.items():
        a = AUTO.match(detail)
        if a and a.group(1) in names:
            bad.append(f"{detail} (an index built over the table each time)")
            continue
        m = SCAN.match(detail)
        if not m or m.group(1) not in names:
            continue
        earlier = [c for c in children.get(parent, []) if c < node_id
                   and re.match(r"^(SCAN|SEARCH) ", nodes[c][1])]
        if earlier:
            bad.append(f"{detail} (inner loop after: {nodes[earlier[-1]][1]})")
            continue
        p = parent
        while p in nodes:
            if nodes[p][1].startswith("CORRELATED"):
                bad.append(f"{detail} (inside: {nodes[p][1]})")
                break
            p = nodes[p][0]
    return bad


def one_scan(db, sql, table):
    """How many times the plan reads table (by scan or search): the wakeup
    graph statements (wakeup_edges, a view over offcpu) must read it once."""
    rows = db.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    names = {a for a, t in aliases(sql).items() if t == table} | {"o"}
    return sum(1 for r in rows if re.match(r"^(SCAN|SEARCH) (\w+)", r[3])
               and re.match(r"^(SCAN|SEARCH) (\w+)", r[3]).group(2) in names)


def run(ana, args, log):
    env = dict(os.environ, PERFCAP_SQL_LOG=log, DEBUGINFOD_URLS="")
    r = subprocess.run([ana] + args, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode not in (0, 3):
        sys.exit(f"plans.py: {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")


def main():
    ana, gen, fixtures = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="perfcap-plans.")
    try:
        check(ana, gen, fixtures, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check(ana, gen, fixtures, tmp):
    server = os.path.join(tmp, "server.perfcap")
    subprocess.run([gen, "--requests", server, "200000"], check=True,
                   stdout=subprocess.DEVNULL)
    inputs = [server, os.path.join(fixtures, "real-mix.perfcap"),
              os.path.join(fixtures, "real-lock.perfcap")]
    checked = failed = 0
    for cap in inputs:
        db_path = os.path.join(tmp, os.path.basename(cap) + ".db")
        log = db_path + ".sql"
        import_log = db_path + ".import.sql"
        run(ana, ["import", "--no-local-files", cap, "-o", db_path], import_log)
        for args in (["report", db_path], ["report", "--json", db_path],
                     ["report", "--html", os.path.join(tmp, "page.html"), db_path],
                     ["diff", db_path, db_path]):
            run(ana, args, log)
        db = sqlite3.connect(db_path)
        for sql in KNOWN_BAD:
            if not violations(db, sql):
                sys.exit(f"plans.py: the checker missed a known full scan in a loop: {sql}")
        # the import's statements, explained on the database it wrote with
        # its temporary tables made again (empty)
        for line in open(import_log, encoding="utf-8", errors="replace"):
            sql = line.rstrip("\n").split("\t", 1)[1].strip()
            if re.match(r"(?i)^CREATE TEMP TABLE\b", sql):
                try:
                    db.execute(sql)
                except sqlite3.Error:
                    pass
        for sql in statements(import_log, writes=True):
            try:
                bad = violations(db, sql)
            except sqlite3.Error:
                continue
            checked += 1
            for v in bad:
                failed += 1
                print(f"FAIL: {os.path.basename(cap)}: import: {v}\n  in: {sql[:400]}")
        wakeups = 0
        for sql in statements(log):
            checked += 1
            for v in violations(db, sql):
                failed += 1
                print(f"FAIL: {os.path.basename(cap)}: {v}\n  in: {sql[:400]}")
            if re.search(r"\bFROM wakeup_edges\b", sql):
                wakeups += 1
                scans = one_scan(db, sql, "offcpu")
                if scans != 1:
                    failed += 1
                    print(f"FAIL: {os.path.basename(cap)}: {scans} scans of offcpu (want one)"
                          f"\n  in: {sql[:400]}")
        if wakeups < 2:   # the report's wakeup graph: its edges and its chains
            failed += 1
            print(f"FAIL: {os.path.basename(cap)}: the report ran {wakeups} wakeup_edges statements")
        db.close()
    print(f"plans.py: {checked} statements checked, {failed} full scans in loops"
          " or automatic indexes over big tables")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
