#!/usr/bin/env python3
"""conn_topology.py - three processes on loopback, for the socket snapshot
test (tests/e2e/conn_snapshot.sh): an upstream listening on UPORT, a server
listening on SPORT that keeps one connection open to the upstream, and a
client holding NCLIENT connections to the server. Each exchanges a little
data now and then so nothing is idle for long.

Prints, once everything is connected:
    upstream PID PORT
    server PID PORT
    client PID
    ready
then runs until SIGTERM (to the launcher: it stops the three)."""
import os
import signal
import socket
import subprocess
import sys
import time

NCLIENT = 3


def listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    return s


def accept_all(lsock, n):
    conns = []
    for _ in range(n):
        c, _ = lsock.accept()
        conns.append(c)
    return conns


def echo_forever(conns, upstream=None):
    """Answer each byte received; the server asks its upstream first."""
    import select
    while True:
        ready, _, _ = select.select(conns, [], [], 1.0)
        for c in ready:
            data = c.recv(64)
            if not data:
                conns.remove(c)
                continue
            if upstream is not None:
                upstream.sendall(data)
                data = upstream.recv(64)
            c.sendall(data)


def run_upstream():
    lsock = listen()
    print(lsock.getsockname()[1], flush=True)
    echo_forever(accept_all(lsock, 1))


def run_server(uport):
    up = socket.create_connection(("127.0.0.1", uport))
    lsock = listen()
    print(lsock.getsockname()[1], flush=True)
    echo_forever(accept_all(lsock, NCLIENT), upstream=up)


def run_client(sport):
    conns = [socket.create_connection(("127.0.0.1", sport)) for _ in range(NCLIENT)]
    # one round trip on each: the server answers only once it has accepted
    # all of them, through the upstream (which then has accepted too), so
    # every socket is in its process's fd table before "ready"
    for c in conns:
        c.sendall(b"x")
        c.recv(64)
    print("connected", flush=True)
    while True:
        for c in conns:
            c.sendall(b"x")
            c.recv(64)
        time.sleep(0.05)


def spawn(*args):
    return subprocess.Popen([sys.executable, __file__] + list(args),
                            stdout=subprocess.PIPE, text=True)


def main():
    if len(sys.argv) > 1:
        mode = sys.argv[1]
        if mode == "upstream":
            run_upstream()
        elif mode == "server":
            run_server(int(sys.argv[2]))
        elif mode == "client":
            run_client(int(sys.argv[2]))
        return
    procs = []

    def stop(*_):
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    up = spawn("upstream")
    procs.append(up)
    uport = int(up.stdout.readline())
    srv = spawn("server", str(uport))
    procs.append(srv)
    sport = int(srv.stdout.readline())
    cli = spawn("client", str(sport))
    procs.append(cli)
    cli.stdout.readline()
    print("upstream %d %d" % (up.pid, uport))
    print("server %d %d" % (srv.pid, sport))
    print("client %d" % cli.pid)
    print("ready", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
