#!/bin/bash
# views_sql.sh - the view files of analyze/db/views/ run as written in the
# sqlite3 shell: each NAME.sql, fed to the real sqlite3 CLI on a database
# imported from a fixture capture, must run without error and return as
# many rows as the view NAME that perfcap-analyze created from it.
# usage: views_sql.sh SOURCE_ROOT (PERFCAP_ANALYZE: the built binary)
set -uo pipefail
root=${1:?source root}
: "${PERFCAP_ANALYZE:?}"
export DEBUGINFOD_URLS=
if ! command -v sqlite3 > /dev/null; then
	echo "views_sql.sh: no sqlite3 CLI (Debian package sqlite3): skipped"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
checked=0

# run_file FILE DB: the SQL in FILE through the sqlite3 shell, its rows
# into $work/out in JSON mode (one row per line, newlines inside values
# escaped), its errors into $work/err.
run_file() {
	sqlite3 -bail -batch "$2" ".mode json" ".read $1" > "$work/out" 2> "$work/err" &&
		[ ! -s "$work/err" ]
}

for fixture in real-mix real-lock synthetic-events; do
	db=$work/$fixture.db
	if ! "$PERFCAP_ANALYZE" import --no-local-files "$root/fixtures/$fixture.perfcap" \
		-o "$db" > /dev/null 2>&1; then
		echo "FAIL: import of fixtures/$fixture.perfcap"
		fail=1
		continue
	fi
	for sql in "$root"/analyze/db/views/*.sql; do
		view=$(basename "$sql" .sql)
		checked=$((checked + 1))
		if ! run_file "$sql" "$db"; then
			echo "FAIL: $fixture: $view.sql: $(cat "$work/err")"
			fail=1
			continue
		fi
		got=$(grep -c '^\[\?{' "$work/out")
		want=$(sqlite3 -batch "$db" "SELECT count(*) FROM $view")
		if [ "$got" != "$want" ]; then
			echo "FAIL: $fixture: $view.sql returns $got rows, the view $want"
			fail=1
		fi
	done
done
echo "views_sql.sh: $checked runs of the view files, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
