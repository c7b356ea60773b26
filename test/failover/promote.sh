#!/usr/bin/env bash
# A primary and a streaming standby made with pg_basebackup -R, the
# standby's clock 10 s behind (libfaketime).  On the standby next_id()
# is refused in both forms while the decoders and range helpers work.
# The primary borrows seconds ahead of its clock in a burst, writes rows
# with those ids, the standby replays them, the primary stops with
# -m immediate, the standby is promoted and inserts go on into the same
# shard tables: no duplicate, every new id greater than every replicated
# id, in both forms, without waiting for the clock to catch up (past the
# lead limit a shard opens one millisecond per millisecond of the clock:
# a few waits of at most a millisecond, never the 10 s).
. "$(dirname "$0")/../lib.sh" failover

primary=$((SHARDID_PORT_BASE + 40))
standby=$((primary + 1))
app_server primary $primary || exit 1
q_at $primary <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s1;
CREATE SEQUENCE s1.t_id_seq;
CREATE TABLE s1.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1, nextval('s1.t_id_seq')), phase int);
CREATE TABLE s1.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(1), phase int);
SQL

standby_of standby $standby $primary -10s || finish

# on the standby: refused in both forms, decoders work
for call in "shardid.next_id(1)" "shardid.next_id(1, 5)" "shardid.next_id(1, nextval('s1.t_id_seq'))"; do
	out=$(q_at $standby -c "SELECT $call" 2>&1)
	echo "standby: SELECT $call -> $(echo "$out" | head -1)"
	case "$out" in
	*"cannot make shardid ids during recovery"* | *"cannot execute nextval() in a read-only transaction"*) ;;
	*) fail "standby made an id with $call: $out" ;;
	esac
done
expect "$(q_at $standby -c "SELECT shardid.id_shard(shardid.make_id(5, 7, 9)) = 7 AND shardid.min_id('2026-06-01+00') < shardid.max_id('2026-06-01+00') AND shardid.id_time(0) = '2026-01-01+00'")" = t "decoders and range helpers on the standby"

# on the primary: a burst that borrows seconds ahead of the clock (the
# primary allows a longer lead than the standby), then rows
q_at $primary -c "ALTER SYSTEM SET shardid.max_lead_ms = 10000" >/dev/null
reload_conf -p $primary -d app
borrow_ahead 1 1000 -p $primary -d app || finish
q_at $primary -c "INSERT INTO s1.t (phase) SELECT 1 FROM generate_series(1, 50000);
                  INSERT INTO s1.u (phase) SELECT 1 FROM generate_series(1, 50000);" || fail "inserts on the primary failed"
lead_rows=$(q_at $primary -c "SELECT round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000) FROM s1.u")
echo "primary: newest row $lead_rows ms ahead of its clock"

# the standby replays everything, then the primary crashes
caught_up $standby $primary
expect "$(q_at $standby -c "SELECT count(*) FROM s1.t") $(q_at $standby -c "SELECT count(*) FROM s1.u")" = "50000 50000" "rows replayed on the standby"
cluster_stop primary immediate
as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/standby" -w promote >/dev/null || fail "promotion failed"

# on the promoted standby (its clock 10 s behind: still behind the
# replicated ids after the replay and promotion on a busy machine too):
# inserts go on at once
waits0=$(q_at $standby -c "SELECT clock_waits FROM shardid.info()")
for i in $(seq 10); do
	q_at $standby -c "INSERT INTO s1.t (phase) SELECT 2 FROM generate_series(1, 2000);
	                  INSERT INTO s1.u (phase) SELECT 2 FROM generate_series(1, 2000);" 2>&1 | head -3
done
expect_ids_after $standby "promoted" replicated s1.t s1.u
read -r behind step waits <<<"$(q_at $standby -F' ' -c "SELECT clock_behind_calls, max_clock_step_back_ms, clock_waits FROM shardid.info()")"
echo "promoted: 40000 rows; clock_behind_calls=$behind max_clock_step_back_ms=$step clock_waits=$((waits - waits0))"
expect_le "$((waits - waits0))" 100 "calls that waited for the clock after the promotion (each at most 1 ms)"
expect_ge "$behind" 1 "calls counted as behind the clock"
cluster_stop standby
finish
