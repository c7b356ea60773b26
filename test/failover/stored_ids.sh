#!/usr/bin/env bash
# Ids are never below the data: a shard starts past the newest id stored in
# its tables, whatever the mark says.
#
# 1. The high-water mark set back by hand (pg_replication_origin_advance to
#    0/1), a crash, a restart with the clock 10 s back: new ids sort after
#    the stored ones.  (1.1: all 20,000 new ids sorted before them.)
# 2. pg_dump -n of a shard whose ids borrowed seconds ahead, restored with
#    psql into a server whose clock is 3 s behind: inserts go on without a
#    duplicate key, every new id after every restored one.  (1.1: the first
#    insert failed with a duplicate key.)
# 3. shardid.stored_newest() finds the newest id of a shard and counts a
#    table without an index on its id column as skipped;
#    shardid.raise_high_water() is for superusers only and moves ids past
#    the moment given; a stored id further ahead of the clock than
#    shardid.max_lead_ms and the mark's window (given by hand) is counted in
#    mark_status(), not followed.
# Stored ids are read only in the schema shardid.shard_registry names for
# the shard: the schemas are registered, on b after the restore.  b allows
# a lead of 60 s, so that it follows the restored ids of a (its clock 3 s
# ahead, its ids borrowing seconds more).
. "$(dirname "$0")/common.bash"

a=$((SHARDID_PORT_BASE + 55))
b=$((a + 1))
app_server -c -3s b $b "shardid.max_lead_ms = 60000" || exit 1
app_server a $a "shardid.max_lead_ms = 10000" || exit 1
for port in $a $b; do
	q_at $port -c "CREATE EXTENSION shardid" >/dev/null
done
q_at $a <<'SQL' >/dev/null
CREATE SCHEMA s6;
CREATE SEQUENCE s6.t_id_seq;
CREATE TABLE s6.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, nextval('s6.t_id_seq')), phase int);
CREATE TABLE s6.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(6), phase int);
CREATE TABLE s6.noindex (id bigint DEFAULT shardid.next_id(6), phase int);
CREATE SCHEMA s7;
CREATE TABLE s7.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), phase int);
SELECT shardid.register_shard(6, 's6'), shardid.register_shard(7, 's7');
SQL

# 1. the mark set back by hand, a crash, the clock 10 s back
q_at $a -c "INSERT INTO s7.t (phase) SELECT 1 FROM generate_series(1, 20000)" || fail "insert into s7.t"
q_at $a -c "SELECT pg_replication_origin_advance('shardid_high_water', '0/1')" >/dev/null
cluster_stop a immediate
# shellcheck disable=SC2046
cluster_start a $(faketime_env -10s) || { fail "restart with the clock 10 s back"; finish; }
q_at $a -c "INSERT INTO s7.t (phase) SELECT 2 FROM generate_series(1, 20000)" 2>&1 | head -3
read -r before after <<<"$(q_at $a -F' ' -c "
    SELECT count(*) FILTER (WHERE phase = 2 AND id < (SELECT max(id) FROM s7.t WHERE phase = 1)),
           count(*) FILTER (WHERE phase = 2)
    FROM s7.t")"
echo "mark set back, crash, clock 10 s back: $before of $after new ids sort before a stored one"
expect "$after" = 20000 "rows inserted after the restart"
expect "$before" = 0 "new ids sorting before stored ones"
cluster_stop a fast
cluster_start a || { fail "restart with the true clock"; finish; }

# 2. a shard whose ids borrowed seconds ahead, dumped and restored into b
borrow_ahead 6 1000 -p $a -d app || finish
q_at $a -c "INSERT INTO s6.t (phase) SELECT 1 FROM generate_series(1, 20000);
            INSERT INTO s6.u (phase) SELECT 1 FROM generate_series(1, 20000);
            INSERT INTO s6.noindex (phase) SELECT 1 FROM generate_series(1, 10);" || fail "inserts on a"
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p $a -U postgres -d app -n s6 >"$SHARDID_TMP/s6.sql" || fail "pg_dump"
q_at $b -f "$SHARDID_TMP/s6.sql" >/dev/null || fail "restore into b"
q_at $b -c "SELECT shardid.register_shard(6, 's6')" >/dev/null || fail "register s6 on b"
out=$(q_at $b -c "INSERT INTO s6.t (phase) SELECT 2 FROM generate_series(1, 20000);
                  INSERT INTO s6.u (phase) SELECT 2 FROM generate_series(1, 20000);" 2>&1)
echo "restored into a server 3 s behind; inserts: ${out:-ok}"
expect "$out" = "" "inserts after the restore"
for table in s6.t s6.u; do
	read -r rows distinct later <<<"$(q_at $b -F' ' -c "
	    SELECT count(*), count(DISTINCT id),
	           (SELECT min(id) FROM $table WHERE phase = 2) > (SELECT max(id) FROM $table WHERE phase = 1)
	    FROM $table")"
	echo "restored: $table rows=$rows distinct=$distinct new ids after the restored ones: $later"
	expect "$rows $distinct $later" = "40000 40000 t" "$table after the restore"
done

# 3. stored_newest(), a table without an index, raise_high_water()
read -r newest tables unindexed match <<<"$(q_at $b -F' ' -c "
    SELECT s.newest_id IS NOT NULL, s.tables, s.unindexed,
           s.newest_id = (SELECT max(id) FROM (SELECT id FROM s6.t UNION ALL SELECT id FROM s6.u) x)
    FROM shardid.stored_newest(6) s")"
echo "stored_newest(6): found=$newest tables=$tables unindexed=$unindexed equals max(id): $match"
expect "$tables $unindexed $match" = "3 1 t" "stored_newest(6)"
q_at $b -c "CREATE ROLE plain LOGIN" >/dev/null
out=$(PGUSER=plain q_at $b -c "SELECT shardid.raise_high_water(now() + interval '1 hour')" 2>&1)
echo "raise_high_water as a plain role: $out"
expect "$out" = "ERROR:  permission denied for function raise_high_water" "raise_high_water refused to a plain role"
out=$(PGUSER=plain q_at $b -c "SELECT shardid.stored_newest(6)" 2>&1)
expect "$out" = "ERROR:  permission denied for function stored_newest" "stored_newest refused to a plain role"
read -r raised later <<<"$(q_at $b -F' ' -c "
    SELECT shardid.raise_high_water(now() + interval '1 hour') > now() + interval '1 hour' - interval '1 ms',
           shardid.id_time(shardid.next_id(9)) > now() + interval '1 hour'")"
echo "raise_high_water(now() + 1 hour): mark at or past it: $raised; next id after it: $later"
expect "$raised $later" = "t t" "raise_high_water"
expect "$(q_at $b -c "SELECT high_water_origin AND epoch_origin AND high_water_ahead_ms > 3500000 FROM shardid.mark_status()")" = t "mark_status() after the raise"
# an id given by hand 30 days ahead is counted, not followed
q_at $b -c "CREATE SCHEMA s8" -c "CREATE TABLE s8.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(8))" \
	-c "SELECT shardid.register_shard(8, 's8')" \
	-c "INSERT INTO s8.t VALUES (shardid.min_id(now() + interval '30 days') + (8 << 10))" >/dev/null
read -r near far <<<"$(q_at $b -F' ' -c "
    SELECT shardid.id_time(shardid.next_id(8)) < now() + interval '2 days',
           (SELECT stored_too_far FROM shardid.mark_status())")"
echo "an id 30 days ahead stored in s8.t: next id of shard 8 within 2 days: $near; stored_too_far=$far"
expect "$near $far" = "t 1" "a stored id 30 days ahead"
# a table in a schema not registered for its shard is not read
q_at $b -c "CREATE SCHEMA s9" -c "CREATE TABLE s9.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9))" \
	-c "INSERT INTO s9.t DEFAULT VALUES" >/dev/null
before=$(q_at $b -c "SELECT tables FROM shardid.stored_newest(9)")
q_at $b -c "SELECT shardid.register_shard(9, 's9')" >/dev/null
after=$(q_at $b -c "SELECT tables FROM shardid.stored_newest(9)")
echo "s9.t read for shard 9: before registering $before table(s), after $after"
expect "$before $after" = "0 1" "tables of shard 9 read before and after registering s9"
cluster_stop a
cluster_stop b
finish
