#!/usr/bin/env bash
# The epoch cannot move under existing ids.  Once ids were made, a new
# shardid.epoch (ALTER SYSTEM and reload, or a superuser's SET) makes
# next_id() refuse, in both forms, with an error that names both epochs and
# the way out; the ids' epoch survives a crash.  shardid.adopt_epoch() is
# for superusers only and deliberately starts over under the new epoch.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 44))
app_server epoch $port || exit 1
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s3;
CREATE SEQUENCE s3.t_id_seq;
CREATE TABLE s3.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(3, nextval('s3.t_id_seq')), phase int);
CREATE TABLE s3.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(3), phase int);
INSERT INTO s3.t (phase) SELECT 1 FROM generate_series(1, 1000);
INSERT INTO s3.u (phase) SELECT 1 FROM generate_series(1, 1000);
CREATE ROLE regress_app LOGIN;
GRANT USAGE ON SCHEMA s3 TO regress_app;
GRANT INSERT, SELECT ON s3.t, s3.u TO regress_app;
GRANT USAGE ON SEQUENCE s3.t_id_seq TO regress_app;
SQL
echo "ids' epoch: $(q_at $port -c "SELECT ids_epoch FROM shardid.info()")"
# the remembered epoch survives a crash
cluster_stop epoch immediate
cluster_start epoch || { fail "restart failed"; finish; }

refused() {	# refused HOW SQL...: every insert must fail with the epoch error
	local how=$1 table out
	shift
	for table in s3.t s3.u; do
		out=$(q_at $port "$@" -c "INSERT INTO $table (phase) VALUES (2)" 2>&1)
		case "$out" in
		*"shardid.epoch is 2026-01-01 00:00:01.500+00, but this server's ids were made with epoch 2026-01-01 00:00:00.000+00"*"shardid.adopt_epoch()"*) ;;
		*) fail "$how: insert into $table not refused as expected: $out" ;;
		esac
	done
	echo "$how: refused: $(echo "$out" | head -1)"
}

# ALTER SYSTEM and reload: every session sees the new epoch
q_at $port -c "ALTER SYSTEM SET shardid.epoch = '2026-01-01 00:00:01.5+00'" >/dev/null
reload_conf -p $port -d app
refused "ALTER SYSTEM + reload"
refused "ALTER SYSTEM + reload, a non-superuser" -U regress_app
# a session that was stamping before the reload refuses after it too
out=$({
	echo "ALTER SYSTEM RESET shardid.epoch;"
	reload_in_session
	echo "INSERT INTO s3.u (phase) VALUES (2);"
	echo "ALTER SYSTEM SET shardid.epoch = '2026-01-01 00:00:01.5+00';"
	reload_in_session
	echo "INSERT INTO s3.u (phase) VALUES (2);"
} | q_at $port -f - 2>&1)
case "$out" in *"but this server's ids were made with epoch"*) ;; *) fail "a stamping session did not refuse after the reload: $out" ;; esac
q_at $port -c "ALTER SYSTEM RESET shardid.epoch" >/dev/null
reload_conf -p $port -d app
q_at $port -c "INSERT INTO s3.u (phase) VALUES (2)" >/dev/null || fail "the ids' epoch again: insert failed"

# a superuser's SET
refused "SET by a superuser" -c "SET shardid.epoch = '2026-01-01 00:00:01.5+00'"

# the doctor under a session epoch other than the ids': that row alone (its
# other checks would decode ids under the wrong epoch)
q_at $port -c "CREATE SCHEMA s4" -c "CREATE TABLE s4.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(4))" >/dev/null
rows=$(q_at $port -c "SET shardid.epoch = '2020-01-01 00:00:00+00'" -c "SELECT problem FROM shardid.doctor()")
echo "doctor() under another session epoch: $rows"
expect "$rows" = "epoch differs from the ids' epoch" "doctor() rows under another session epoch"
q_at $port -c "DROP SCHEMA s4 CASCADE" >/dev/null

# adopt_epoch(): not for others, and it starts over for a superuser
out=$(q_at $port -U regress_app -c "SELECT shardid.adopt_epoch()" 2>&1)
case "$out" in *"permission denied"*) ;; *) fail "adopt_epoch() by a non-superuser: $out" ;; esac
adopted=$(q_at $port -c "SET shardid.epoch = '2026-01-01 00:00:01.5+00'" -c "SELECT shardid.adopt_epoch()")
echo "adopted: $adopted"
expect "$(q_at $port -c "SET shardid.epoch = '2026-01-01 00:00:01.5+00'" -c "SELECT shardid.next_id(3) > 0")" = t "stamping under the adopted epoch"
out=$(q_at $port -c "INSERT INTO s3.u (phase) VALUES (3)" 2>&1)
case "$out" in *"but this server's ids were made with epoch 2026-01-01 00:00:01.500+00"*) ;; *) fail "the old epoch after adopt_epoch(): $out" ;; esac
expect "$(q_at $port -c "SELECT ids_epoch FROM shardid.info()")" = "2026-01-01 00:00:01.5+00" "info().ids_epoch after adopt_epoch()"

# the runway: an epoch whose sign bit comes within five years makes
# doctor() say so, with what to do (info().runway is the time left)
adopted=$(q_at $port -c "SET shardid.epoch = '1995-01-01 00:00:00+00'" -c "SELECT shardid.adopt_epoch()")
read -r runway problem <<<"$(q_at $port -F' ' -c "SET shardid.epoch = '1995-01-01 00:00:00+00'" \
	-c "SELECT (SELECT runway < interval '5 years' FROM shardid.info()),
	           (SELECT problem FROM shardid.doctor() WHERE problem = 'sign bit near')")"
echo "epoch 1995: runway under five years: $runway; doctor: $problem"
expect "$runway $problem" = "t sign bit near" "the runway of an epoch 31.9 years ago"
fix=$(q_at $port -c "SET shardid.epoch = '1995-01-01 00:00:00+00'" -c "SELECT fix FROM shardid.doctor() WHERE problem = 'sign bit near'")
case "$fix" in *"shardid.adopt_epoch()"*"repeat"*) ;; *) fail "the runway's fix: $fix" ;; esac
q_at $port -c "SET shardid.epoch = '2026-01-01 00:00:01.5+00'" -c "SELECT shardid.adopt_epoch()" >/dev/null
expect "$(q_at $port -c "SET shardid.epoch = '2026-01-01 00:00:01.5+00'" -c "SELECT count(*) FROM shardid.doctor() WHERE problem IN ('sign bit near', 'epoch differs from the ids'' epoch')")" = 0 "doctor() with a recent epoch"
cluster_stop epoch
finish
