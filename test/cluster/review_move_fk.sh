#!/usr/bin/env bash
# test/cluster/review_move_fk.sh: the offline move's pg_restore adds the
# shard's foreign keys as the superuser, and PostgreSQL checks an added key
# (RI_Initial_Check()) with one query run as the role that adds it: a cast
# in that query is code the superuser runs.
#
# mallory owns, on both servers, an enum type mallory.e with an IMPLICIT
# cast to bigint through her function mallory.e2i() (CREATE CAST needs only
# ownership of a type), and in the shard two tables: t_pk (id bigint PRIMARY KEY) and t_fk, whose column r of her
# enum REFERENCES t_pk (id). The key's check converts r with her cast for
# every row; neither table carries an index expression or predicate, so the
# up-front refusal of such tables with a foreign key does not see it
# (shardid-move at cd63044 exits 0 with mallory superuser on the --to
# server).
#   offline a -> b: refused up front, naming table, key, cast and owner;
#   nothing changed, her code never ran as a superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 210 2 || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
-- her type and its cast, on both servers (pg_dump --schema dumps neither)
CREATE TYPE mallory.e AS ENUM ('1', '2', '3');
CREATE FUNCTION mallory.e2i(mallory.e) RETURNS bigint LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM mallory.strike(); RETURN $1::text::bigint; END $$;
CREATE CAST (mallory.e AS bigint) WITH FUNCTION mallory.e2i(mallory.e) AS IMPLICIT;
SQL
done

events_shard "$a" 10 mallory || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.t_pk (id bigint PRIMARY KEY);
INSERT INTO shard_0005.t_pk VALUES (1), (2), (3);
CREATE TABLE shard_0005.t_fk (id bigint PRIMARY KEY, r mallory.e REFERENCES shard_0005.t_pk (id));
INSERT INTO shard_0005.t_fk VALUES (1, '1'), (2, '2');
SQL
# test of the test: a superuser adding the key runs her cast
mallory_strikes "a superuser adding the key runs mallory's cast" "$a" -c "BEGIN; ALTER TABLE shard_0005.t_fk DROP CONSTRAINT t_fk_r_fkey;
	ALTER TABLE shard_0005.t_fk ADD FOREIGN KEY (r) REFERENCES shard_0005.t_pk (id); ROLLBACK" || exit 1
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move of a key converted by her cast: exit status"
for want in \
	'shardid-move: error: table shard_0005.t_fk: foreign key t_fk_r_fkey converts column r from type mallory.e to bigint with a cast, which a role that is no superuser may have made on the --to server, and pg_restore'"'"'s check of the key runs it as a superuser' \
	"shardid-move: error: shard 5 cannot move as it is (see above); nothing was changed"; do
	echo "$out" | grep -qxF -- "$want" || fail "refusal: wanted \"$want\""
done
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "schema on the target"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still on the source"
no_superuser_code "offline move of her key" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
