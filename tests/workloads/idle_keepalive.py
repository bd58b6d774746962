#!/usr/bin/env python3
"""idle_keepalive.py - a loopback TCP server with one busy keep-alive
connection and IDLE connections that each ask once, wait, and ask again:
what a real server's clients do, and what keeps a drain of the req
source's windows from ending when it waits for every request to close.

The server (this process, one thread per connection) answers each request
of N bytes with 3 x N bytes. The clients run in a forked child:
  - busy: requests of 100 bytes back to back for SECONDS seconds;
  - IDLE (default 5) connections: one request of 40 bytes at the start,
    nothing for SECONDS - 1 seconds, one more of 40 bytes, then close.
127.0.0.1 only, a port the kernel picks. Prints "server PID" and "client
PID" first, then at the end "busy N idle M" (requests answered); exits
when the clients are done. With IDLE_KEEPALIVE_WAIT set in the
environment, the clients start when the client process gets SIGUSR1 (a
recorder attached first sees them all).

Usage: idle_keepalive.py [SECONDS [IDLE]]   (defaults 4, 5)
"""
import os
import signal
import socket
import sys
import threading
import time


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def serve(conn):
    with conn:
        while True:
            head = conn.recv(4096)
            if not head:
                return
            conn.sendall(b"r" * (3 * len(head)))


def ask(sock, size):
    sock.sendall(b"q" * size)
    return read_exact(sock, 3 * size) is not None


def clients(port, seconds, idle):
    idlers = [socket.create_connection(("127.0.0.1", port)) for _ in range(idle)]
    busy = socket.create_connection(("127.0.0.1", port))
    for s in idlers + [busy]:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    answered_idle = sum(ask(s, 40) for s in idlers)
    end = time.monotonic() + seconds
    wake = time.monotonic() + seconds - 1
    answered_busy = 0
    while time.monotonic() < end:
        answered_busy += ask(busy, 100)
        if idlers and time.monotonic() >= wake:
            answered_idle += sum(ask(s, 40) for s in idlers)
            for s in idlers:
                s.close()
            idlers = []
    busy.close()
    print("busy %d idle %d" % (answered_busy, answered_idle), flush=True)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    idle = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    port = srv.getsockname()[1]
    print("server %d" % os.getpid(), flush=True)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
    pid = os.fork()
    if pid == 0:
        srv.close()
        if os.environ.get("IDLE_KEEPALIVE_WAIT"):
            signal.sigwait([signal.SIGUSR1])
        clients(port, seconds, idle)
        os._exit(0)
    print("client %d" % pid, flush=True)

    def accept_loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
