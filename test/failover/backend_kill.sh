#!/usr/bin/env bash
# A backend is killed with SIGKILL while its shard borrows seconds ahead of
# the clock, and writers commit rows with borrowed ids meanwhile; just
# before, shardid.max_lead_ms was lowered to 0 (reload), so the lead is
# larger than the setting now allows.  The postmaster reinitialises shared
# memory; inserts afterwards must not repeat an id nor sort before any
# committed one, in both forms.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 46))
app_server kill $port "shardid.max_lead_ms = 10000" || exit 1
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s4;
CREATE SEQUENCE s4.t_id_seq;
CREATE TABLE s4.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(4, nextval('s4.t_id_seq')), phase int);
CREATE TABLE s4.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(4), phase int);
SQL

# writers that commit rows while the shard borrows
printf 'INSERT INTO s4.t (phase) SELECT 1 FROM generate_series(1, 100);\nINSERT INTO s4.u (phase) SELECT 1 FROM generate_series(1, 100);\n\\sleep 10 ms\n' \
	>"$SHARDID_TMP/writer.sql"
PGDATABASE=app PGPORT=$port "$PG_BIN/pgbench" -n -c 1 -T 600 -f "$SHARDID_TMP/writer.sql" >"$SHARDID_TMP/writer.log" 2>&1 &
# the burst that borrows ahead, in a backend that will be killed: each
# next_ids() call reserves a million ids, about 977 ms of the shard's time,
# so the shard gets ahead however busy the machine is; it runs until the
# crash (at the 10 s lead it waits for the clock), and the writers commit
# rows with borrowed ids meanwhile
PGAPPNAME=burst q_at $port -c "SELECT count(*) FROM generate_series(1, 1000000) a, LATERAL shardid.next_ids(4, 1000000 + 0 * a) b" >/dev/null 2>&1 &
committed_ahead() {	# the newest committed row is 500 ms ahead of the clock
	lead_before=$(q_at $port -c "SELECT round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000) FROM s4.u")
	[ "${lead_before:-0}" -ge 500 ]
}
wait_until "the newest committed row 500 ms ahead of the clock" committed_ahead
echo "newest committed row $lead_before ms ahead of the clock"
q_at $port -c "ALTER SYSTEM SET shardid.max_lead_ms = 0" >/dev/null
reload_conf -p $port -d app
pid=$(q_at $port -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'burst' LIMIT 1")
[ -n "$pid" ] || fail "the burst backend is not running"
echo "killing backend $pid with SIGKILL, clock now $(q_at $port -c "SELECT clock_timestamp()")"
kill -9 "$pid"
wait
reinitialised() { grep -q "all server processes terminated; reinitializing" "$SHARDID_TMP/kill.log"; }
wait_until "the postmaster reinitialised after the crash" reinitialised
ready $port || { fail "server did not come back after the crash"; finish; }
# the postmaster has reinitialised: committed rows are all there is
q_at $port -c "INSERT INTO s4.t (phase) SELECT 2 FROM generate_series(1, 20000);
               INSERT INTO s4.u (phase) SELECT 2 FROM generate_series(1, 20000);" 2>&1 | head -3
for table in s4.t s4.u; do
	read -r rows distinct after old <<<"$(q_at $port -F' ' -c "
	    SELECT count(*), count(DISTINCT id),
	           (SELECT min(id) FROM $table WHERE phase = 2) > (SELECT max(id) FROM $table WHERE phase = 1),
	           count(*) FILTER (WHERE phase = 1)
	    FROM $table")"
	echo "after the crash: $table rows=$rows distinct=$distinct (committed before: $old) new ids after the old ones: $after"
	expect "$rows" = $((old + 20000)) "$table rows"
	expect "$distinct" = "$rows" "$table distinct ids"
	expect "$after" = t "$table: every new id greater than every committed one"
done
cluster_stop kill
finish
