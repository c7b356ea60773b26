#!/usr/bin/env bash
# Concurrent inserts through the sequence DEFAULT do not burn the shard's
# milliseconds: 8 pgbench clients insert 500-row statements into one shard
# while the server's clock reads 30 s behind the shard's state (within
# shardid.max_lead_ms, set to 60 s here), so that every id is placed by
# the stamping rule alone and none by the clock.
# Then N ids must take exactly ceil(N / 1024) milliseconds of id time,
# whatever order the clients' nextval() results arrive in; the criterion
# allows 10% more.  A rule that takes the given seq & 1023 and moves to the
# next millisecond whenever it is not greater than the last one uses several
# times as many (about 1 ms per 290 ids with 8 clients).  The same for the
# sequence-free DEFAULT, which has always used the shard's counter.
. "$(dirname "$0")/../lib.sh" servers

need_faketime

offset_file="$SHARDID_TMP/faketime.rc"
echo "+0" >"$offset_file"
chmod 644 "$offset_file"
cluster_stop "$SHARDID_CLUSTER"
# shellcheck disable=SC2046
cluster_start "$SHARDID_CLUSTER" $(faketime_env "$offset_file") || { fail "server did not start under libfaketime"; finish; }

q <<'SQL'
CREATE SCHEMA s14;
CREATE SEQUENCE s14.t_id_seq;
CREATE TABLE s14.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(14, nextval('s14.t_id_seq')), v int);
CREATE TABLE s14.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(14), v int);
SELECT shardid.next_id(14) IS NOT NULL AS stamped;	-- the shard's state now holds the real time
SQL

# The shard's state 30 s ahead of the clock must lie within
# shardid.max_lead_ms: past it, a new millisecond of id time waits for one
# of the clock (the lead rule), and the clients' rate, not the stamping
# rule, would decide whether they wait (CI on 17: one clock wait)
q -c "ALTER SYSTEM SET shardid.max_lead_ms = 60000" >/dev/null
reload_conf
expect "$(q -c "SELECT max_lead_ms FROM shardid.info()")" = 60000 "shardid.max_lead_ms for the test"
clients=8 statements=10 rows=500
n=$((clients * statements * rows))
need=$(((n + 1023) / 1024))
for table in s14.t s14.u; do
	waits0=$(q -c "SELECT clock_waits FROM shardid.info()")
	echo "-30" >"$offset_file"
	echo "INSERT INTO $table (v) SELECT g FROM generate_series(1, $rows) g;" >"$SHARDID_TMP/seq14.sql"
	"$PG_BIN/pgbench" -n -c $clients -j 2 -t $statements -f "$SHARDID_TMP/seq14.sql" >"$SHARDID_TMP/seq14.log" 2>&1
	status=$?
	echo "+0" >"$offset_file"
	waits=$(($(q -c "SELECT clock_waits FROM shardid.info()") - waits0))
	read -r count distinct used <<<"$(q -F' ' -c "
	    SELECT count(*), count(DISTINCT id), max(shardid.id_millis(id)) - min(shardid.id_millis(id)) + 1
	    FROM $table")"
	echo "$table: $count rows from $clients clients, $used ms of id time (ceil(N/1024) = $need), clock waits $waits, pgbench exit $status"
	expect "$status" = 0 "$table pgbench exit status"
	expect "$count" = "$n" "$table rows"
	expect "$distinct" = "$n" "$table distinct ids"
	expect_le "$used" $(((need * 11 + 9) / 10)) "$table ms of id time for $n ids"
	expect "$waits" = 0 "$table clock waits"
done

q -c "ALTER SYSTEM RESET shardid.max_lead_ms" >/dev/null
cluster_stop "$SHARDID_CLUSTER" immediate
cluster_start "$SHARDID_CLUSTER"
finish
