#!/usr/bin/env bash
# A role with INSERT on a shard's table must not move the ids of the server
# into the future.
#
# Strict mode starts a shard past the newest id stored in the tables of the
# schema registered for it.  app (INSERT on shard 5's table, nothing more)
# inserts an id 23 h 50 min ahead of H, makes a temporary table (a
# relation cache invalidation: every backend looks again) and calls
# next_id(5), three times: twice rolling the insert back, once committing
# it.  1.2 before this fix read the index with SnapshotAny and followed an
# id up to a day ahead of max(clock, H): H moved a day at each step.  Now
# an id of an aborted transaction is no row and is not read, and a stored
# id is followed only up to shardid.max_lead_ms and the mark's window ahead
# of the clock; the committed one is counted (floors_beyond_bound), not followed.
# 1.3 reads stored ids only where a superuser raises the floor (a
# registration, shardid.raise_floor()), never on the id path, so the
# steps' next_id() reads nothing and info()'s floors_beyond_bound (which
# 1.3 counts for floors beyond the bound) stays 0: the script then runs
# raise_floor(5), which must warn about the committed id and not follow it,
# and stored_ids(5) and doctor() must show that one id, not the rolled-back
# ones, beyond the bound.
# Exit 0: H stays within an hour of the clock, only the committed id is
# reported, and shard 5's ids stay near the clock.
SHARDID_TMP=""		# a server of its own: a successful attack spoils H
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server rollback $((SHARDID_PORT_BASE + 69))
q -c "CREATE ROLE app LOGIN" >/dev/null
export PGDATABASE=app
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
CREATE SCHEMA s5;
CREATE TABLE s5.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
SELECT shardid.register_shard(5, 's5');
GRANT USAGE ON SCHEMA s5 TO app;
GRANT INSERT ON s5.t TO app;
SQL

for end in ROLLBACK ROLLBACK COMMIT; do
	q -U app <<SQL 2>&1 | grep -v '^$'
BEGIN;
INSERT INTO s5.t VALUES (shardid.make_id(
    (extract(epoch FROM greatest((SELECT m.high_water_mark FROM shardid.info() m), clock_timestamp())
                        + interval '23 hours 50 minutes') * 1000)::bigint
    - (SELECT i.epoch_ms FROM shardid.info() i), 5, 0));
$end;
CREATE TEMP TABLE x (v int);
SELECT shardid.next_id(5) IS NOT NULL AS made;
SQL
done
out=$(q -c "SELECT shardid.raise_floor(5)" 2>&1)
echo "$out" | grep -q '^WARNING:  table s5\.t holds an id of shard 5 that is' ||
	fail "raise_floor(5) after app's steps: no WARNING naming s5.t: $out"
read -r ahead far <<<"$(q -F' ' -c "
    SELECT round(extract(epoch FROM high_water_mark - clock_timestamp()) / 3600),
           (SELECT count(*) FROM shardid.stored_ids(5) s WHERE s.beyond_id = (SELECT max(id) FROM s5.t))
         + (SELECT count(*) FROM shardid.doctor() WHERE problem = 'stored id beyond the bound')
    FROM shardid.info()")"
echo "after app's three steps and raise_floor(5), H is $ahead hours ahead of the clock; the committed id reported by stored_ids() and doctor(): $far"
expect_le "${ahead:-999}" 1 "hours H is ahead of the clock after app's steps"
expect "${far:-}" = 2 "the committed id reported beyond the bound, once by stored_ids(5) and once by doctor()"
ahead=$(q -c "SELECT round(extract(epoch FROM shardid.id_time(shardid.next_id(5)) - clock_timestamp()))")
echo "shard 5's next id is $ahead s ahead of the clock"
expect_le "${ahead:-999}" 3 "seconds shard 5's next id is ahead of the clock"
cluster_stop rollback
finish
