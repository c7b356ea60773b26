#!/usr/bin/env bash
# Every kind of code a table's owner can attach, on tables of a shard
# schema that mallory may create in, and every administrative entry point
# of the extension run over them by a superuser: none of her code runs.
# (shardid-move's entry points: test/cluster/move_security.sh.)
. "$(dirname "$0")/../lib.sh" servers
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

attacker_setup mallory
q >/dev/null <<'SQL'
CREATE SCHEMA tpl;
CREATE TABLE tpl.items (id bigint PRIMARY KEY, name text);
SELECT count(*) FROM shardid.create_shards('tpl', ARRAY[5]);
GRANT USAGE, CREATE ON SCHEMA shard_0005 TO mallory;
SQL
# each payload kind, on a table of her own in the shard schema, with a row
# of another shard for the doctor to find
q >/dev/null <<'SQL'
SET ROLE mallory;
CREATE FUNCTION mallory.f(integer) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT mallory.hit()';
CREATE FUNCTION mallory.g(integer) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 1 WHERE mallory.hit()';
CREATE FUNCTION mallory.trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM mallory.hit(); RETURN NEW; END$$;
CREATE DOMAIN mallory.checked AS integer CHECK (mallory.f(VALUE));
CREATE SEQUENCE shard_0005.loot_id_seq;
CREATE TABLE shard_0005.loot (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('shard_0005.loot_id_seq')),
    v integer CHECK (mallory.f(v)),
    d integer DEFAULT mallory.g(1),
    gen integer GENERATED ALWAYS AS (mallory.g(v)) STORED,
    c mallory.checked);
INSERT INTO shard_0005.loot (id, v, c) VALUES (shardid.make_id(0, 9, 0), 1, 1);
CREATE INDEX loot_partial ON shard_0005.loot (v) WHERE mallory.f(v);
CREATE INDEX loot_expr ON shard_0005.loot (mallory.g(v));
CREATE STATISTICS shard_0005.loot_stats ON (mallory.g(v)), v FROM shard_0005.loot;
CREATE TRIGGER loot_trg BEFORE INSERT OR UPDATE OR DELETE ON shard_0005.loot FOR EACH ROW EXECUTE FUNCTION mallory.trg();
CREATE TRIGGER loot_strg BEFORE TRUNCATE ON shard_0005.loot FOR EACH STATEMENT EXECUTE FUNCTION mallory.trg();
ALTER TABLE shard_0005.loot ENABLE ROW LEVEL SECURITY;
ALTER TABLE shard_0005.loot FORCE ROW LEVEL SECURITY;
CREATE POLICY loot_policy ON shard_0005.loot USING (mallory.f(v));
RESET ROLE;
SELECT setval('mallory.ran', 1, false);
SQL
attacker_check mallory "setting up (nothing ran yet)"

q -v ON_ERROR_STOP=0 >"$SHARDID_TMP/calls.out" 2>&1 <<'SQL'
SELECT problem, object FROM shardid.doctor() WHERE object LIKE 'shard_0005.loot%' ORDER BY 1, 2;
SELECT count(*) FROM shardid.doctor(scan_rows => false);
SELECT table_name, shard, sequence_name FROM shardid.id_defaults WHERE table_name = 'loot';
SELECT * FROM shardid.shards ORDER BY shard;
SELECT shardid.unregister_shard(5), shardid.register_shard(5, 'shard_0005');
SELECT shardid.shard_schema(5), shardid.id_schema(shardid.make_id(0, 5, 0));
SELECT shardid_internal.rows_of_other_shards('shard_0005.loot', 'id', 5);
SELECT count(*) FROM shardid.create_shards('tpl', ARRAY[6]);
CALL shardid.provision_shards('tpl', ARRAY[7]);
SELECT count(*) FROM shardid_internal.foreign_objects();
SQL
grep -q "^ERROR" "$SHARDID_TMP/calls.out" && { fail "an entry point failed:"; grep "^ERROR" "$SHARDID_TMP/calls.out"; }
grep -q "^rows of another shard|shard_0005.loot.id$" "$SHARDID_TMP/calls.out" ||
	fail "doctor() did not find the row of shard 9 in mallory's table: $(cat "$SHARDID_TMP/calls.out")"
attacker_check mallory "every entry point over every payload kind"
finish
