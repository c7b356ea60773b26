#!/usr/bin/env bash
# An update takes schema shardid over and waits for the writing
# transactions of the roles that could create in it (section 0, and the
# 1.0--1.1 part), but a prepared transaction is no session: it is not in
# pg_stat_activity, and what it made is not seen by the object checks.
#
# alice owns schema shardid (she made it before her trusted 1.0 install).
# On a server with max_prepared_transactions > 0 she creates
# shardid.id_shard(integer) in a transaction and PREPAREs it.  The
# superuser's ALTER EXTENSION shardid UPDATE to 1.2 succeeds; alice then
# runs COMMIT PREPARED, and her function is in the superuser's schema
# shardid.  A superuser's SELECT shardid.id_shard(5120) (an integer
# literal: her overload is the exact match) runs it.  Exit 0: the update
# refuses while the schema is hers, while her prepared transaction is
# pending, and while her function is in the schema.
SHARDID_TMP=""		# a server of its own, with prepared transactions
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

port=$((SHARDID_PORT_BASE + 63))
cluster_init prepared $port "max_prepared_transactions = 5" || exit 1
cluster_start prepared || exit 1
use_cluster $port
q -c "CREATE DATABASE app" >/dev/null
export PGDATABASE=app
attacker_setup alice
q >/dev/null <<'SQL'
CREATE SCHEMA shardid AUTHORIZATION alice;
CREATE EXTENSION shardid VERSION '1.0';
SQL
q -U alice >/dev/null <<'SQL'
BEGIN;
CREATE FUNCTION shardid.id_shard(integer) RETURNS integer LANGUAGE sql AS 'SELECT 0 WHERE alice.hit()';
PREPARE TRANSACTION 'plant';
SQL
update() {	# update EXPECTED-ERROR
	local out
	out=$(q -c "SET statement_timeout = '90s'" -c "ALTER EXTENSION shardid UPDATE TO '1.2'" 2>&1) && out="updated"
	echo "the update: $(echo "$out" | head -1)"
	case "$out" in
	*"$1"*) ;;
	*) fail "the update, expected '$1': $out" ;;
	esac
}
# (1.2) the schema is hers: refused; the superuser takes it as told
update 'schema "shardid" belongs to role "alice", which is not a superuser'
q -c "ALTER SCHEMA shardid OWNER TO postgres" -c "REVOKE ALL ON SCHEMA shardid FROM PUBLIC CASCADE" \
	-c "GRANT USAGE ON SCHEMA shardid TO PUBLIC" >/dev/null
# her prepared transaction could still add to the schema: refused
update 'prepared transactions of roles other than superusers are pending in this database'
q -U alice -c "COMMIT PREPARED 'plant'" >/dev/null 2>&1
# what it made is seen now
update 'schema "shardid" holds objects that are not part of extension shardid'
attacker_check alice "the update, while alice's prepared transaction lived and after"
version=$(q -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'")
expect "$version" = 1.0 "the extension's version while her function is in the schema"
finish
