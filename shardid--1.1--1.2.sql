/* shardid--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.2'" to load this file. \quit

-- Release 1.2.  Every SQL change of the release is in this file.  make
-- builds from it, shardid--1.0.sql and shardid--1.0--1.1.sql:
--   shardid--1.2.sql       the install script: section 0 of this file, then
--                          1.0, the 1.0--1.1 update and the rest of this file
--   shardid--1.0--1.2.sql  the update from 1.0: section 0, the 1.0--1.1
--                          update, the rest of this file
-- so that section 0 is the first thing every install and update runs, and
-- an install and an update give the same objects (sql/upgrade.sql).

-- =====================================================================
-- 0. Schema shardid before anything else runs
-- =====================================================================

-- (section 0: to come)

-- end of section 0 (make splits this file at this line)

-- =====================================================================
-- 1. Security: registry, journal, doctor
-- =====================================================================

-- (section 1: to come)

-- =====================================================================
-- 2. Durable high-water mark and failover
-- =====================================================================

-- (section 2: to come)

-- =====================================================================
-- 3. Bulk ids
-- =====================================================================

-- (section 3: to come)

-- =====================================================================
-- 4. Citus
-- =====================================================================

-- On Citus (schema-based sharding) a column DEFAULT is evaluated on the node
-- that received the statement, which may be any node (Citus evaluates
-- functions in an INSERT's values before routing it), so two nodes make ids
-- for one tenant with separate clocks and counters and repeat ids.  A BEFORE
-- INSERT trigger runs where the tenant's rows are (the placement), whichever
-- node routed the statement, so set_id() makes every id of a tenant on one
-- server, where next_id() keeps them unique.  See doc/citus.md.

-- Trigger arguments: the shard number and the bigint id column.  A row
-- whose id is given keeps it.  The first id a backend makes for a table (a
-- table newly placed here by a schema move, a server promoted from a
-- standby) sorts above every id the table holds, whatever the clocks: the
-- backend reads max(id) once (the inserting role needs SELECT on it) and
-- waits for its clock to pass it, at most 60 s (src/citus.c).
CREATE FUNCTION set_id()
RETURNS trigger
AS 'MODULE_PATHNAME', 'shardid_set_id'
LANGUAGE C;

COMMENT ON FUNCTION set_id() IS
'BEFORE INSERT row trigger (arguments: shard, id column) that gives a row without an id shardid.next_id(shard), on the server that stores the row; for Citus tenant schemas, installed by shardid.citus_use_trigger()';

CREATE FUNCTION citus_use_trigger(tab regclass, shard integer, id_column name DEFAULT 'id')
RETURNS void
AS $$
DECLARE
    typ oid;
    sch name;
    rel name;
BEGIN
    IF shard IS NULL OR shard OPERATOR(pg_catalog.<) 0 OR shard OPERATOR(pg_catalog.>) 8191 THEN
        RAISE EXCEPTION 'shard % is out of range', shard
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = 'A shard number is between 0 and 8191.';
    END IF;
    SELECT a.atttypid, n.nspname, c.relname INTO typ, sch, rel
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
    LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
         AND a.attname OPERATOR(pg_catalog.=) id_column AND a.attnum OPERATOR(pg_catalog.>) 0
         AND NOT a.attisdropped
    WHERE c.oid OPERATOR(pg_catalog.=) tab;
    IF typ IS NULL OR typ OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::pg_catalog.regtype::oid THEN
        RAISE EXCEPTION 'table % has no bigint column "%"', tab, id_column
            USING ERRCODE = 'undefined_column';
    END IF;
    -- the routing node must send no id, so that the trigger makes it where
    -- the row is stored
    EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP DEFAULT', sch, rel, id_column);
    IF EXISTS (SELECT FROM pg_catalog.pg_trigger t
               WHERE t.tgrelid OPERATOR(pg_catalog.=) tab AND t.tgname OPERATOR(pg_catalog.=) 'shardid_set_id') THEN
        EXECUTE pg_catalog.format('DROP TRIGGER shardid_set_id ON %I.%I', sch, rel);
    END IF;
    EXECUTE pg_catalog.format(
        'CREATE TRIGGER shardid_set_id BEFORE INSERT ON %I.%I FOR EACH ROW EXECUTE FUNCTION shardid.set_id(%s, %L)',
        sch, rel, shard, id_column);
END
$$ LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION citus_use_trigger(regclass, integer, name) IS
'make the ids of a Citus tenant table where its rows are stored: drop the id column''s DEFAULT and install the shardid.set_id() trigger for the shard';

REVOKE ALL ON FUNCTION citus_use_trigger(regclass, integer, name) FROM PUBLIC;

-- The tenant tables whose ids set_id() makes, and their shard numbers, read
-- from the triggers, which Citus keeps on every node that has its metadata
-- (the coordinator, the workers' shell tables and the shard tables): the
-- shard <-> tenant mapping without a per-node copy that can drift.
CREATE VIEW citus_tenants AS
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
  AND a.args[1] OPERATOR(pg_catalog.~) '^[0-9]{1,4}$';

GRANT SELECT ON citus_tenants TO PUBLIC;

COMMENT ON VIEW citus_tenants IS
'tables whose ids the shardid.set_id() trigger makes (Citus tenant tables), with their shard number; answers on every node that has Citus metadata';

-- Make a schema of logical shard SHARD a Citus tenant schema whose ids are
-- made where its rows are: citus_schema_distribute() when it is not one yet,
-- then citus_use_trigger() for each table whose id DEFAULT passes SHARD to
-- next_id() (read from the expression tree, shardid.id_defaults).  Run it on
-- the coordinator, e.g. after shardid.create_shards() made the schema with
-- citus.enable_schema_based_sharding off.
CREATE FUNCTION citus_distribute_shard(schema_name name, shard integer)
RETURNS TABLE (table_name name, id_column name)
AS $$
DECLARE
    d record;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_schema') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name)) IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', schema_name
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_schema ds
                   WHERE ds.schemaid OPERATOR(pg_catalog.=)
                         pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name))::oid) THEN
        PERFORM pg_catalog.citus_schema_distribute(pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name)));
    ELSIF EXISTS (SELECT FROM pg_catalog.pg_class c
                  WHERE c.relnamespace OPERATOR(pg_catalog.=)
                        pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name))::oid
                    AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
                    AND NOT c.relispartition
                    AND NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p
                                    WHERE p.logicalrelid OPERATOR(pg_catalog.=) c.oid)) THEN
        -- what shardid.create_shards() leaves when it runs with
        -- citus.enable_schema_based_sharding on: Citus makes only top-level
        -- CREATE TABLE tenant tables
        RAISE EXCEPTION 'schema "%" is a Citus tenant schema with tables that are not distributed', schema_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Tables made inside a function, as shardid.create_shards() makes them, stay local when citus.enable_schema_based_sharding is on.',
                  HINT = 'Drop the schema, make it again with SET citus.enable_schema_based_sharding = off, then call shardid.citus_distribute_shard().';
    END IF;
    FOR d IN SELECT i.table_oid, i.table_name, i.column_name FROM shardid.id_defaults i
             WHERE i.schema_name OPERATOR(pg_catalog.=) citus_distribute_shard.schema_name
               AND i.shard OPERATOR(pg_catalog.=) citus_distribute_shard.shard
               AND i.column_type OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
             ORDER BY i.table_name LOOP
        PERFORM shardid.citus_use_trigger(d.table_oid::pg_catalog.regclass, shard, d.column_name);
        table_name := d.table_name;
        id_column := d.column_name;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION citus_distribute_shard(name, integer) IS
'make a logical shard''s schema a Citus tenant schema (citus_schema_distribute) and its ids made by the shardid.set_id() trigger where its rows are';

REVOKE ALL ON FUNCTION citus_distribute_shard(name, integer) FROM PUBLIC;

-- What doctor() cannot see on Citus: it runs on the coordinator, whose
-- tenant tables are empty shells.  This checks the shard tables themselves,
-- on the workers (run_command_on_placements), and the coordinator's view:
--   id made where the statement arrives  a tenant table's id DEFAULT calls
--                                       next_id(): nodes repeat each other's ids
--   shard claimed by several schemas    two tenant schemas make ids of one shard
--   trigger missing on a placement      the shard table makes no ids
--   rows of other shards                rows on the worker whose ids carry
--                                       another shard (plain scan, no code of
--                                       the table's owner runs)
--   replication origins                 a node with fewer than 2 free origin
--                                       slots: an online citus_schema_move needs one
CREATE FUNCTION citus_doctor()
RETURNS TABLE (problem text, object text, node text, detail text)
AS $$
DECLARE
    t record;
    r record;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_schema') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    FOR t IN SELECT i.schema_name, i.table_name, i.column_name, i.shard
             FROM shardid.id_defaults i
             JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) i.table_oid
             ORDER BY 1, 2 LOOP
        problem := 'id made where the statement arrives';
        object := pg_catalog.format('%I.%I.%I', t.schema_name, t.table_name, t.column_name);
        node := NULL;
        detail := pg_catalog.format('Its DEFAULT calls shardid.next_id(%s) on whichever node receives the INSERT; nodes repeat each other''s ids. Run SELECT shardid.citus_use_trigger(%L, %s).',
                                    t.shard, pg_catalog.format('%I.%I', t.schema_name, t.table_name), t.shard);
        RETURN NEXT;
    END LOOP;
    FOR t IN SELECT c.shard, pg_catalog.string_agg(DISTINCT c.schema_name::text, ', ') AS schemas
             FROM shardid.citus_tenants c GROUP BY c.shard
             HAVING pg_catalog.count(DISTINCT c.schema_name) OPERATOR(pg_catalog.>) 1 LOOP
        problem := 'shard claimed by several schemas';
        object := t.shard::text;
        node := NULL;
        detail := pg_catalog.format('Schemas %s all make ids of shard %s.', t.schemas, t.shard);
        RETURN NEXT;
    END LOOP;
    FOR t IN SELECT c.table_oid, c.shard, c.id_column FROM shardid.citus_tenants c
             JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) c.table_oid
             ORDER BY c.schema_name, c.table_name LOOP
        FOR r IN SELECT * FROM pg_catalog.run_command_on_placements(t.table_oid::pg_catalog.regclass,
                    pg_catalog.format('SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) %%1$L::pg_catalog.regclass AND g.tgfoid OPERATOR(pg_catalog.=) %L::pg_catalog.regprocedure) OPERATOR(pg_catalog.||) %L OPERATOR(pg_catalog.||) shardid.rows_of_other_shards(%%1$L::pg_catalog.regclass, %L, %s)',
                                      'shardid.set_id()', ' ', t.id_column, t.shard)) LOOP
            node := pg_catalog.format('%s:%s', r.nodename, r.nodeport);
            object := pg_catalog.format('%s (shard table %s)', t.table_oid::pg_catalog.regclass, r.shardid);
            IF NOT r.success THEN
                problem := 'placement not checked';
                detail := r.result;
                RETURN NEXT;
                CONTINUE;
            END IF;
            IF pg_catalog.split_part(r.result, ' ', 1) OPERATOR(pg_catalog.=) '0' THEN
                problem := 'trigger missing on a placement';
                detail := pg_catalog.format('The shard table makes no ids. Run SELECT shardid.citus_use_trigger(%L, %s) again.',
                                            t.table_oid::pg_catalog.regclass::text, t.shard);
                RETURN NEXT;
            END IF;
            IF pg_catalog.split_part(r.result, ' ', 2) OPERATOR(pg_catalog.<>) '0' THEN
                problem := 'rows of other shards';
                detail := pg_catalog.format('%s rows have an id of another shard than %s.',
                                            pg_catalog.split_part(r.result, ' ', 2), t.shard);
                RETURN NEXT;
            END IF;
        END LOOP;
    END LOOP;
    FOR r IN SELECT a.success, a.result, n.nodename, n.nodeport
             FROM pg_catalog.run_command_on_all_nodes(
                'SELECT COALESCE(pg_catalog.current_setting(''max_active_replication_origins'', true), pg_catalog.current_setting(''max_replication_slots''))::int OPERATOR(pg_catalog.-) (SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_origin_status)') a
             JOIN pg_catalog.pg_dist_node n ON n.nodeid OPERATOR(pg_catalog.=) a.nodeid
             ORDER BY n.nodeid LOOP
        IF r.success AND r.result::integer OPERATOR(pg_catalog.<) 2 THEN
            problem := 'replication origins';
            object := 'replication origins';
            node := pg_catalog.format('%s:%s', r.nodename, r.nodeport);
            detail := pg_catalog.format('%s replication origins are free; shardid takes 2 on every node and an online citus_schema_move needs one more on its target. Raise max_replication_slots (max_active_replication_origins from PostgreSQL 18).', r.result);
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION citus_doctor() IS
'Citus checks doctor() cannot make from the coordinator: ids made by DEFAULTs on the routing node, shards claimed twice, the set_id() trigger and rows of other shards on every placement, free replication origins on every node';

REVOKE ALL ON FUNCTION citus_doctor() FROM PUBLIC;

-- =====================================================================
-- 5. shardid-move
-- =====================================================================

-- (section 5: to come)
