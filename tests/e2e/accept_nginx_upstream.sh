#!/bin/bash
# accept_nginx_upstream.sh - acceptance on a real server (issue 10),
# waiting on an upstream: Debian's nginx (nginx-light; one worker, our own
# config, pid file and temp paths in $TMP, listening on 127.0.0.1 on a free
# port) proxies every request, over keep-alive connections, to
# slow_upstream (tests/workloads/), which answers each after 30 ms. wrk
# (1 thread, 4 connections, bounded in time) keeps requests pending. The
# nginx worker is recorded with default sources: perfcap-record -p WORKER
# -d 3 (the worker process, found as the master's only child; -p follows
# children a target forks while recorded, not those it already has, so the
# master would not bring the worker in).
#
# Ground truth, from the kernel's accounting and not from perfcap: the
# worker's blocked time over the recording, wall - on-CPU - run-queue time
# from the deltas of /proc/WORKER/task/*/schedstat between the recorder's
# "recording" line and 3 s later (accept_lib.sh proc_window). With requests
# always pending, a worker that is not running or runnable is waiting for
# the upstream's answers. The upstream's own mean service time is printed
# too (it should be ~30 ms).
#
# The report's first cause must be upstream_wait with wait_total within 20%
# of that, its subject's peer the upstream's 127.0.0.1:PORT.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/accept_lib.sh"
: "${PERFCAP_RECORD:?}" "${PERFCAP_ANALYZE:?}" "${SLOW_UPSTREAM:?}"
require_bpf
skip() { echo "SKIP: $* (.ci/install-deps installs it)" >&2; exit 77; }
command -v wrk > /dev/null || skip "wrk not installed"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip "nginx (nginx-light) not installed"
make_tmpdir
ACCEPT_TOL=20

upid='' npid='' wpid=''
stop_all() {
	[ -n "$wpid" ] && kill "$wpid" 2> /dev/null
	[ -n "$npid" ] && kill "$npid" 2> /dev/null   # SIGTERM: the master stops its worker
	[ -n "$upid" ] && kill "$upid" 2> /dev/null
	wait
	rm -rf "$TMP"
}
trap stop_all EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$SLOW_UPSTREAM" "$TMP/up.port" 30 > "$TMP/upstream.out" &
upid=$!
for _ in $(seq 100); do [ -s "$TMP/up.port" ] && break; sleep 0.05; done
[ -s "$TMP/up.port" ] || fail "slow_upstream did not start"
uport=$(cat "$TMP/up.port")
nport=$(free_port)
mkdir -p "$TMP/nginx"
cat > "$TMP/nginx/nginx.conf" << EOF
worker_processes 1;
daemon off;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/error.log warn;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $TMP/nginx/body;
	proxy_temp_path $TMP/nginx/proxy;
	fastcgi_temp_path $TMP/nginx/fastcgi;
	uwsgi_temp_path $TMP/nginx/uwsgi;
	scgi_temp_path $TMP/nginx/scgi;
	upstream slow { server 127.0.0.1:$uport; keepalive 16; }
	server {
		listen 127.0.0.1:$nport;
		location / {
			proxy_pass http://slow;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
		}
	}
}
EOF
"$NGINX" -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -e "$TMP/nginx/error.log" \
	> "$TMP/nginx.out" 2>&1 &
npid=$!
for _ in $(seq 100); do
	[ -n "$(pgrep -P "$npid")" ] && python3 -c "import socket; socket.create_connection(('127.0.0.1', $nport), 0.2)" \
		2> /dev/null && break
	sleep 0.05
done
worker=$(pgrep -P "$npid")
[ -n "$worker" ] && [ "$(echo "$worker" | wc -l)" = 1 ] ||
	fail "no single nginx worker under the master $npid: $(cat "$TMP/nginx.out" "$TMP/nginx/error.log" 2> /dev/null)"
curl_ok=$(python3 -c "
import urllib.request
print(urllib.request.urlopen('http://127.0.0.1:$nport/', timeout=5).read().decode().strip())" 2>&1)
[ "$curl_ok" = ok ] || fail "nginx does not proxy to the upstream: $curl_ok"

timeout 20 wrk -t 1 -c 4 -d 5s "http://127.0.0.1:$nport/" > "$TMP/wrk.out" 2>&1 &
wpid=$!
sleep 0.5 # connections open, requests pending

proc_window "$TMP/nginx.perfcap.err" 3 "$TMP/truth" "$worker" &
win=$!
record "$TMP/nginx.perfcap" "$TMP/record.out" -p "$worker" -d 3
wait $win || fail "proc_window failed"
wait "$wpid"
wpid=
cat "$TMP/wrk.out"
kill "$upid"
wait "$upid"
upid=
cat "$TMP/truth" "$TMP/upstream.out"
echo "nginx master $npid, worker $worker, upstream 127.0.0.1:$uport"

check_report "$TMP/nginx.perfcap" upstream_wait wait_total ns \
	"$(truth "$TMP/truth" blocked_ns)" \
	"check(c['subject'].get('peer') == '127.0.0.1:$uport',
      'subject.peer is the upstream 127.0.0.1:$uport (got %s)' % c['subject'].get('peer'))"
echo "PASS: accept_nginx_upstream"
