#!/usr/bin/env bash
# test/cluster/review_hold_partition.sh: an online move into PostgreSQL 15
# holds every table the subscription writes into, partitions included, and
# gives every table it held back.
#
# The hold (cfeee6a) gives the superuser the schema and every table in it,
# after checking those tables again; it neither checked nor held a
# partition in another schema, and it gave back only the tables of the
# --from server.  mallory owns schema shard_0005 and its tables:
#   1. between the copy of the definitions and the subscription (paused at
#      "subscribe"), she drops m on the --to server and makes it again,
#      partitioned, with a DEFAULT partition mallory.evil in her own schema
#      that carries a trigger enabled ALWAYS: the subscription routes m's
#      rows into mallory.evil, and the table sync fired her trigger as the
#      superuser (at cfeee6a: her trigger runs 100 times as the superuser,
#      and only the verification fails; mallory stays superuser on the --to
#      server);
#   2. on the --from server, shard 6's table p is partitioned, its partition
#      mallory.p_out is in her schema (the publication of the schema
#      publishes it), and on the --to server she made mallory.p_out with a
#      trigger enabled ALWAYS: the table sync fired it as the superuser (at
#      cfeee6a the move exits 0, mallory superuser on the --to server);
#   3. at "subscribe" she makes a table shard_0007.extra on the --to server:
#      the hold took it, and after the move it stays the superuser's (at
#      cfeee6a the move exits 0, extra belongs to postgres).
# Now each move fails, naming the table or partition, the shard stays where
# it was, and her code never runs as a superuser.  On PostgreSQL 16+ the
# subscription applies as the table's owner: skipped.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 350 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
mallory_verbosity=terse
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.strike_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NEW; END $$;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
CREATE SCHEMA shard_0006 AUTHORIZATION mallory;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE SCHEMA shard_0007 AUTHORIZATION mallory;
SELECT shardid.register_shard(7, 'shard_0007');
SET ROLE mallory;
CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0005.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
CREATE TABLE shard_0006.p (id bigint PRIMARY KEY, v text) PARTITION BY RANGE (id);
CREATE TABLE mallory.p_out PARTITION OF shard_0006.p DEFAULT;
INSERT INTO shard_0006.p SELECT g, 'v' || g FROM generate_series(1, 100) g;
CREATE TABLE shard_0007.m (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0007.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
as_mallory "$b" >/dev/null <<'SQL' || exit 1
CREATE TABLE mallory.p_out (id bigint PRIMARY KEY, v text);
CREATE TRIGGER strike BEFORE INSERT ON mallory.p_out FOR EACH ROW EXECUTE FUNCTION mallory.strike_trg();
ALTER TABLE mallory.p_out ENABLE ALWAYS TRIGGER strike;
SQL
at_subscribe() {	# at_subscribe SHARD LOG SQL: the move, her SQL on the --to server at "subscribe"
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=subscribe SHARDID_MOVE_PAUSE_FILE=$marker \
		"$move" --shard "$1" --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$2" 2>&1 &
	pid=$!
	wait_until "the move paused before the subscription" test -e "$marker" || { kill "$pid"; cat "$2"; finish; }
	as_mallory "$b" -c "$3" >/dev/null || fail "her change on the --to server (test of the test)"
	rm -f "$marker"
	wait "$pid"
	status=$?
	pid=""
	sed 's/^/  | /' "$2"
}
changed() {	# changed SHARD LOG ERROR
	expect "$status" = 1 "shard $1: the move whose copy she changed: exit status"
	grep -qxF "shardid-move: error: $3" "$2" || fail "shard $1: the error names the table"
	grep -q "^shardid-move: error: a table of schema \"shard_000$1\" changed on the --to server after the copy of its definitions, which the subscription would run as a superuser$" \
		"$2" || fail "shard $1: the move's failure"
	expect "$(on "$a" -c "SELECT shardid.shard_schema($1)")" = "shard_000$1" "shard $1 still registered on the --from server"
}

# 1. m, partitioned into her own schema on the --to server
at_subscribe 5 "$SHARDID_TMP/move1.log" "
	DROP TABLE shard_0005.m;
	CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text) PARTITION BY RANGE (id);
	CREATE TABLE mallory.evil PARTITION OF shard_0005.m DEFAULT;
	CREATE TRIGGER strike BEFORE INSERT ON mallory.evil FOR EACH ROW EXECUTE FUNCTION mallory.strike_trg();
	ALTER TABLE mallory.evil ENABLE ALWAYS TRIGGER strike"
changed 5 "$SHARDID_TMP/move1.log" "table shard_0005.m is not on the --from server as it is on the --to server (made on the --to server after the copy of the definitions)"
no_superuser_code "the move of shard 5" "$a" "$b"
mallory_reset "$a" "$b"	# on the old client, for the next attack

# 2. a partition of the --from server in her own schema
out=$("$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "shard 6 with her partition outside the schema: exit status"
echo "$out" | grep -qxF "shardid-move: error: table shard_0006.p has partition mallory.p_out of role mallory outside the schema: the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, and the move cannot keep the partition from its owner" ||
	fail "the error names her partition"
expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")" = shard_0006 "shard 6 still registered on the --from server"
no_superuser_code "the move of shard 6" "$a" "$b"
mallory_reset "$a" "$b"	# on the old client, for the next attack

# 3. a table of her own in the copy
at_subscribe 7 "$SHARDID_TMP/move3.log" "CREATE TABLE shard_0007.extra (id bigint)"
changed 7 "$SHARDID_TMP/move3.log" "table shard_0007.extra is not on the --from server as it is on the --to server (made on the --to server after the copy of the definitions)"
expect "$(on "$b" -c "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = 'shard_0007' AND c.relowner = 'postgres'::regrole")" = 0 \
	"tables of the superuser in shard_0007 on the --to server"
no_superuser_code "the move of shard 7" "$a" "$b"
mallory_reset "$a" "$b"	# on the old client, for the next attack
finish
