# servers.sh - the real servers of the bench/ scripts (sourced, not run):
# each on 127.0.0.1 on a free port, started and stopped by pid.
#   start_S  sets spid (the server's pid) and targets (the pids to record,
#            comma-separated); returns non-zero when S is not installed
#   load_S   runs a bounded load of $secs seconds, prints one rate per second
#   stop_server
# S: redis (redis-benchmark get,set), nginx (nginx-light, NGINX_WORKERS (env,
# default 2) workers, a small static file, under wrk), postgres (a throwaway
# cluster in $tmp, fsync off, under pgbench TPC-B-like with 8 clients: row
# locks, so blocked backends).
# Needs $tmp (a private directory) and $secs; sets spid, targets, port.
spid=
targets=
port=

stop_server() {
	[ -n "$spid" ] && kill "$spid" 2> /dev/null && wait "$spid" 2> /dev/null
	spid=
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# the children of pid (nginx's workers: -p follows only later forks)
children() { cat "/proc/$1/task/$1/children" 2> /dev/null | tr ' ' '\n' | grep . | paste -sd,; }

wait_port() {
	for _ in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" \
			2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

# ---- servers: start_S sets spid and targets; load_S prints one rate -----

start_redis() {
	command -v redis-server > /dev/null && command -v redis-benchmark > /dev/null || return 1
	port=$(free_port)
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		> "$tmp/redis.log" 2>&1 &
	spid=$!
	targets=$spid
	wait_port
}

load_redis() {   # requests/s: mean of the GET and SET lines
	redis-benchmark -p "$port" -n $((secs * 40000)) -t get,set -q 2> /dev/null | tr '\r' '\n' |
		awk '/requests per second/ { for (i = 1; i <= NF; i++)
			if ($i == "requests") { s += $(i - 1); n++ } }
		     END { printf "%.0f\n", n ? s / n : 0 }'
}

start_nginx() {
	command -v nginx > /dev/null && command -v wrk > /dev/null || return 1
	port=$(free_port)
	mkdir -p "$tmp/www"
	head -c 2048 /dev/urandom | base64 > "$tmp/www/index.html"
	cat > "$tmp/nginx.conf" <<-EOF
		worker_processes ${NGINX_WORKERS:-2};
		pid $tmp/nginx.pid;
		error_log $tmp/nginx.err;
		events { worker_connections 1024; }
		http {
			access_log off;
			client_body_temp_path $tmp/body;
			server {
				listen 127.0.0.1:$port;
				root $tmp/www;
				location = /perfcap_status { stub_status; }   # toggle_cost.sh
			}
		}
	EOF
	chmod 755 "$tmp" "$tmp/www" && chmod 644 "$tmp/www/index.html"
	nginx -c "$tmp/nginx.conf" -g 'daemon off;' > /dev/null 2>&1 &
	spid=$!
	wait_port || return 1
	sleep 0.2
	targets=$spid,$(children "$spid")
}

load_nginx() {   # requests/s
	wrk -t 2 -c 32 -d "${secs}s" "http://127.0.0.1:$port/" 2> /dev/null |
		awk '/^Requests\/sec:/ { printf "%.0f\n", $2 }'
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1; }

start_postgres() {
	local bin; bin=$(pg_bin)
	[ -n "$bin" ] && command -v pgbench > /dev/null && id postgres > /dev/null 2>&1 || return 1
	port=$(free_port)
	mkdir -p "$tmp/pg" "$tmp/pgsock" && chown postgres: "$tmp/pg" "$tmp/pgsock" && chmod 755 "$tmp"
	setpriv --reuid=postgres --regid=postgres --init-groups -- \
		"$bin/initdb" -D "$tmp/pg" -A trust -U postgres > "$tmp/initdb.log" 2>&1 || return 1
	setpriv --reuid=postgres --regid=postgres --init-groups -- \
		"$bin/postgres" -D "$tmp/pg" -p "$port" -k "$tmp/pgsock" \
		-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
		-c autovacuum=off -c checkpoint_timeout=1h -c max_wal_size=8GB \
		> "$tmp/pg.log" 2>&1 &
	spid=$!
	targets=$spid   # backends are forked later: followed
	wait_port || return 1
	sleep 0.5
	pgbench -h 127.0.0.1 -p "$port" -U postgres -i -s 4 postgres > "$tmp/pginit.log" 2>&1
}

load_postgres() {   # transactions/s
	pgbench -h 127.0.0.1 -p "$port" -U postgres -v -c 8 -j 2 -T "$secs" postgres 2> /dev/null |
		awk '/^tps = / { printf "%.0f\n", $3; exit }'
}

# start_warm SERVER: starts SERVER and warms it up under its load; returns
# 1 (and says so) when it is not installed or did not start
start_warm() {
	if ! start_"$1"; then
		echo "$1: not installed or did not start, skipped" >&2
		stop_server
		return 1
	fi
	load_"$1" > /dev/null
}
