#!/usr/bin/env bash
# test/cluster/review_hold_partition.sh: an online move into PostgreSQL 15
# holds every table the subscription writes into, partitions included.
#
# The hold (cfeee6a) gives the superuser the schema and the tables in it,
# after checking those tables again; a partition attached from another
# schema is neither checked nor held.  Between the copy of the definitions
# and the subscription (paused at "subscribe"), mallory, who owns schema
# shard_0005, drops her table m on the --to server and makes m again,
# partitioned, with a DEFAULT partition mallory.evil in her own schema that
# carries a trigger enabled ALWAYS.  The subscription routes m's rows into
# mallory.evil, and the table sync and the apply fired her trigger as the
# superuser: she became one (shardid-move at cfeee6a on PostgreSQL 15 runs
# the table sync, her trigger runs 100 times as the superuser, and only the
# verification fails, finding no rows in shard_0005.m; mallory stays
# superuser on the --to server).
#   the move fails, naming the partition, the shard stays where it was, and
#   her code never runs as a superuser.
# On PostgreSQL 16+ the subscription applies as the table's owner: skipped.
. "$(dirname "$0")/lib.bash"
move_servers 350 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
as_mallory() { local p=$1; shift; "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=terse -d "$(conn "$p") user=mallory" "$@"; }
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE ROLE mallory LOGIN;
CREATE SCHEMA mallory AUTHORIZATION mallory;
SET ROLE mallory;
CREATE SEQUENCE mallory.hits;
CREATE FUNCTION mallory.strike() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
        PERFORM pg_catalog.nextval('mallory.hits');
        BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
    END IF;
    RETURN true;
END $$;
CREATE FUNCTION mallory.strike_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NEW; END $$;
RESET ROLE;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
SET ROLE mallory;
CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0005.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
hits() { on "$1" -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mallory.hits"; }
no_superuser_code() {	# no_superuser_code WHAT
	local p
	for p in $a $b; do
		expect "$(hits "$p")" = 0 "$1: her code ran as a superuser on server $p"
		expect "$(on "$p" -c "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'")" = f \
			"$1: mallory superuser on server $p"
	done
}

rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=subscribe SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move1.log" 2>&1 &
pid=$!
wait_until "the move paused before the subscription" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move1.log"; finish; }
as_mallory "$b" >/dev/null <<'SQL' || fail "her partitioned m on the --to server (test of the test)"
DROP TABLE shard_0005.m;
CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text) PARTITION BY RANGE (id);
CREATE TABLE mallory.evil PARTITION OF shard_0005.m DEFAULT;
CREATE TRIGGER strike BEFORE INSERT ON mallory.evil FOR EACH ROW EXECUTE FUNCTION mallory.strike_trg();
ALTER TABLE mallory.evil ENABLE ALWAYS TRIGGER strike;
SQL
rm -f "$marker"
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move1.log"
expect "$status" = 1 "the move whose table she made partitioned, into her own schema: exit status"
grep -q "^shardid-move: error: table shard_0005.m has partition mallory.evil of role mallory outside the schema: the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, and the move cannot keep the partition from its owner (changed on the --to server after the copy of the definitions)$" \
	"$SHARDID_TMP/move1.log" || fail "the error names her partition"
grep -q "a table of schema \"shard_0005\" changed on the --to server after the copy of its definitions, which the subscription would run as a superuser" \
	"$SHARDID_TMP/move1.log" || fail "the move's failure"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on the --from server"
expect "$(on "$a" -c "INSERT INTO shard_0005.m VALUES (1000, 'after') RETURNING id")" = 1000 "shard 5 takes writes where it was"
no_superuser_code "the move"
finish
