# many_sleepers.py N SECONDS - N threads, each sleeping 5 ms at a time for
# SECONDS: many threads blocked at once, each interval long enough to be
# recorded (--offcpu-min 1ms), for the off-CPU stack copy stash
# (tests/e2e/stacks_many_threads.sh).
import sys
import threading
import time

n, secs = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + secs


def sleeper():
    while time.time() < end:
        time.sleep(0.005)


threads = [threading.Thread(target=sleeper) for _ in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
