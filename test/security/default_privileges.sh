#!/usr/bin/env bash
# The installing superuser's default privileges give nobody rights on
# shardid's own objects.
#
# A common setup: ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES (and
# FUNCTIONS) TO app, so that the application's role may use what the
# administrator creates.  CREATE EXTENSION shardid runs as that superuser
# and its tables and functions take those defaults: app gets every
# privilege on shardid.shard_registry and shardid.move_journal (TRIGGER,
# TRUNCATE, UPDATE, SELECT) and EXECUTE on adopt_epoch(),
# raise_high_water() and stored_newest() (1.3: raise_floor() and
# stored_ids(), which replace it), which the script revokes from PUBLIC
# only.  app puts a trigger of its own on the registry; a superuser's
# register_shard() fires it: app's code runs as the superuser.  (TRUNCATE
# also empties the registry past registry_guard, a row trigger; UPDATE,
# from 1.3 on, would let app write a floor of its own.)
# Exit 0: app has no privilege on shardid's tables beyond PUBLIC's, may not
# execute the superusers' functions, and none of its code ran.
. "$(dirname "$0")/../lib.sh" servers
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

q -c "DROP EXTENSION shardid" -c "DROP SCHEMA IF EXISTS shardid" >/dev/null
attacker_setup app
q >/dev/null <<'SQL'
ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO app;
ALTER DEFAULT PRIVILEGES GRANT ALL ON FUNCTIONS TO app;
CREATE EXTENSION shardid;
CREATE SCHEMA s5;
SQL
extra=$(q -c "SELECT string_agg(c.relname || ' ' || a.privilege_type, ', ' ORDER BY 1)
              FROM pg_class c, aclexplode(c.relacl) a
              WHERE c.relnamespace = 'shardid'::regnamespace AND a.grantee = 'app'::regrole")
echo "app's privileges on shardid's tables: ${extra:-none}"
expect "${extra:-none}" = none "app's privileges on shardid's tables after the install"

# shardid_internal, made by the install: no privilege of app's on it or on
# its functions (section 9 cleans schema shardid only)
extra=$(q -c "SELECT string_agg(x, ', ' ORDER BY x) FROM (
                SELECT 'schema ' || a.privilege_type AS x
                FROM pg_namespace n, aclexplode(n.nspacl) a
                WHERE n.nspname = 'shardid_internal' AND a.grantee = 'app'::regrole
                UNION ALL
                SELECT p.proname || ' ' || a.privilege_type
                FROM pg_proc p, aclexplode(p.proacl) a
                WHERE p.pronamespace = 'shardid_internal'::regnamespace AND a.grantee = 'app'::regrole) g")
echo "app's privileges on shardid_internal and its functions: ${extra:-none}"
expect "${extra:-none}" = none "app's privileges on shardid_internal after the install"

for f in "shardid.adopt_epoch()" "shardid.raise_high_water(timestamptz)" "shardid.raise_floor(integer)" "shardid.stored_ids(integer)"; do
	expect "$(q -c "SELECT has_function_privilege('app', '$f', 'EXECUTE')")" = f "app may execute $f after the install"
done

out=$(q -U app 2>&1 <<'SQL'
CREATE FUNCTION app.trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM app.hit(); RETURN NEW; END$$;
CREATE TRIGGER zz_app AFTER INSERT ON shardid.shard_registry FOR EACH ROW EXECUTE FUNCTION app.trg();
SQL
)
echo "app's trigger on the registry: ${out:-created}"
q -c "SELECT shardid.register_shard(5, 's5')" >/dev/null
attacker_check app "a superuser's register_shard()"
q -d postgres -c "ALTER ROLE app NOSUPERUSER" >/dev/null
finish
