-- src/sql/update--1.2--1.3.sql: the update from 1.2 to 1.3, as a delta.
-- make builds shardid--1.2--1.3.sql from section 0 of
-- shardid--1.1--1.2.sql, this file and section 9 of shardid--1.1--1.2.sql.
--
-- Every SQL change of release 1.3 is made in src/sql/shardid.sql and
-- written here too, as the statements that bring a 1.2 install to it
-- (CREATE OR REPLACE, ALTER, new objects with their COMMENT and grants,
-- DROP of what 1.3 no longer has).  sql/upgrade.sql checks that 1.0, 1.1
-- and 1.2 updated to 1.3 are exactly a fresh 1.3 install.
--
-- Each change of 1.3 follows, under a comment saying what it changes and
-- why; the install script is built from src/sql/shardid.sql.

-- citus_tenants: no temporary table and no system schema claims a shard
-- (a set_id() trigger on a role's TEMP table made shard_schema() answer
-- its pg_temp_N for every role)
CREATE OR REPLACE VIEW citus_tenants AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       c.oid AS table_oid,
       (a.args[1])::integer AS shard,
       (a.args[2])::name AS id_column
FROM pg_catalog.pg_trigger t
JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.tgrelid
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
CROSS JOIN LATERAL (SELECT pg_catalog.string_to_array(pg_catalog.encode(t.tgargs, 'escape'), '\000') AS args) a
WHERE t.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid
  AND t.tgnargs OPERATOR(pg_catalog.=) 2
  AND a.args[1] OPERATOR(pg_catalog.~) '^[0-9]{1,4}$'
  AND c.relpersistence OPERATOR(pg_catalog.<>) 't'
  AND n.nspname OPERATOR(pg_catalog.!~) '^pg_'
  AND n.nspname OPERATOR(pg_catalog.<>) 'information_schema'
  AND pg_catalog.has_table_privilege(c.relowner, 'shardid.shard_registry'::pg_catalog.regclass, 'INSERT');
