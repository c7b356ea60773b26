#!/usr/bin/env bash
# A real pg_upgrade carries the shards' floors; the step the README gives
# after it applies them.
#
# Server a makes ids of shard 5 borrowed 3 s ahead of its clock in two
# tables, raises the shard's floor (shardid.raise_floor()), deletes the
# newest 1,000 rows of one table, and stops.  pg_upgrade (same major, into a
# new cluster b) carries the tables and the registry with its floor, but not
# the durable high-water mark H (replication origins are not carried).  b
# starts with its clock 30 s behind a's (so that a's ids are still ahead
# of it after a loaded machine took long over pg_upgrade):
#   - next_id() refuses, naming the step, SELECT shardid.apply_floors(),
#     and still refuses once the origins were made by hand (1.3's message
#     asked for that alone, and then made ids below the floors);
#   - doctor() names the database and the shard whose stored ids b's next
#     ids would not sort after;
#   - after the step (SELECT shardid.apply_floors()), 20,000 new ids per table all
#     sort after every id a made, the deleted ones included (the floor
#     never goes down), and a crash of b right after the step (no id made
#     yet) keeps that (H holds the floor's time).
# Release 1.2 had no floor: its ids after an upgrade followed the stored
# rows only when a backend read them at its first id, and never the
# deleted ones.
. "$(dirname "$0")/../lib.sh" failover

a=$((SHARDID_PORT_BASE + 71))
b=$((a + 1))
app_server a $a "shardid.max_lead_ms = 10000" || exit 1
q_at $a <<'SQL' >/dev/null || fail "setup on a"
CREATE EXTENSION shardid;
CREATE SCHEMA s5;
CREATE TABLE s5.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), phase int);
CREATE TABLE s5.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), phase int);
SELECT shardid.register_shard(5, 's5');
SQL
borrow_ahead 5 3000 -p $a -d app || finish
q_at $a -c "INSERT INTO s5.t (phase) SELECT 1 FROM generate_series(1, 20000);
            INSERT INTO s5.u (phase) SELECT 1 FROM generate_series(1, 20000);" || fail "inserts on a"
newest=$(q_at $a -c "SELECT greatest((SELECT max(id) FROM s5.t), (SELECT max(id) FROM s5.u))")
floor=$(q_at $a -c "SELECT shardid.raise_floor(5)")
expect "$floor" = "$newest" "the floor raised on a"
q_at $a -c "DELETE FROM s5.t WHERE id IN (SELECT id FROM s5.t ORDER BY id DESC LIMIT 1000);
            DELETE FROM s5.u WHERE id IN (SELECT id FROM s5.u ORDER BY id DESC LIMIT 1000);" || fail "deletes on a"
cluster_stop a fast

cluster_init b $b "$strict_conf" "shardid.max_lead_ms = 60000" || exit 1
(cd "$SHARDID_TMP" && as_pg "$PG_BIN/pg_upgrade" -b "$PG_BIN" -B "$PG_BIN" -d "$SHARDID_TMP/a" \
	-D "$SHARDID_TMP/b" -p $a -P $b -U postgres -s "$SHARDID_TMP" >"$SHARDID_TMP/pg_upgrade.log" 2>&1) ||
	{ tail -20 "$SHARDID_TMP/pg_upgrade.log"; fail "pg_upgrade"; finish; }
echo "pg_upgrade: $(grep -c . "$SHARDID_TMP/pg_upgrade.log") lines of output, done"
# shellcheck disable=SC2046
cluster_start b $(faketime_env -30s) || { fail "start b"; finish; }

carried=$(q_at $b -c "SELECT floor_id FROM shardid.shard_registry WHERE shard = 5")
origins=$(q_at $b -c "SELECT count(*) FROM pg_replication_origin WHERE roname LIKE 'shardid%'")
echo "after pg_upgrade: floor $carried carried (a's $floor); shardid origins: $origins"
expect "$carried" = "$floor" "the floor carried by pg_upgrade"
out=$(q_at $b -c "INSERT INTO s5.t (phase) VALUES (2)" 2>&1)
echo "an id right after pg_upgrade: $out"
case "$out" in *"shardid.apply_floors()"*) ;; *) fail "next_id() right after pg_upgrade does not name the step: $out" ;; esac
# what 1.3's message asked for, alone (the origins by hand): still refused,
# since the floors are not applied (1.3 made ids below them here)
if [ "$origins" = 0 ]; then
	q_at $b -c "SELECT pg_replication_origin_create('shardid_high_water'), pg_replication_origin_create('shardid_epoch')" \
		>/dev/null || fail "create the origins"
fi
out=$(q_at $b -c "INSERT INTO s5.t (phase) VALUES (2)" 2>&1)
echo "an id with the origins made by hand: $out"
case "$out" in *"are not applied on this server"*"shardid.apply_floors()"*) ;;
*) fail "next_id() with the origins made by hand but the floors not applied: $out" ;; esac
doctor=$(q_at $b -c "SELECT string_agg(problem || ': ' || object, '; ' ORDER BY problem) FROM shardid.doctor()
                     WHERE problem LIKE 'stored ids ahead%' OR problem = 'floors not applied on this server'")
echo "doctor() before the step: ${doctor:-nothing}"
case "$doctor" in *"floors not applied on this server: database app"*"shard 5: s5."*) ;;
*) fail "doctor() does not name the database and shard 5 before the step: $doctor" ;; esac
expect "$(q_at $b -c "SELECT shardid.apply_floors()")" = 1 "the step: shards whose floors were applied"
# no id made yet: a crash, and the clock further back
cluster_stop b immediate
# shellcheck disable=SC2046
cluster_start b $(faketime_env -35s) || { fail "restart b"; finish; }
q_at $b -c "INSERT INTO s5.t (phase) SELECT 2 FROM generate_series(1, 20000);
            INSERT INTO s5.u (phase) SELECT 2 FROM generate_series(1, 20000);" || fail "inserts on b"
for table in s5.t s5.u; do
	read -r made below dups <<<"$(q_at $b -F' ' -c "
	    SELECT count(*) FILTER (WHERE phase = 2), count(*) FILTER (WHERE phase = 2 AND id <= $floor),
	           count(*) - count(DISTINCT id) FROM $table")"
	echo "after pg_upgrade, the step and a crash: $table: $made new ids, $below not after a's newest (deleted) id, $dups repeated"
	expect "$made $below $dups" = "20000 0 0" "$table after pg_upgrade"
done
cluster_stop b fast
finish
