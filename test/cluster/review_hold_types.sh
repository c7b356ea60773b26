#!/usr/bin/env bash
# test/cluster/review_hold_types.sh: no type of another role in a column's
# type runs her code as the superuser during an online move into
# PostgreSQL 15.
#
# The check of the shape refuses a domain anywhere in a column's type, but
# passed two types of mallory's whose code the apply runs, as the
# superuser, with no expression on the table:
#   1. a range type whose subtype difference function is hers: a GiST index
#      on the column calls it for every row the table sync and the apply
#      insert (shardid-move at cfeee6a exits 0, mallory superuser on the
#      --to server);
#   2. a composite type of hers (in her own schema, which the hold does not
#      take): while the subscription applies, she adds an attribute of her
#      domain to it, on both servers, and inserts a row on the --from
#      server; the apply's input of the row runs the domain's CHECK as the
#      superuser (shardid-move at cfeee6a exits 0, mallory superuser on the
#      --to server).
# Now both tables are refused up front, naming the type, and her code never
# runs as a superuser.  On PostgreSQL 16+ the subscription applies as the
# table's owner: skipped.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 334 2 "${LOGICAL[@]}" || exit 1
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
CREATE FUNCTION mallory.diff(float8, float8) RETURNS float8 IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN $1 - $2; END $$;
CREATE TYPE mallory.rng AS RANGE (SUBTYPE = float8, SUBTYPE_DIFF = mallory.diff);
CREATE TYPE mallory.comp AS (a integer);
CREATE DOMAIN mallory.dom AS integer CHECK (mallory.strike());
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
CREATE SCHEMA shard_0006 AUTHORIZATION mallory;
SELECT shardid.register_shard(6, 'shard_0006');
SET ROLE mallory;
CREATE TABLE shard_0005.r (id bigint PRIMARY KEY, x mallory.rng);
CREATE INDEX ON shard_0005.r USING gist (x);
INSERT INTO shard_0005.r SELECT g, mallory.rng(g, g + 1) FROM generate_series(1, 2000) g;
CREATE TABLE shard_0006.c (id bigint PRIMARY KEY, c mallory.comp);
INSERT INTO shard_0006.c SELECT g, ROW(g)::mallory.comp FROM generate_series(1, 100) g;
SQL
refused() {	# refused LOG TABLE TYPE-TEXT
	grep -q "^shardid-move: error: table $2 of role mallory carries $3: the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, with no way to apply them as the table's owner$" \
		"$1" || fail "the error names table $2"
}

# 1. her range type's difference function
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes 2>&1)
status=$?
echo "$out" >"$SHARDID_TMP/move1.log"
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "the online move of her table with her range type: exit status"
refused "$SHARDID_TMP/move1.log" shard_0005.r "a range type in a column's type whose subtype difference function belongs to a role that is no superuser"
no_superuser_code "the move of her range type" "$a" "$b"
mallory_reset "$a" "$b"	# on the old client, for the next attack

# 2. her composite type, altered during the apply
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=copy SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move2.log" 2>&1 &
pid=$!
wait_until "the move paused while replicating, or ended" \
	sh -c "test -e '$marker' || ! kill -0 $pid 2>/dev/null" || { kill "$pid"; cat "$SHARDID_TMP/move2.log"; finish; }
if [ -e "$marker" ]; then
	for p in $a $b; do
		as_mallory "$p" -c "ALTER TYPE mallory.comp ADD ATTRIBUTE d mallory.dom" || fail "her attribute on server $p"
	done
	as_mallory "$a" -c "INSERT INTO shard_0006.c VALUES (101, ROW(101, 1)::mallory.comp)" || fail "her row on the --from server"
	rm -f "$marker"
fi
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move2.log"
expect "$status" = 1 "the online move of her table with her composite type: exit status"
refused "$SHARDID_TMP/move2.log" shard_0006.c "a composite type of a role that is no superuser in a column's type"
no_superuser_code "the move of her composite type" "$a" "$b"
finish
