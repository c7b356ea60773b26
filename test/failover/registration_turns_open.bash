#!/usr/bin/env bash
# Not part of the suite (test/run.sh runs *.sh): interleavings of
# registration and the floor step that registration_turns.sh does not hold
# (its key_after_read was here until registration kept the locks of the
# tables it read), kept to reproduce them.  Prints what happens; run as
#   PG_CONFIG=... bash test/failover/registration_turns_open.bash
#   upgrade_schema two transactions build an index in schema s2; one then
#                  registers s2 (waits for the other's index), the other
#                  writes the first's table: "deadlock detected" (before
#                  ba883c5 no deadlock, and the registration did not see
#                  the other's uncommitted index).
#   stall_schema   CREATE INDEX in a schema whose registration is open waits
#                  for its commit (lock_timeout = '1s'); pg_locks shows it.
SHARDID_PRELOAD=1
. "$(dirname "$0")/../lib.sh" failover
port=$((SHARDID_PORT_BASE + 191))
app_server x "$port" "shardid.max_lead_ms = 10000" "deadlock_timeout = '100ms'" || { fail "server"; finish; }
{ q_at "$port" -c "CREATE EXTENSION shardid" && interleave_sql | q_at "$port"; } >/dev/null ||
	{ fail "setup"; finish; }

echo "== upgrade_schema"
q_at "$port" >/dev/null -c "CREATE SCHEMA s2; CREATE TABLE s2.t (id bigint PRIMARY KEY, v int); CREATE TABLE s2.u (id bigint PRIMARY KEY, v int)"
session a2 "BEGIN; CREATE INDEX ON s2.t (v); SELECT pg_sleep(0.5); SELECT shardid.register_shard(2, 's2'); COMMIT"
session b2 "BEGIN; CREATE INDEX ON s2.u (v); SELECT pg_sleep(1); INSERT INTO s2.t VALUES (1, 1); COMMIT"
wait
echo "a2: $(session_out a2)"; echo "b2: $(session_out b2)"

echo "== stall_schema"
q_at "$port" >/dev/null -c "CREATE SCHEMA s4; CREATE TABLE s4.t (id bigint PRIMARY KEY, v int)"
session r4 "BEGIN; SELECT shardid.register_shard(4, 's4'); SELECT pg_sleep(2); COMMIT"
sleep 0.5
session i4 "SET lock_timeout = '1s'; CREATE INDEX ON s4.t (v)"
sleep 0.3
q_at "$port" -c "SELECT l.pid, l.locktype, l.classid::regclass, l.objid::regnamespace, l.objsubid, l.mode, l.granted, pg_blocking_pids(l.pid) FROM pg_locks l WHERE l.locktype = 'object' AND l.objsubid = 21316"
wait
echo "i4: $(session_out i4)"
finish
