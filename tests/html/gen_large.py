#!/usr/bin/env python3
"""gen_large.py - prints a large report JSON (deterministic): 20,000 stacks
up to 40 frames deep, 400 threads with 2,000 state spans each, to check the
page stays usable and honest at scale (rows beyond 300 counted, sub-pixel
spans merged, every span accounted for)."""
import json
import random

rng = random.Random(5)
functions = ["fn_%03d" % i for i in range(600)] + ["hot_loop"]
folded = []
for i in range(20000):
    depth = rng.randint(3, 40)
    stack = ["bigapp", "start_thread"] + [rng.choice(functions) for _ in range(depth)]
    if i % 50 == 0:
        stack.append("hot_loop")
    folded.append({"stack": ";".join(stack), "count": rng.randint(1, 50)})
states = ["running", "runnable", "io", "futex", "poll", "sleep", "other"]
start, end = 0, 60 * 10**9
threads = []
for t in range(400):
    spans, at = [], start
    for _ in range(2000):
        length = rng.randint(1, 60 * 10**6)
        if at + length > end:
            break
        spans.append([at, at + length, rng.choice(states)])
        at += length
    threads.append({"pid": 100, "tid": 100 + t, "comm": "w%d" % t, "spans": spans})
report = {
    "kind": "report", "report_version": 1,
    "capture": {"path": "big.perfcap", "size": 1, "sha256": None, "format_version": "1.0"},
    "summary": "Generated large report: 20,000 stacks, 400 threads.",
    "scope": {"duration_ns": end - start, "from_ns": start, "to_ns": end},
    "diagnosis": {"confidence": "medium", "caveats": [], "causes": [], "spike": None},
    "latency": {"requests": None, "syscalls": [], "histograms": [
        {"name": "read", "unit": "ns", "buckets": [{"le_ns": 10**k, "count": rng.randint(0, 10**6)} for k in range(2, 10)]}]},
    "cpu": {"samples": sum(f["count"] for f in folded), "freq_hz": 99, "functions": [], "stacks": [],
            "folded": folded, "truncated_pct": 0, "unresolved_pct": 0},
    "threads": [], "timeline": {"start_ns": start, "end_ns": end, "threads": threads},
    "data_quality": [], "reproduce": None,
}
print(json.dumps(report))
