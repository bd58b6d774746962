#!/bin/sh
# build.sh SOURCE OUTDIR - builds the Go workload the pclntab tests read and
# record: go_hot.full (with .symtab), go_hot.stripped (-ldflags='-s -w',
# what Go users ship), go_hot.strip (go_hot.full through binutils strip:
# the same layout, so every function's address can be checked against
# go_hot.full's symbols), go_hot.pie (-buildmode=pie, internal linker:
# .data.rel.ro.gopclntab) and go_hot.extpie (PIE through the system linker
# with cgo: the table merged into .data.rel.ro, its text start left to a
# relocation); the .full files are the same builds without -s -w, whose
# symbols the tests compare with (Go builds are reproducible). Without go every output is an empty file and the tests
# skip, saying so.
set -eu
src=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
names="go_hot.full go_hot.stripped go_hot.strip go_hot.pie go_hot.pie.full go_hot.extpie
	go_hot.extpie.full"
cd "$out"
if ! command -v go > /dev/null 2>&1; then
	echo "build.sh: go not found (Debian: golang-go); the Go tests will skip" >&2
	for n in $names; do : > "$n"; done
	exit 0
fi
export GOCACHE="$out/gocache" GOPATH="$out/gopath" GOFLAGS=-trimpath GOTOOLCHAIN=local
export CGO_ENABLED=0
go build -o go_hot.full "$src"
go build -ldflags='-s -w' -o go_hot.stripped "$src"
strip -o go_hot.strip go_hot.full
go build -buildmode=pie -ldflags='-s -w' -o go_hot.pie "$src"
go build -buildmode=pie -o go_hot.pie.full "$src"
if ! CGO_ENABLED=1 go build -buildmode=pie -ldflags='-s -w -linkmode=external' \
	-o go_hot.extpie "$src" ||
   ! CGO_ENABLED=1 go build -buildmode=pie -ldflags='-linkmode=external' \
	-o go_hot.extpie.full "$src"; then
	echo "build.sh: no cgo external link; go_hot.extpie is empty" >&2
	: > go_hot.extpie
	: > go_hot.extpie.full
fi
