#!/bin/sh
# build_fixtures.sh SRCDIR OUTDIR CC... - builds the ELF files the symbolizer
# tests read: a PIE program (with DWARF), its separate debug file, a stripped
# copy that points at it by .gnu_debuglink, a copy without a build-id, and a
# shared library linked at a nonzero base, and one with aliased names.
set -eu
src=$1
out=$2
shift 2
cd "$out"
"$@" -g -O0 -fPIE -pie -Wl,--build-id -o fixture_prog "$src/fixture_prog.c"
"$@" -g -O0 -fPIE -pie -Wl,--build-id=none -o fixture_prog.nobid "$src/fixture_prog.c"
"$@" -g -O0 -shared -fPIC -Wl,--build-id -Wl,-Ttext-segment=0x200000 \
	-o libfixture.so "$src/fixture_lib.c"
objcopy --only-keep-debug fixture_prog fixture_prog.debug
strip --strip-all -o fixture_prog.stripped fixture_prog
objcopy --add-gnu-debuglink=fixture_prog.debug fixture_prog.stripped
"$@" -g -O0 -shared -fPIC -Wl,--build-id -o libalias.so "$src/fixture_alias.c"
