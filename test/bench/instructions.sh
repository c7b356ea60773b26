#!/usr/bin/env bash
# test/bench/instructions.sh TREE... : instructions per id call of the
# shardid built from each source tree (a checkout of another commit, say
# `git worktree add /tmp/old v1.3`), counted by callgrind in a single-user
# backend with shardid preloaded (strict mode), so that two builds compare
# on one machine whatever its load.  Per call: (N calls - 10 calls) / (N - 10)
# of SELECT count(shardid.next_id(5)) FROM generate_series(1, N), and the
# same for next_id(6, g).  Rebuilds each tree (make clean) and installs it
# into PG_CONFIG's server, in turn: use trees and a server of your own (a
# copy of a source build), not ones others use; the last tree stays
# installed.  A benchmark: it prints figures, it asserts nothing.
set -eu
PG_CONFIG=${PG_CONFIG:-pg_config}
bin=$("$PG_CONFIG" --bindir)
n=${N:-200000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/shardid-instr.XXXXXX")
trap 'rm -rf "$dir"' EXIT
as_pg() { if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; runuser -u postgres -- "$@"; else "$@"; fi; }
ir() {	# ir SQL: instructions of a single-user backend running SQL
	echo "$1" | as_pg valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$bin/postgres" --single \
		-D "$dir/data" postgres >/dev/null 2>"$dir/vg.err"
	grep -o "Collected : [0-9]*" "$dir/vg.err" | awk '{print $3}'
}
for tree in "$@"; do
	make -s -C "$tree" PG_CONFIG="$PG_CONFIG" clean >/dev/null
	make -s -C "$tree" PG_CONFIG="$PG_CONFIG" >/dev/null && make -s -C "$tree" PG_CONFIG="$PG_CONFIG" install >/dev/null
	rm -rf "$dir/data"
	as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust >/dev/null
	printf "shared_preload_libraries = 'shardid'\nfsync = off\n" >>"$dir/data/postgresql.conf"
	echo "CREATE EXTENSION shardid;" | as_pg "$bin/postgres" --single -D "$dir/data" postgres >/dev/null
	a0=$(ir "SELECT count(shardid.next_id(5)) FROM generate_series(1, 10);")
	a=$(ir "SELECT count(shardid.next_id(5)) FROM generate_series(1, $n);")
	b0=$(ir "SELECT count(shardid.next_id(6, g)) FROM generate_series(1, 10) g;")
	b=$(ir "SELECT count(shardid.next_id(6, g)) FROM generate_series(1, $n) g;")
	echo "$tree: next_id(shard) $(((a - a0) / (n - 10))) instructions per call (loop included), next_id(shard, seq) $(((b - b0) / (n - 10)))"
done
