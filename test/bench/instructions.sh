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
#
# PROVISION=M also counts provisioning: instructions per shard of
# CALL shardid.add_shards() of M shards of a template of TABLES tables (id
# bigint PRIMARY KEY, a user_id with an index, a payload, as in scale.sh)
# after 8 shards, beside a procedure making the same schemas with bigserial
# in a database without shardid, committing after each shard.  Time on a
# shared machine drifts; these counts do not.
#
# ONE_SHARD=K (with PROVISION) also counts K calls of one shard each after
# the M shards, CALL shardid.add_shards(..., first_shard => s, last_shard
# => s) beside CALL make_shards(s, s): instructions per call, the first
# call of the session left out (it compiles and plans what the later ones
# reuse).
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
provision() {	# instructions per shard of M shards after 8, in DB, by CALL (FIRST, LAST)
	local db=$1 call=$2 m=$3 w n
	w=$(ir_db "$db" "$(printf "$call" 0 7)")
	n=$(ir_db "$db" "$(printf "$call" 0 7)
$(printf "$call" 8 $((8 + m - 1)))")
	echo $(((n - w) / m))
}
one_shard() {	# instructions per call of K one-shard calls, after 8 + M shards and one such call, in DB
	local db=$1 call=$2 m=$3 k=$4 first w n s
	first=$(printf "$call" 0 $((8 + m - 1)))
	w=$(ir_db "$db" "$first
$(printf "$call" $((8 + m)) $((8 + m)))")
	n=$(ir_db "$db" "$first
$(for s in $(seq $((8 + m)) $((8 + m + k))); do printf "$call\n" "$s" "$s"; done)")
	echo $(((n - w) / k))
}
ir_db() {	# ir_db DB SQL: instructions of SQL in a single-user backend on a copy of the provisioning cluster
	rm -rf "$dir/copy"
	cp -a "$dir/prov" "$dir/copy"
	echo "$2" | as_pg valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$bin/postgres" --single \
		-D "$dir/copy" "$1" >/dev/null 2>"$dir/vg.err"
	grep -o "Collected : [0-9]*" "$dir/vg.err" | awk '{print $3}'
}
tables=${TABLES:-5}
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
	[ -n "${PROVISION:-}" ] || continue
	rm -rf "$dir/prov"
	cp -a "$dir/data" "$dir/prov"
	printf "max_locks_per_transaction = 4096\nshardid.epoch = '2026-01-01 00:00:00+00'\n" >>"$dir/prov/postgresql.conf"
	echo "CREATE DATABASE bigserial_db;" | as_pg "$bin/postgres" --single -D "$dir/prov" postgres >/dev/null 2>>"$dir/setup.err"
	{
		echo "CREATE SCHEMA app_template;"
		for t in $(seq 1 "$tables"); do
			echo "CREATE TABLE app_template.t$t (id bigint PRIMARY KEY, user_id bigint NOT NULL, payload text);"
			echo "CREATE INDEX ON app_template.t$t (user_id);"
		done
	} | as_pg "$bin/postgres" --single -D "$dir/prov" postgres >/dev/null 2>>"$dir/setup.err"
	echo "CREATE PROCEDURE make_shards(first integer, last integer) LANGUAGE plpgsql AS \$\$ DECLARE s integer; t integer; sch text; BEGIN FOR s IN first..last LOOP sch := 'shard_' || lpad(s::text, 4, '0'); EXECUTE format('CREATE SCHEMA %I', sch); FOR t IN 1..$tables LOOP EXECUTE format('CREATE TABLE %I.%I (id bigserial PRIMARY KEY, user_id bigint NOT NULL, payload text)', sch, 't' || t); EXECUTE format('CREATE INDEX ON %I.%I (user_id)', sch, 't' || t); END LOOP; COMMIT; END LOOP; END \$\$;" |
		as_pg "$bin/postgres" --single -D "$dir/prov" bigserial_db >/dev/null 2>>"$dir/setup.err"
	p_id=$(provision postgres "CALL shardid.add_shards('app_template', first_shard => %d, last_shard => %d);" "$PROVISION")
	p_big=$(provision bigserial_db "CALL make_shards(%d, %d);" "$PROVISION")
	echo "$tree: provisioning $PROVISION shards of $tables tables after 8: add_shards() $p_id instructions per shard, bigserial $p_big ($(echo "scale=3; $p_id / $p_big" | bc)x)"
	[ -n "${ONE_SHARD:-}" ] || continue
	o_id=$(one_shard postgres "CALL shardid.add_shards('app_template', first_shard => %d, last_shard => %d);" "$PROVISION" "$ONE_SHARD")
	o_big=$(one_shard bigserial_db "CALL make_shards(%d, %d);" "$PROVISION" "$ONE_SHARD")
	echo "$tree: $ONE_SHARD calls of one shard each after $((8 + PROVISION)) shards: add_shards() $o_id instructions per call, bigserial $o_big ($(echo "scale=3; $o_id / $o_big" | bc)x)"
done
