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
# refused or waited, or her function ran nowhere and is not in the schema.
SHARDID_TMP=""		# a server of its own, with prepared transactions
. "$(dirname "$0")/../lib_script.sh"
. "$(dirname "$0")/lib.bash"
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
out=$(q -c "SET statement_timeout = '90s'" -c "ALTER EXTENSION shardid UPDATE TO '1.2'" 2>&1) && out="updated"
echo "the update: $(echo "$out" | head -1)"
q -U alice -c "COMMIT PREPARED 'plant'" >/dev/null 2>&1
q -c "SELECT shardid.id_shard(5120)" >/dev/null 2>&1
attacker_check alice "a superuser's shardid.id_shard(5120) after the update"
left=$(q -c "SELECT count(*) FROM pg_proc WHERE pronamespace = 'shardid'::regnamespace AND proowner = 'alice'::regrole")
expect "$left" = 0 "functions of alice in schema shardid after the update"
finish
