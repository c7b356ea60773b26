#!/usr/bin/env bash
# Ids are never below the data: a shard starts past the newest id stored in
# its tables, whatever the mark says, once its floor is raised
# (registration, shardid.raise_floor()).
#
# 1. The high-water mark lost (its replication origin dropped and created
#    again by hand; 1.2's pg_replication_origin_advance to 0/1 no longer
#    loses it: the mark is back after the crash), a crash, a restart with
#    the clock 10 s back: doctor() reports
#    the shard ('stored ids ahead of the shard''s ids', fix
#    shardid.raise_floor()), and after the documented step, SELECT
#    shardid.raise_floor(shard) FROM shardid.shard_registry as a superuser,
#    new ids sort after the stored ones.  (1.1: all 20,000 new ids sorted
#    before them.  1.2 read the stored ids at the first id of each backend;
#    1.3 reads no table on the id path, so losing H is repaired by that
#    step, as after pg_upgrade.)
# 2. pg_dump -n of a shard whose ids borrowed seconds ahead, restored with
#    psql into a server whose clock is 3 s behind: inserts go on without a
#    duplicate key, every new id after every restored one.  (1.1: the first
#    insert failed with a duplicate key.)
# 3. shardid.stored_ids() (1.2's stored_newest(), dropped in 1.3) finds the
#    newest id of a shard in each indexed table, and doctor() names the
#    table without an index on its id column (1.2 counted it as skipped);
#    both are for superusers only, as shardid.raise_high_water(), which
#    moves ids past the moment given; a stored id further ahead of the
#    clock than shardid.max_lead_ms and the mark's window (given by hand)
#    is reported by shardid.raise_floor() (a WARNING) and doctor() ('stored
#    id beyond the bound'; 1.2 counted it in mark_status()'s
#    stored_too_far, which 1.3 counts for floors beyond the bound only),
#    not followed.
# Stored ids are read only in the schema shardid.shard_registry names for
# the shard: the schemas are registered, on b after the restore.  b allows
# a lead of 60 s, so that it follows the restored ids of a (its clock 3 s
# ahead, its ids borrowing seconds more).
. "$(dirname "$0")/../lib.sh" failover

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
CREATE SCHEMA s7;
CREATE TABLE s7.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), phase int);
SELECT shardid.register_shard(6, 's6'), shardid.register_shard(7, 's7');
-- made after the registration, which refuses an id column it cannot read
CREATE TABLE s6.noindex (id bigint DEFAULT shardid.next_id(6), phase int);
SQL

# 1. the mark lost by hand, a crash, the clock 10 s back
q_at $a -c "INSERT INTO s7.t (phase) SELECT 1 FROM generate_series(1, 20000)" || fail "insert into s7.t"
q_at $a -c "SELECT pg_replication_origin_drop('shardid_high_water')" \
	-c "SELECT pg_replication_origin_create('shardid_high_water')" >/dev/null || fail "the mark dropped and created again"
cluster_stop a immediate
# shellcheck disable=SC2046
cluster_start a $(faketime_env -10s) || { fail "restart with the clock 10 s back"; finish; }
read -r n fix <<<"$(q_at $a -F' ' -c "
    SELECT count(*), min(fix) FROM shardid.doctor()
    WHERE problem = 'stored ids ahead of the shard''s ids' AND object = 'shard 7: s7.t.id'")"
echo "doctor() after the restart: rows 'stored ids ahead of the shard''s ids' for s7.t: $n, fix: $fix"
expect "$n $fix" = "1 As a superuser: SELECT shardid.raise_floor(7);" "doctor()'s row for s7.t after the mark was lost"
q_at $a -c "SELECT shardid.raise_floor(shard) FROM shardid.shard_registry" >/dev/null || fail "raise_floor() of every registered shard"
q_at $a -c "INSERT INTO s7.t (phase) SELECT 2 FROM generate_series(1, 20000)" 2>&1 | head -3
read -r before after <<<"$(q_at $a -F' ' -c "
    SELECT count(*) FILTER (WHERE phase = 2 AND id < (SELECT max(id) FROM s7.t WHERE phase = 1)),
           count(*) FILTER (WHERE phase = 2)
    FROM s7.t")"
echo "mark lost, crash, clock 10 s back, raise_floor(): $before of $after new ids sort before a stored one"
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
out=$(q_at $b -c "SELECT shardid.register_shard(6, 's6')" 2>&1)
case "$out" in *'the ids of column "id" of table s6.noindex cannot be read: it is in no index'*'HINT:  Run ALTER TABLE s6.noindex ADD PRIMARY KEY (id); then register the shard again.'*) ;;
*) fail "registering s6 on b with s6.noindex: $out" ;; esac
q_at $b -c "DROP TABLE s6.noindex" -c "SELECT shardid.register_shard(6, 's6')" \
	-c "CREATE TABLE s6.noindex (id bigint DEFAULT shardid.next_id(6), phase int)" >/dev/null || fail "register s6 on b"
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

# 3. stored_ids(), a table without an index, raise_high_water()
read -r tables match covered <<<"$(q_at $b -F' ' -c "
    SELECT count(*), bool_and(s.newest_id = CASE s.tab WHEN 's6.t'::regclass THEN (SELECT max(id) FROM s6.t)
                                                       WHEN 's6.u'::regclass THEN (SELECT max(id) FROM s6.u) END),
           bool_and(s.covered)
    FROM shardid.stored_ids(6) s")"
unindexed=$(q_at $b -c "SELECT count(*) FROM shardid.doctor() WHERE problem = 'id column the floor cannot read' AND object = 's6.noindex.id'")
echo "stored_ids(6): tables=$tables newest equals max(id): $match covered: $covered; doctor() names s6.noindex: $unindexed"
expect "$tables $match $covered $unindexed" = "2 t t 1" "stored_ids(6) and doctor()"
q_at $b -c "CREATE ROLE plain LOGIN" >/dev/null
out=$(PGUSER=plain q_at $b -c "SELECT shardid.raise_high_water(now() + interval '1 hour')" 2>&1)
echo "raise_high_water as a plain role: $out"
expect "$out" = "ERROR:  permission denied for function raise_high_water" "raise_high_water refused to a plain role"
out=$(PGUSER=plain q_at $b -c "SELECT shardid.stored_ids(6)" 2>&1)
expect "$out" = "ERROR:  permission denied for function stored_ids" "stored_ids refused to a plain role"
read -r raised later <<<"$(q_at $b -F' ' -c "
    SELECT shardid.raise_high_water(now() + interval '1 hour') > now() + interval '1 hour' - interval '1 ms',
           shardid.id_time(shardid.next_id(9)) > now() + interval '1 hour'")"
echo "raise_high_water(now() + 1 hour): mark at or past it: $raised; next id after it: $later"
expect "$raised $later" = "t t" "raise_high_water"
expect "$(q_at $b -c "SELECT high_water_origin AND epoch_origin AND high_water_ahead_ms > 3500000 FROM shardid.info()")" = t "info() after the raise"
# an id given by hand 30 days ahead is reported and counted, not followed
q_at $b -c "CREATE SCHEMA s8" -c "CREATE TABLE s8.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(8))" \
	-c "SELECT shardid.register_shard(8, 's8')" \
	-c "INSERT INTO s8.t VALUES (shardid.min_id(now() + interval '30 days') + (8 << 10))" >/dev/null
out=$(q_at $b -c "SELECT shardid.raise_floor(8)" 2>&1)
echo "$out" | grep -q '^WARNING:  table s8\.t holds an id of shard 8 that is' || fail "raise_floor(8) with an id 30 days ahead: no WARNING naming s8.t: $out"
read -r near far <<<"$(q_at $b -F' ' -c "
    SELECT shardid.id_time(shardid.next_id(8)) < now() + interval '2 days',
           (SELECT count(*) FROM shardid.doctor() WHERE problem = 'stored id beyond the bound' AND object = 'shard 8: s8.t.id')")"
echo "an id 30 days ahead stored in s8.t: next id of shard 8 within 2 days: $near; doctor() rows for it: $far"
expect "$near $far" = "t 1" "a stored id 30 days ahead"
# a table in a schema not registered for its shard is not read
q_at $b -c "CREATE SCHEMA s9" -c "CREATE TABLE s9.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9))" \
	-c "INSERT INTO s9.t DEFAULT VALUES" >/dev/null
before=$(q_at $b -c "SELECT count(*) FROM shardid.stored_ids(9)")
q_at $b -c "SELECT shardid.register_shard(9, 's9')" >/dev/null
after=$(q_at $b -c "SELECT count(*) FROM shardid.stored_ids(9)")
echo "s9.t read for shard 9: before registering $before table(s), after $after"
expect "$before $after" = "0 1" "tables of shard 9 read before and after registering s9"
cluster_stop a
cluster_stop b
finish
