#!/usr/bin/env bash
# A shard's floor on a standby and after its promotion.
#
# The primary registers a schema whose rows (made on another server whose
# clock was ahead) carry ids 4 s ahead of its clock; the registration
# raises the floor and, durably, H.  The standby (its clock 2 s behind the
# primary's) replays both: doctor() and shardid.stored_ids() run there,
# also with an unlogged table in the schema (reading its file during
# recovery failed: "could not open file"), and after the primary is killed
# (-m immediate) and the standby promoted, 20,000 new ids all sort after
# the registered rows, though no id of the shard was made on the primary
# after the registration.
. "$(dirname "$0")/../lib.sh" failover

primary=$((SHARDID_PORT_BASE + 77))
standby=$((primary + 1))
app_server primary $primary "shardid.max_lead_ms = 10000" "wal_level = replica" || exit 1
q_at $primary <<'SQL' >/dev/null || fail "setup"
CREATE EXTENSION shardid;
CREATE SCHEMA s4;
CREATE TABLE s4.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(4), phase int);
CREATE UNLOGGED TABLE s4.scratch (id bigint PRIMARY KEY);
-- rows made where the clock was 4 s ahead (1,024 ids a millisecond)
INSERT INTO s4.t
SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp() + interval '4 s')) + m, 4, g), 1
FROM generate_series(0, 1023) g, generate_series(0, 9) m;
INSERT INTO s4.scratch VALUES (shardid.make_id(1, 4, 0));
SQL
q_at $primary -c "SELECT shardid.register_shard(4, 's4')" >/dev/null || fail "register s4"
registered=$(q_at $primary -c "SELECT floor_id FROM shardid.shard_registry WHERE shard = 4")
newest=$(q_at $primary -c "SELECT max(id) FROM s4.t")
expect "$registered" = "$newest" "the floor raised by the registration"
standby_of standby $standby $primary -2s || finish
lsn=$(q_at $primary -c "SELECT pg_current_wal_lsn()")
wait_until "the standby replays the registration" replayed_to $standby "$lsn" || finish

out=$(q_at $standby -c "SELECT string_agg(tab::text, ',') FROM shardid.stored_ids(4)" -c "SELECT count(*) FROM shardid.doctor()" 2>&1)
echo "on the standby: stored_ids() and doctor(): $(echo "$out" | tr '\n' ' ')"
case "$out" in *ERROR*) fail "stored_ids() or doctor() on the standby: $out" ;; esac

cluster_stop primary immediate
as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/standby" -w promote >/dev/null || fail "promotion failed"
wait_until "the promoted standby takes writes" q_at $standby -c "SELECT NOT pg_is_in_recovery() OR NULL" || finish
q_at $standby -c "INSERT INTO s4.t (phase) SELECT 2 FROM generate_series(1, 20000)" || fail "inserts after the promotion"
read -r made below <<<"$(q_at $standby -F' ' -c "
    SELECT count(*) FILTER (WHERE phase = 2), count(*) FILTER (WHERE phase = 2 AND id <= $newest) FROM s4.t")"
echo "promoted standby: $made new ids, $below not after the registered rows"
expect "$made $below" = "20000 0" "new ids after the promotion"
cluster_stop standby fast
finish
