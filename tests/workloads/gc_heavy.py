# gc_heavy.py K LIVE [DELAY] - K explicit collections of CPython's cyclic
# collector, each over LIVE tracked containers kept alive and 2,000
# reference cycles of garbage, timed by the script itself through
# gc.callbacks (CLOCK_MONOTONIC, the recorder's clock). DELAY seconds of
# sleep first (a probe placed after the exec, once libpython is mapped,
# must be in place). Prints collections, gc_ns, startup (collections
# before the script's own), t0, t1, wall_ns. Used by tests/e2e/gc_python.sh
# and gc_python_fallback.sh.
import gc, os, sys, time
k, live = int(sys.argv[1]), int(sys.argv[2])
if len(sys.argv) > 3:
    time.sleep(float(sys.argv[3]))
gc.disable()
startup = sum(s["collections"] for s in gc.get_stats())
heap = [[i] for i in range(live)]   # tracked containers every full collection visits
collections = gc_ns = began = 0
def timer(phase, info):
    global collections, gc_ns, began
    if phase == "start":
        began = time.monotonic_ns()
    else:
        gc_ns += time.monotonic_ns() - began
        collections += 1
gc.callbacks.append(timer)
t0 = time.monotonic_ns()
for _ in range(k):
    for _ in range(2000):
        a = []; b = [a]; a.append(b)   # a reference cycle: garbage only the collector frees
    gc.collect()
t1 = time.monotonic_ns()
gc.callbacks.remove(timer)
print("collections=%d gc_ns=%d startup=%d t0=%d t1=%d wall_ns=%d"
      % (collections, gc_ns, startup, t0, t1, t1 - t0))
sys.stdout.flush()
os._exit(0)   # no finalization: its collections would fire the probes uncounted
