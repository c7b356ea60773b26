#!/usr/bin/env bash
# A shardid setting of postgresql.conf that PostgreSQL refuses (a value out
# of range) keeps its default with a WARNING in the server's log only:
# shardid.max_lead_ms = 90000 ran with 1 s, and nothing else said so.
# doctor() names it, with the file, the line, the value and the range, for
# a superuser; a role that may not read pg_file_settings gets no row and
# no error.  A corrected file and a reload clear the row.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 175))
app_server settings $port "shardid.max_lead_ms = 90000" || { fail "server did not start"; finish; }
q_at $port -c "CREATE EXTENSION shardid" -c "CREATE ROLE regress_reader LOGIN" >/dev/null
# in force: SHOW once the library is loaded (without preloading, its load
# refuses the value, with a WARNING to that session)
in_force() { q_at $port -c "SET client_min_messages = error" -c "SELECT shardid.max_shard()" -c "SHOW shardid.max_lead_ms" | tail -1; }
expect "$(in_force)" = 1s "the value in force"
row=$(q_at $port -c "SELECT problem || ' | ' || object || ' | ' || detail || ' | ' || fix FROM shardid.doctor(scan_rows => false) WHERE problem = 'setting not applied'")
echo "doctor(): $row"
case "$row" in
"setting not applied | shardid.max_lead_ms | "*"postgresql.conf line "*" sets shardid.max_lead_ms = '90000', which PostgreSQL did not apply"*"the value in force is 1s. Its valid range is 0 to 60000 ms. | Correct the line in "*"postgresql.conf, then SELECT pg_reload_conf();") ;;
*) fail "doctor() on a refused shardid.max_lead_ms: $row" ;;
esac
# (from the start of the session: on 17+ without preloading the login
# trigger loads shardid, whose WARNING of the refused value comes then)
out=$(PGOPTIONS="-c client_min_messages=error" q_at $port -U regress_reader -c "SELECT count(*) FROM shardid.doctor(scan_rows => false) WHERE problem = 'setting not applied'" 2>&1)
expect "$out" = 0 "a role that may not read pg_file_settings"
as_pg sed -i 's/^shardid.max_lead_ms = 90000$/shardid.max_lead_ms = 2000/' "$SHARDID_TMP/settings/postgresql.conf"
reload_conf -p $port -d app
expect "$(q_at $port -c "SELECT count(*) FROM shardid.doctor(scan_rows => false) WHERE problem = 'setting not applied'")" = 0 \
	"the row once the file is corrected and reloaded"
expect "$(in_force)" = 2s "the corrected value in force"
finish
