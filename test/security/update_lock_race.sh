#!/usr/bin/env bash
# An update from 1.0 takes schema shardid over from the role that owned it
# for a trusted install, but only in its own transaction: until the update
# commits, every other session still sees that role as the owner, and
# section 0's check of the schema's objects has already run.
#
# alice owns schema shardid (she made it before her trusted 1.0 install).
# Before the superuser's ALTER EXTENSION shardid UPDATE, she reads
# shardid.id_defaults in an open transaction (ACCESS SHARE on the view, no
# transaction id: section 0's wait for her writing transactions does not
# see it).  The update passes section 0 and waits for her lock at CREATE OR
# REPLACE VIEW id_defaults (of the 1.0--1.1 part).  In that same
# transaction she now creates OPERATOR shardid.= (regtype, regtype) and
# commits, which releases the lock: the rest of the update (the
# registrations compare regtypes) calls her operator as the superuser.
# The 1.0--1.1 part's own check then finds the operator and the update
# fails, but only after her code ran as the superuser (a rollback undoes
# ALTER ROLE, not COPY ... TO PROGRAM or a dblink connection); her
# operator stays.  (With schema shardid hers under 1.1, the update to 1.2
# even succeeds: nothing after section 0 looks again.)  Exit 0: none of
# her code ran and no object of hers is left in schema shardid.
. "$(dirname "$0")/../lib.sh" servers
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

q -c "DROP EXTENSION shardid" -c "DROP SCHEMA IF EXISTS shardid" >/dev/null
attacker_setup alice
# what a trusted 1.0 install by alice in a schema of hers left, with a
# shard table so that the update's comparisons have rows
q >/dev/null <<'SQL'
CREATE SCHEMA shardid AUTHORIZATION alice;
CREATE EXTENSION shardid VERSION '1.0';
CREATE SCHEMA s1;
CREATE TABLE s1.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1, 1));
SET ROLE alice;
CREATE FUNCTION alice.trap(regtype, regtype) RETURNS boolean LANGUAGE sql
    AS 'SELECT alice.hit() AND $1::oid OPERATOR(pg_catalog.=) $2::oid';
SQL

fifo=$SHARDID_TMP/alice.fifo
rm -f "$fifo"
mkfifo "$fifo"
"$PG_BIN/psql" -X -q -At -U alice <"$fifo" >"$SHARDID_TMP/alice.out" 2>&1 &
alice=$!
exec 7>"$fifo"
echo "BEGIN; SELECT count(*) FROM shardid.id_defaults; SELECT 'holding';" >&7
wait_until "alice's transaction reads id_defaults" grep -q holding "$SHARDID_TMP/alice.out"

(q -c "SET statement_timeout = '60s'" -c "ALTER EXTENSION shardid UPDATE TO '1.2'" \
	>"$SHARDID_TMP/update.out" 2>&1
echo "rc=$?" >>"$SHARDID_TMP/update.out") &
update=$!
# the update either waits for her lock, or has ended (refused)
blocked() {
	[ -n "$(q -c "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'
	              AND query LIKE 'ALTER EXTENSION shardid UPDATE%'")" ] ||
		grep -q '^rc=' "$SHARDID_TMP/update.out"
}
wait_until "the update waits for alice's lock, or ends" blocked

echo "CREATE OPERATOR shardid.= (LEFTARG = regtype, RIGHTARG = regtype, FUNCTION = alice.trap); COMMIT; SELECT 'committed';" >&7
exec 7>&-
wait $alice
wait $update
echo "alice: $(tr '\n' ' ' <"$SHARDID_TMP/alice.out")"
echo "update: $(tr '\n' ' ' <"$SHARDID_TMP/update.out")"
attacker_check alice "update from 1.0 while alice holds a lock"
# refused at once, before anything could wait for her lock (the schema is
# hers); or, had it gone through, no operator of hers may be left
if grep -q '^rc=0' "$SHARDID_TMP/update.out"; then
	left=$(q -c "SELECT count(*) FROM pg_operator WHERE oprnamespace = 'shardid'::regnamespace
	             AND oprowner = 'alice'::regrole")
	expect "$left" = 0 "operators of alice in schema shardid after the update"
else
	grep -q 'schema "shardid" belongs to role "alice", which is not a superuser' "$SHARDID_TMP/update.out" ||
		fail "the update: $(cat "$SHARDID_TMP/update.out")"
fi
q -d postgres -c "ALTER ROLE alice NOSUPERUSER" >/dev/null
finish
