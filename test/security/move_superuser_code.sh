#!/usr/bin/env bash
# test/security/move_superuser_code.sh: shardid-move runs no code of another
# role as a superuser through a superuser's table.
#
# The tables of shard 5 belong to the superuser (create_shards() made
# them, as add_shards() does).  mallory, an ordinary role, owns a domain, a
# composite type and functions that some of them use; each payload calls
# mallory.strike(), which, when it runs as a superuser, takes a number from
# mallory.hits (which no rollback returns) and makes mallory superuser.
# She may change her objects whenever she likes (ALTER DOMAIN ... ADD
# CONSTRAINT, CREATE OR REPLACE FUNCTION); here they strike from the start.
#   t_check  a CHECK calling her function (shardid-move 1.2 refused this
#            shape; 1.3 skipped superusers' tables and ran it);
#   t_dom    a column of her domain;
#   t_comp   a column of her composite type;
#   t_idx    an index on an expression of her immutable function;
#   t_stat   statistics on that expression (the ANALYZE that the copied rows
#            bring about on the --to server evaluates it as the owner);
#   t_pub    a CHECK calling public.valid(integer), a superuser's function
#            on a, while on b mallory made her own public.valid(integer)
#            (CREATE on schema public there), which pg_restore's CHECK
#            resolves to.
# shardid-move 1.3 moved the shard with exit status 0, offline and online,
# and mallory was superuser on the --to server: the copy ran her code as the
# table's owner, a superuser.
#   1. offline a -> b: refused before anything changes, one message per
#      table and object, naming its owner; nothing of hers runs;
#   2. the same online;
#   3. without those tables, a superuser's table whose CHECK and domain use
#      a superuser's functions moves, offline, and back online.
# After each: mallory.hits unchanged, mallory no superuser on both servers.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 410 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" escape || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.ok(integer) RETURNS boolean LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE FUNCTION mallory.imm(integer) RETURNS integer IMMUTABLE LANGUAGE sql
    AS 'SELECT CASE WHEN mallory.strike() THEN $1 END';
CREATE DOMAIN mallory.positive AS integer CHECK (mallory.ok(VALUE));
CREATE TYPE mallory.pair AS (v integer, w mallory.positive);
GRANT USAGE ON SCHEMA mallory TO PUBLIC;
SQL
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE DOMAIN public.counted AS integer CHECK (VALUE > 0);
CREATE FUNCTION public.sane(integer) RETURNS boolean LANGUAGE sql AS 'SELECT $1 > 0';
CREATE DOMAIN public.sane_int AS integer CHECK (public.sane(VALUE));
SQL
done
on "$a" -c "CREATE FUNCTION public.valid(integer) RETURNS boolean LANGUAGE sql AS 'SELECT \$1 > 0'" >/dev/null || exit 1
on "$b" -c "GRANT CREATE ON SCHEMA public TO mallory" >/dev/null || exit 1
as_mallory "$b" -c "CREATE FUNCTION public.valid(integer) RETURNS boolean LANGUAGE sql AS 'SELECT mallory.strike()'" >/dev/null || exit 1

events_shard "$a" 20 || exit 1
on "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.t_check (id bigint PRIMARY KEY, n integer CHECK (mallory.ok(n)));
CREATE TABLE shard_0005.t_dom (id bigint PRIMARY KEY, n mallory.positive);
CREATE TABLE shard_0005.t_comp (id bigint PRIMARY KEY, p mallory.pair);
CREATE TABLE shard_0005.t_idx (id bigint PRIMARY KEY, n integer);
CREATE INDEX t_idx_imm ON shard_0005.t_idx (mallory.imm(n));
CREATE TABLE shard_0005.t_stat (id bigint PRIMARY KEY, n integer, m integer);
CREATE STATISTICS shard_0005.t_stat_s ON (mallory.imm(n)), m FROM shard_0005.t_stat;
CREATE TABLE shard_0005.t_pub (id bigint PRIMARY KEY, n integer CHECK (public.valid(n)));
-- the superuser's own code: moves
CREATE TABLE shard_0005.t_fine (id bigint PRIMARY KEY, n public.sane_int CHECK (public.sane(n)), c public.counted);
INSERT INTO shard_0005.t_pub SELECT g, g FROM generate_series(1, 5) g;
INSERT INTO shard_0005.t_fine SELECT g, g, g FROM generate_series(1, 5) g;
SQL
mallory_reset "$a"
# the payloads are live: the superuser's INSERTs run her code
for ins in "t_check VALUES (1, 1)" "t_dom VALUES (1, 1)" "t_comp VALUES (1, '(1,1)')" "t_idx VALUES (1, 1)"; do
	mallory_strikes "a superuser's INSERT INTO $ins runs mallory's code" "$a" -c "INSERT INTO shard_0005.$ins" || exit 1
done
mallory_strikes "a superuser's ANALYZE of t_stat runs mallory's code" "$a" \
	-c "INSERT INTO shard_0005.t_stat VALUES (1, 1, 1)" -c "ANALYZE shard_0005.t_stat" || exit 1
mallory_strikes "a superuser's INSERT INTO t_pub on b runs mallory's public.valid()" "$b" \
	-c "BEGIN; CREATE TABLE t_pub (n integer CHECK (public.valid(n))); INSERT INTO t_pub VALUES (1); ROLLBACK" || exit 1
mallory_reset "$a" "$b"

why="which this move would run as a superuser"
refused() {	# refused WHAT [move options...]: the move of shard 5 a -> b is refused, nothing changes
	local what=$1 want
	shift
	out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" "$@" 2>&1)
	expect "$?" = 1 "$what: exit status"
	echo "$out" | sed 's/^/  | /'
	for want in \
		"shardid-move: error: table shard_0005.t_check of role postgres: its CHECK constraint t_check_n_check uses function mallory.ok(integer) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_dom of role postgres: its column n uses type mallory.positive (a domain) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_dom of role postgres: its column n uses function mallory.ok(integer) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_comp of role postgres: its column p uses type mallory.pair (a composite type) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_comp of role postgres: its column p uses type mallory.positive (a domain) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_idx of role postgres: its index t_idx_imm uses function mallory.imm(integer) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_stat of role postgres: its statistics object t_stat_s uses function mallory.imm(integer) of role mallory, $why" \
		"shardid-move: error: table shard_0005.t_pub: its CHECK constraint t_pub_n_check uses function public.valid(integer), which is of role mallory on the --to server, and this move would run it as a superuser there" \
		"shardid-move: error: shard 5 cannot move as it is (see above); nothing was changed"; do
		echo "$out" | grep -qxF -- "$want" || fail "$what: wanted \"$want\""
	done
	echo "$out" | grep -q "t_fine\|shard_0005.events" && fail "$what: a table of the superuser's own code is named"
	expect "$(on "$b" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "$what: journal rows on b"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "$what: schema on b"
	expect "$(on "$a" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving'")" = 0 "$what: freeze on a"
	no_superuser_code "$what" "$a" "$b"
}
# 1. offline, 2. online
refused "offline move"
refused "online move" --online

# 3. the superuser's own code moves, offline and back online
on "$a" -c "DROP TABLE shard_0005.t_check, shard_0005.t_dom, shard_0005.t_comp, shard_0005.t_idx, shard_0005.t_stat, shard_0005.t_pub" || exit 1
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --move-and-drop-source --yes >"$SHARDID_TMP/move.log" 2>&1 ||
	fail "offline move of the superuser's own code: $(cat "$SHARDID_TMP/move.log")"
expect "$(on "$b" -c "SELECT count(*), sum(n) FROM shard_0005.t_fine")" = "5|15" "rows of t_fine on b"
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online --move-and-drop-source --yes >"$SHARDID_TMP/move.log" 2>&1 ||
	fail "online move back of the superuser's own code: $(cat "$SHARDID_TMP/move.log")"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 back on a"
no_superuser_code "moves of the superuser's own code" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
