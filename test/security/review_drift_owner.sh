#!/usr/bin/env bash
# The fix of a table that differs from its template is meant to be run by
# whoever reads the doctor, a superuser say.  mallory, who may create
# tables in a shard's schema (a migration role), makes the shard's table of
# a template table's name there, with her own type for a column the
# template has as integer and an assignment cast of hers.  The fix's ALTER
# COLUMN ... TYPE integer converts her rows with her cast: run as given by
# a superuser, her function ran as the superuser.  For a table of a role
# that may not register shards (and whose objects the caller does not
# trust) the doctor gives no statements to run, but says whose table it is
# and to have that role align it (SET ROLE would not do: her function could
# RESET ROLE).
. "$(dirname "$0")/../lib.sh" servers

attacker_setup mallory

q <<'SQL' >/dev/null
CREATE SCHEMA rv_template;
CREATE TABLE rv_template.orders (id bigint PRIMARY KEY, v int);
SELECT count(*) FROM shardid.create_shards('rv_template', ARRAY[41], prefix => 'rv_', use_sequence => true);
-- the template gains a table; mallory makes it in the shard
CREATE TABLE rv_template.items (id bigint PRIMARY KEY, v int);
GRANT USAGE, CREATE ON SCHEMA rv_0041 TO mallory;
SET ROLE mallory;
CREATE TYPE mallory.evil AS ENUM ('a');
CREATE FUNCTION mallory.evil_int(mallory.evil) RETURNS integer LANGUAGE plpgsql AS
$$BEGIN PERFORM mallory.hit(); RETURN 1; END$$;
CREATE CAST (mallory.evil AS integer) WITH FUNCTION mallory.evil_int(mallory.evil) AS ASSIGNMENT;
CREATE SEQUENCE rv_0041.items_seq;
CREATE TABLE rv_0041.items (id bigint PRIMARY KEY DEFAULT shardid.next_id(41, nextval('rv_0041.items_seq')),
                            v mallory.evil);
INSERT INTO rv_0041.items (v) VALUES ('a');
SQL

fix=$(q -c "SELECT fix FROM shardid.doctor(scan_rows => false)
            WHERE problem = 'table differs from its template' AND object = 'rv_0041.items'")
detail=$(q -c "SELECT detail FROM shardid.doctor(scan_rows => false)
               WHERE problem = 'table differs from its template' AND object = 'rv_0041.items'")
case "$detail" in
*"column v is mallory.evil, not integer"*) ;;
*) fail "doctor()'s row for rv_0041.items: '$detail'" ;;
esac
case "$fix" in
*"ALTER COLUMN"*) fail "the fix for mallory's table gives statements for another role to run: '$fix'" ;;
*"belongs to role mallory"*) ;;
*) fail "the fix for mallory's table does not name her: '$fix'" ;;
esac
runs_before=$(attacker_runs mallory)
expect "$runs_before" = 0 "payloads of mallory before the fix ran"

# the superuser does as told
q >/dev/null 2>&1 <<'SQL'
SELECT substring(fix FROM 'To align it with the template: (.*) \(a DROP removes') FROM shardid.doctor(scan_rows => false)
WHERE problem = 'table differs from its template' AND object = 'rv_0041.items' \gexec
SQL
not_superuser mallory "mallory after a superuser ran the doctor's fix of her table"

q -c "DROP SCHEMA rv_0041, rv_template CASCADE" -c "SELECT shardid.unregister_shard(41)" \
	-c "DROP SCHEMA mallory CASCADE" -c "ALTER ROLE mallory NOSUPERUSER" >/dev/null
finish
