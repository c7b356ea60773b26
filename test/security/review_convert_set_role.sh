#!/usr/bin/env bash
# convert_table() tells a superuser who does not own the table to SET ROLE
# to its owner first, "so that the owner's code runs as the owner".  SET
# ROLE is no boundary: mallory's table has an integer id with a CHECK of
# hers, which widening the column to bigint evaluates per row; her function
# runs RESET ROLE (or RESET SESSION AUTHORIZATION, after a superuser's SET
# SESSION AUTHORIZATION) and goes on as the superuser; and a setting it
# changes (search_path) outlives the conversion in the superuser's session.
# The widening now runs as the owner in a security-restricted operation:
# her function's RESET ROLE fails, and the conversion with it.
# Exit 0: mallory stays no superuser after each way, and the superuser's
# search_path is his own after a conversion whose CHECK set it.
. "$(dirname "$0")/../lib.sh" servers

attacker_setup mallory

q >/dev/null <<'SQL'
SET ROLE mallory;
CREATE FUNCTION mallory.reset_role(bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
    RESET ROLE;
    IF current_user <> 'mallory' THEN PERFORM mallory.hit(); END IF;
    RETURN true;
END $f$;
CREATE FUNCTION mallory.reset_auth(bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
    RESET SESSION AUTHORIZATION;
    IF current_user <> 'mallory' THEN PERFORM mallory.hit(); END IF;
    RETURN true;
END $f$;
CREATE FUNCTION mallory.set_path(bigint) RETURNS boolean LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM pg_catalog.set_config('search_path', 'mallory, pg_catalog', false);
    RETURN true;
END $f$;
CREATE TABLE mallory.by_role (id serial PRIMARY KEY, v int, CHECK (mallory.reset_role(id)));
CREATE TABLE mallory.by_auth (id serial PRIMARY KEY, v int, CHECK (mallory.reset_auth(id)));
CREATE TABLE mallory.by_path (id serial PRIMARY KEY, v int, CHECK (mallory.set_path(id)));
SQL
# her rows, inserted in her own session (where RESET ROLE changes nothing)
q -U mallory -c "INSERT INTO mallory.by_role (v) VALUES (1)" -c "INSERT INTO mallory.by_auth (v) VALUES (1)" \
	-c "INSERT INTO mallory.by_path (v) VALUES (1)" >/dev/null

# the superuser follows the HINT
q -c "SELECT legacy_below FROM shardid.convert_table('mallory.by_role', 5)" >/dev/null 2>"$SHARDID_TMP/su.err"
grep -q "HINT:  SET ROLE mallory; first" "$SHARDID_TMP/su.err" || { cat "$SHARDID_TMP/su.err"; fail "the refusal's HINT"; }
q -c "SET ROLE mallory; SELECT legacy_below FROM shardid.convert_table('mallory.by_role', 5)" \
	>/dev/null 2>"$SHARDID_TMP/role.err"
cat "$SHARDID_TMP/role.err"
attacker_check mallory "convert_table() under SET ROLE mallory"
grep -q 'cannot set parameter "role" within security-definer function' "$SHARDID_TMP/role.err" ||
	fail "RESET ROLE in her CHECK: the error"

q -c "SET SESSION AUTHORIZATION mallory; SELECT legacy_below FROM shardid.convert_table('mallory.by_auth', 5)" \
	>/dev/null 2>"$SHARDID_TMP/auth.err"
cat "$SHARDID_TMP/auth.err"
attacker_check mallory "convert_table() under SET SESSION AUTHORIZATION mallory"
grep -q 'cannot set parameter "session_authorization" within security-definer function' "$SHARDID_TMP/auth.err" ||
	fail "RESET SESSION AUTHORIZATION in her CHECK: the error"

path=$(q 2>&1 <<'SQL'
SET ROLE mallory;
\o /dev/null
SELECT legacy_below FROM shardid.convert_table('mallory.by_path', 5);
\o
RESET ROLE;
SHOW search_path;
SQL
)
echo "$path"
case "$path" in
*'is widened from integer to bigint'*) ;;
*) fail "the conversion under her CHECK that sets search_path" ;;
esac
expect "$(echo "$path" | tail -n 1)" = '"$user", public' "the superuser's search_path after the conversion"
expect "$(q -c "SELECT count(*) FROM shardid.legacy_ids WHERE tab::text LIKE 'mallory.%'")" = 1 "converted tables (by_path only)"

q -c "SET client_min_messages = warning; DELETE FROM shardid.legacy_ids WHERE tab::text LIKE 'mallory.%'; DROP SCHEMA mallory CASCADE; ALTER ROLE mallory NOSUPERUSER" >/dev/null
finish
