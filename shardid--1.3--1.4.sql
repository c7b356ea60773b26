/* shardid--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.4'" to load this file. \quit

-- =====================================================================
-- 0. Schema shardid before anything else runs
-- =====================================================================

-- An install or update runs as a superuser (shardid is not trusted from 1.2
-- on) in schema shardid, which may have existed before: made by another role
-- for a trusted install of 1.0 or 1.1, or in advance, on purpose.  Whatever
-- such a role left there (a function, an operator that the comparisons of
-- this script would resolve to, a grant) would run, or stay usable, with the
-- superuser's rights.
--
-- Taking the schema over here would not do: until this transaction commits,
-- every other session still sees the former owner as the owner, and it could
-- create objects in it while this script runs (waiting for one of its locks,
-- say).  So the schema must be safe in the committed state before this
-- script starts, and this block, which names nothing outside pg_catalog,
-- refuses otherwise and says what to run first:
--
--  * the schema belongs to a superuser, and no other role holds any
--    privilege on it but USAGE;
--  * no transaction of a role that is no superuser that has written
--    something and began before this one (when such a role may still have
--    owned the schema or created in it) is still open: it waits up to a
--    minute for them.  Nor a prepared transaction of such a role: it
--    refuses;
--  * the schema holds nothing that is not a member of shardid (or part of
--    one) owned by a superuser.
--
-- The last check runs again at the end of this script (section 9).
DO $section0$
DECLARE
    ext oid;
    ns oid;
    ns_name name;
    ns_owner oid;
    made_now boolean;
    found text;
    n integer := 0;
BEGIN
    SELECT e.oid, e.extnamespace INTO ext, ns
    FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'shardid';
    SELECT s.nspname, s.nspowner, s.xmin OPERATOR(pg_catalog.=) pg_catalog.xid(pg_catalog.pg_current_xact_id())
    INTO ns_name, ns_owner, made_now
    FROM pg_catalog.pg_namespace s WHERE s.oid OPERATOR(pg_catalog.=) ns;

    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) ns_owner) THEN
        RAISE EXCEPTION 'schema "%" belongs to role "%", which is not a superuser', ns_name,
                        pg_catalog.pg_get_userbyid(ns_owner)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'shardid''s functions are called by superusers; a schema of another role could hold objects that would run in their place, and it could create them while this command runs.',
                  HINT = pg_catalog.format('First, as a superuser, run and commit: ALTER SCHEMA %I OWNER TO %I; REVOKE ALL ON SCHEMA %I FROM PUBLIC CASCADE; GRANT USAGE ON SCHEMA %I TO PUBLIC; then run this command again (a new install may also drop the schema instead).',
                                           ns_name, CURRENT_USER, ns_name, ns_name);
    END IF;

    SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                          ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END, ', ')
    INTO found
    FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
    WHERE s.oid OPERATOR(pg_catalog.=) ns AND a.privilege_type OPERATOR(pg_catalog.<>) 'USAGE'
      AND (a.grantee OPERATOR(pg_catalog.=) 0
           OR NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) a.grantee));
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'roles other than superusers may create objects in schema "%"', ns_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = pg_catalog.format('CREATE on it is granted to %s.', found),
                  HINT = pg_catalog.format('First run and commit: REVOKE ALL ON SCHEMA %I FROM %s CASCADE; GRANT USAGE ON SCHEMA %I TO PUBLIC; then run this command again.',
                                           ns_name, found, ns_name);
    END IF;

    -- A schema made before this transaction may have had another owner or
    -- other grants until lately: an object that an open transaction of such
    -- a role made in it is not visible yet.  (Superusers are trusted.)
    IF NOT made_now THEN
        SELECT pg_catalog.string_agg(p.gid OPERATOR(pg_catalog.||) ' (' OPERATOR(pg_catalog.||) p.owner OPERATOR(pg_catalog.||) ')', ', ')
        INTO found
        FROM pg_catalog.pg_prepared_xacts p JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) p.owner
        WHERE p.database OPERATOR(pg_catalog.=) pg_catalog.current_database() AND NOT r.rolsuper;
        IF found IS NOT NULL THEN
            RAISE EXCEPTION 'prepared transactions of roles other than superusers are pending in this database'
                USING ERRCODE = 'object_in_use',
                      DETAIL = pg_catalog.format('Pending: %s. Objects they made in schema %I would not be seen.', found, ns_name),
                      HINT = 'Commit or roll them back (COMMIT PREPARED, ROLLBACK PREPARED), and run this command again.';
        END IF;
        WHILE EXISTS (SELECT FROM pg_catalog.pg_stat_activity a JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.usesysid
                      WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                        AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                        AND a.xact_start OPERATOR(pg_catalog.<) pg_catalog.transaction_timestamp()
                        AND a.backend_xid IS NOT NULL AND NOT r.rolsuper) LOOP
            n := n OPERATOR(pg_catalog.+) 1;
            IF n OPERATOR(pg_catalog.>) 600 THEN
                RAISE EXCEPTION 'transactions of roles other than superusers that began before this one are still open'
                    USING ERRCODE = 'lock_not_available',
                          DETAIL = pg_catalog.format('Objects such a transaction made in schema %I while it could would not be seen.', ns_name),
                          HINT = 'Run the command again when those sessions are idle (see pg_stat_activity, column xact_start).';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.1);
        END LOOP;
    END IF;

    -- anything in the schema that is not a member of shardid (or part of
    -- one, like a table's row type or index) owned by a superuser
    WITH RECURSIVE ours(classid, objid) AS (
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
        WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass::pg_catalog.oid
          AND d.refobjid OPERATOR(pg_catalog.=) ext AND d.deptype OPERATOR(pg_catalog.=) 'e'
        UNION
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
        JOIN ours o ON d.refclassid OPERATOR(pg_catalog.=) o.classid AND d.refobjid OPERATOR(pg_catalog.=) o.objid
        WHERE d.deptype OPERATOR(pg_catalog.=) ANY ('{i,a}'::pg_catalog."char"[])
    ), present(classid, objid, owner) AS (
        SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.proowner FROM pg_catalog.pg_proc x WHERE x.pronamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.relowner FROM pg_catalog.pg_class x WHERE x.relnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_type'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.typowner FROM pg_catalog.pg_type x WHERE x.typnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.oprowner FROM pg_catalog.pg_operator x WHERE x.oprnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.collowner FROM pg_catalog.pg_collation x WHERE x.collnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.conowner FROM pg_catalog.pg_conversion x WHERE x.connamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.opcowner FROM pg_catalog.pg_opclass x WHERE x.opcnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.opfowner FROM pg_catalog.pg_opfamily x WHERE x.opfnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.stxowner FROM pg_catalog.pg_statistic_ext x WHERE x.stxnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.cfgowner FROM pg_catalog.pg_ts_config x WHERE x.cfgnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.dictowner FROM pg_catalog.pg_ts_dict x WHERE x.dictnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_ts_parser'::pg_catalog.regclass::pg_catalog.oid, x.oid, NULL::pg_catalog.oid FROM pg_catalog.pg_ts_parser x WHERE x.prsnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_ts_template'::pg_catalog.regclass::pg_catalog.oid, x.oid, NULL::pg_catalog.oid FROM pg_catalog.pg_ts_template x WHERE x.tmplnamespace OPERATOR(pg_catalog.=) ns
        UNION ALL SELECT 'pg_catalog.pg_extension'::pg_catalog.regclass::pg_catalog.oid, x.oid, x.extowner FROM pg_catalog.pg_extension x
                  WHERE x.extnamespace OPERATOR(pg_catalog.=) ns AND x.oid OPERATOR(pg_catalog.<>) ext
    )
    SELECT pg_catalog.string_agg(pg_catalog.format('%s %s (owner %s)', i.type, i.identity,
                                                   COALESCE(pg_catalog.pg_get_userbyid(p.owner)::pg_catalog.text, '-')),
                                 ', ' ORDER BY i.type, i.identity)
    INTO found
    FROM present p, pg_catalog.pg_identify_object(p.classid, p.objid, 0) i
    WHERE NOT EXISTS (SELECT FROM ours o WHERE o.classid OPERATOR(pg_catalog.=) p.classid
                                            AND o.objid OPERATOR(pg_catalog.=) p.objid)
       OR p.owner IS NOT NULL AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r
                                       WHERE r.oid OPERATOR(pg_catalog.=) p.owner);
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" holds objects that are not part of extension shardid', ns_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Found: %s.  Another role may have created them to be run in place of shardid''s own functions and operators.', found),
                  HINT = 'A superuser should find out who created them, remove them from the extension if they were added to it (ALTER EXTENSION shardid DROP ...), drop them, and run the command again.';
    END IF;
END
$section0$;

-- =====================================================================
-- 1. The changes of release 1.4
-- =====================================================================
--
-- The update from 1.3 to 1.4.  Section 0 above and section 9 below are
-- those of shardid--1.1--1.2.sql as released, word for word: every update
-- script checks schema shardid first and last, and an extension script
-- cannot include another file.  Between them, the delta.
--
-- Every SQL change of release 1.4 is made in src/sql/shardid.sql and
-- written here too, as the statements that bring a 1.3 install to it
-- (sql/upgrade.sql proves that every path to 1.4 equals a fresh install).

-- The floor at the moment a restore gives (1.4): pg_dump writes a table's
-- rows before its indexes and keys, so the end of every CREATE INDEX and
-- ALTER TABLE that makes a key or index of a table of a registered shard's
-- schema (or of a table inheriting from one), attaches a partition or
-- enables triggers again (a data-only restore with --disable-triggers)
-- reads that table's newest ids of the shard and raises its floor.  A
-- whole-database restore, a schema restored into a registered one,
-- pg_restore -j and --clean need no step.  ALWAYS: also under
-- session_replication_role = replica.
CREATE FUNCTION shardid.floor_after_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'shardid_floor_after_ddl'
LANGUAGE C;

COMMENT ON FUNCTION shardid.floor_after_ddl() IS
'event trigger function of shardid_floor: raises the floor of a registered shard when a key or index of one of its tables is made (a restore''s post-data section)';

REVOKE ALL ON FUNCTION shardid.floor_after_ddl() FROM PUBLIC;

CREATE EVENT TRIGGER shardid_floor ON ddl_command_end
    WHEN TAG IN ('CREATE INDEX', 'ALTER TABLE', 'ALTER SCHEMA', 'DROP SUBSCRIPTION', 'ALTER SUBSCRIPTION')
    EXECUTE FUNCTION shardid.floor_after_ddl();

ALTER EVENT TRIGGER shardid_floor ENABLE ALWAYS;

COMMENT ON EVENT TRIGGER shardid_floor IS
'raises the floor of a registered shard when a key or index of one of its tables is made, a partition attached, a table moved or a schema renamed into it, triggers enabled again or a subscription that wrote its tables dropped or altered: a restore needs no step';

-- A subscription that wrote a registered shard's tables (a migration by
-- logical replication) raises their floors when it is dropped or altered:
-- its tables are read from pg_subscription_rel at the start of the command
-- (DROP SUBSCRIPTION removes them), and read at its end, once its workers
-- have stopped.
CREATE FUNCTION shardid.floor_before_ddl()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'shardid_floor_before_ddl'
LANGUAGE C;

COMMENT ON FUNCTION shardid.floor_before_ddl() IS
'event trigger function of shardid_floor_subscription: remembers the tables of a subscription being dropped or altered, whose floors shardid_floor raises at the end of the command';

REVOKE ALL ON FUNCTION shardid.floor_before_ddl() FROM PUBLIC;

CREATE EVENT TRIGGER shardid_floor_subscription ON ddl_command_start
    WHEN TAG IN ('DROP SUBSCRIPTION', 'ALTER SUBSCRIPTION')
    EXECUTE FUNCTION shardid.floor_before_ddl();

ALTER EVENT TRIGGER shardid_floor_subscription ENABLE ALWAYS;

COMMENT ON EVENT TRIGGER shardid_floor_subscription IS
'remembers the tables of a subscription being dropped or altered, whose floors shardid_floor raises at the end of the command';

-- Why the floor step cannot read the ids of column col of table tab, or
-- NULL when it can: it reads a bigint column (or a domain over bigint) at
-- any key position of a valid btree index without a predicate, as int8_ops
-- (src/stored.c, id_key_position()).  For registration, which refuses what
-- it cannot read, and doctor().
CREATE FUNCTION id_column_unreadable(tab oid, col smallint)
RETURNS text
AS $$
    SELECT CASE
    WHEN base OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::pg_catalog.regtype THEN
        pg_catalog.format('its type is %s, and ids are bigint', pg_catalog.format_type(typ, NULL))
    WHEN EXISTS (SELECT FROM pg_catalog.pg_index i
                 JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
                 JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) ic.relam
                 CROSS JOIN LATERAL pg_catalog.generate_series(0, i.indnkeyatts OPERATOR(pg_catalog.-) 1) k
                 JOIN pg_catalog.pg_opclass oc ON oc.oid OPERATOR(pg_catalog.=) i.indclass[k]
                 WHERE i.indrelid OPERATOR(pg_catalog.=) tab AND i.indisvalid AND i.indpred IS NULL
                   AND am.amname OPERATOR(pg_catalog.=) 'btree'
                   AND i.indkey[k] OPERATOR(pg_catalog.=) col
                   AND oc.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
                   AND oc.opcfamily OPERATOR(pg_catalog.=) (SELECT f.oid FROM pg_catalog.pg_opfamily f
                                                         WHERE f.opfname OPERATOR(pg_catalog.=) 'integer_ops'
                                                           AND f.opfmethod OPERATOR(pg_catalog.=) am.oid)) THEN
        NULL
    WHEN EXISTS (SELECT FROM pg_catalog.pg_index i
                 WHERE i.indrelid OPERATOR(pg_catalog.=) tab AND i.indpred IS NOT NULL
                   AND col OPERATOR(pg_catalog.=) ANY (i.indkey::pg_catalog.int2[])) THEN
        'it is only in a partial index (one with a WHERE clause), which does not hold every row'
    WHEN EXISTS (SELECT FROM pg_catalog.pg_index i
                 JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
                 JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) ic.relam
                 WHERE i.indrelid OPERATOR(pg_catalog.=) tab AND am.amname OPERATOR(pg_catalog.<>) 'btree'
                   AND col OPERATOR(pg_catalog.=) ANY (i.indkey::pg_catalog.int2[])) THEN
        pg_catalog.format('it is only in an index of access method %s, which is not read',
                          (SELECT pg_catalog.string_agg(DISTINCT am.amname, ', ')
                           FROM pg_catalog.pg_index i
                           JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
                           JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) ic.relam
                           WHERE i.indrelid OPERATOR(pg_catalog.=) tab
                             AND col OPERATOR(pg_catalog.=) ANY (i.indkey::pg_catalog.int2[])))
    WHEN EXISTS (SELECT FROM pg_catalog.pg_index i
                 WHERE i.indrelid OPERATOR(pg_catalog.=) tab AND i.indexprs IS NOT NULL) THEN
        'it is in no index but as part of an expression, whose values are not its ids'
    ELSE 'it is in no index'
    END
    FROM (SELECT a.atttypid AS typ,
                 CASE WHEN t.typtype OPERATOR(pg_catalog.=) 'd' THEN t.typbasetype ELSE t.oid END AS base
          FROM pg_catalog.pg_attribute a
          JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
          WHERE a.attrelid OPERATOR(pg_catalog.=) tab AND a.attnum OPERATOR(pg_catalog.=) col) c
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION id_column_unreadable(oid, smallint) IS
'private: why the floor step cannot read the ids of a column (its type, its indexes), or NULL when it can';

-- The statement that makes an id column readable.
CREATE FUNCTION id_column_fix(tab oid, col smallint)
RETURNS text
AS $$
    SELECT CASE
    WHEN (SELECT CASE WHEN t.typtype OPERATOR(pg_catalog.=) 'd' THEN t.typbasetype ELSE t.oid END
          FROM pg_catalog.pg_type t WHERE t.oid OPERATOR(pg_catalog.=) a.atttypid)
         OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::pg_catalog.regtype THEN
        pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I TYPE bigint;', tab::pg_catalog.regclass, a.attname)
    WHEN EXISTS (SELECT FROM pg_catalog.pg_index i
                 WHERE i.indrelid OPERATOR(pg_catalog.=) tab AND i.indisprimary) THEN
        pg_catalog.format('CREATE INDEX ON %s (%I);', tab::pg_catalog.regclass, a.attname)
    ELSE pg_catalog.format('ALTER TABLE %s ADD PRIMARY KEY (%I);', tab::pg_catalog.regclass, a.attname)
    END
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) tab AND a.attnum OPERATOR(pg_catalog.=) col
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION id_column_fix(oid, smallint) IS
'private: the statement that lets the floor step read an id column: a bigint type, a plain btree index (a primary key where the table has none)';

-- Registration reads the newest id of every id column of the schema: a
-- column whose DEFAULT (its own or its domain's) calls next_id() and that
-- cannot be read is refused, with the reason and the statement that fixes
-- it, before the shard is registered.  The schema's tables are found
-- through pg_depend's index (the cost follows the schema, not the
-- database: provisioning registers thousands).
CREATE FUNCTION check_id_columns(schema_name name)
RETURNS void
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.oid AS tab, a.attnum, a.attname,
               shardid.id_column_unreadable(c.oid, a.attnum) AS reason
        FROM pg_depend dep
        JOIN pg_class c ON c.oid = dep.objid AND c.relkind IN ('r', 'p')
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE dep.classid = 'pg_class'::regclass AND dep.objsubid = 0
          AND dep.refclassid = 'pg_namespace'::regclass
          AND dep.refobjid = to_regnamespace(quote_ident(check_id_columns.schema_name))
          AND (EXISTS (SELECT FROM pg_attrdef d
                       JOIN pg_depend p ON p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
                                       AND p.refclassid = 'pg_proc'::regclass
                                       AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                          'shardid.next_id(integer)'::regprocedure)
                       WHERE d.adrelid = c.oid AND d.adnum = a.attnum)
               OR (NOT a.atthasdef
                   AND EXISTS (SELECT FROM pg_type t
                               JOIN pg_depend p ON p.classid = 'pg_type'::regclass AND p.objid = t.oid
                                               AND p.refclassid = 'pg_proc'::regclass
                                               AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                                  'shardid.next_id(integer)'::regprocedure)
                               WHERE t.oid = a.atttypid AND t.typtype = 'd')))
        ORDER BY c.relname, a.attnum
    LOOP
        CONTINUE WHEN r.reason IS NULL;
        RAISE EXCEPTION 'the ids of column "%" of table % cannot be read: %', r.attname, r.tab::regclass, r.reason
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Registering a shard reads the newest id of each id column of its schema through a btree index on the column (at any position of its key), so that new ids sort after the stored ones; restores raise the floor the same way.',
                  HINT = 'Run ' || shardid.id_column_fix(r.tab, r.attnum) || ' then register the shard again.';
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_id_columns(name) IS
'private: refuses a schema with an id column that the floor step cannot read, naming the reason and the fix';

CREATE OR REPLACE FUNCTION register_shard(shard integer, schema_name name)
RETURNS void
AS $$
DECLARE
    registered name;
    other integer;
BEGIN
    IF shard < 0 OR shard > shardid.max_shard() THEN
        RAISE EXCEPTION 'shard % is out of range', shard
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('A shard must be between 0 and %s (13 bits).', shardid.max_shard());
    END IF;
    PERFORM shardid.check_registry_writer('register');
    IF to_regnamespace(quote_ident(schema_name)) IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', schema_name
            USING ERRCODE = 'invalid_schema_name';
    END IF;

    SELECT r.schema_name INTO registered FROM shardid.shard_registry r WHERE r.shard = register_shard.shard;
    IF registered = schema_name THEN
        RETURN;
    END IF;
    IF registered IS NOT NULL AND to_regnamespace(quote_ident(registered)) IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is already registered to schema "%"', shard, registered
            USING ERRCODE = 'unique_violation',
                  HINT = format('If schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                registered, shard, shard);
    END IF;
    SELECT r.shard INTO other FROM shardid.shard_registry r
    WHERE r.schema_name = register_shard.schema_name AND r.shard <> register_shard.shard;
    IF other IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" is already registered to shard %', schema_name, other
            USING ERRCODE = 'unique_violation',
                  DETAIL = 'A schema holds one logical shard.';
    END IF;
    PERFORM shardid.check_id_columns(schema_name);
    -- a registration whose schema was dropped gives way
    DELETE FROM shardid.shard_registry r WHERE r.shard = register_shard.shard;
    INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (shard, schema_name);
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION register_shard(integer, name) IS
'record that a schema holds a logical shard in this database, for routing; refused while another existing schema is registered to it';

CREATE OR REPLACE FUNCTION doctor_unindexed(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT d.schema_name, d.table_name, d.column_name, d.table_oid, a.attnum,
                    shardid.id_column_unreadable(d.table_oid, a.attnum) AS reason
             FROM unnest(defs) d
             JOIN pg_attribute a ON a.attrelid = d.table_oid AND a.attname = d.column_name
             -- other types and DEFAULTs have rows of their own
             WHERE d.plain_call AND d.id_type = 'bigint'::regtype
             ORDER BY 1, 2, 3 LOOP
        CONTINUE WHEN r.reason IS NULL;
        problem := 'id column the floor cannot read';
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        detail := format('The floor step (registering the shard, a restore''s index builds, shardid.raise_floor()) reads ids through a btree index on the id column, at any position of its key; %s, so ids restored or moved into this table are not seen, and new ids may sort before them or repeat them. Registering a shard refuses such a column.',
                         r.reason);
        fix := shardid.id_column_fix(r.table_oid, r.attnum);
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_unindexed(shardid.id_defaults[]) IS
'doctor(): id columns that the floor step cannot read (their type, their indexes), with the statement that fixes each';

-- The step where a database arrives on a server without CREATE EXTENSION
-- (pg_upgrade, CREATE DATABASE ... TEMPLATE), which next_id() names: the
-- origins this server needs, then the floor of every registered shard
-- raised again (its tables read, the carried floor applied: H past it).
-- Superusers; returns the number of shards.
CREATE FUNCTION shardid.apply_floors()
RETURNS integer
AS $$
DECLARE
    n integer;
BEGIN
    PERFORM pg_catalog.pg_replication_origin_create(o.name)
    FROM (VALUES ('shardid_high_water'), ('shardid_epoch'),
                 ('shardid_floors_' OPERATOR(pg_catalog.||)
                  (SELECT d.oid FROM pg_catalog.pg_database d
                   WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())::pg_catalog.text)) o(name)
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_origin r WHERE r.roname OPERATOR(pg_catalog.=) o.name);
    UPDATE shardid.shard_registry r SET floor_id = r.floor_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid.apply_floors() IS
'superusers, after pg_upgrade or CREATE DATABASE ... TEMPLATE: create the replication origins shardid needs and raise the floor of every registered shard of this database, so that new ids sort after every stored one; returns the number of shards';

REVOKE EXECUTE ON FUNCTION shardid.apply_floors() FROM PUBLIC;

-- 1.4: the origin shardid_floors_<database oid> says that this server has
-- applied the floors of this database's shards (src/mark.c): made by CREATE
-- EXTENSION, missing after pg_upgrade (which carries the database but no
-- origin) and in a copy made by CREATE DATABASE ... TEMPLATE, where strict
-- mode refuses ids until a superuser runs shardid.apply_floors().  This
-- update may run after pg_upgrade (pg_upgrade's update_extensions.sql runs
-- it), where no floor is applied: it makes the origin by applying them,
-- as the step does (each shard's tables read once).
SELECT shardid.apply_floors();

CREATE OR REPLACE FUNCTION doctor_mark()
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    -- origins shardid_floors_<oid> are never advanced: they take no slot
    FOR r IN SELECT i.*, (SELECT count(*) FROM pg_replication_origin o
                          WHERE o.roname NOT LIKE 'shardid\_floors\_%') AS origins,
                    NOT EXISTS (SELECT FROM pg_replication_origin o, pg_database d
                                WHERE d.datname = current_database()
                                  AND o.roname = 'shardid_floors_' || d.oid::text) AS floors_unapplied
             FROM shardid.info() i LOOP
        IF NOT r.high_water_origin THEN
            problem := 'high-water origin missing';
            object := 'replication origin shardid_high_water';
            detail := 'The replication origin shardid_high_water does not exist: strict mode makes no ids, and nothing keeps ids after a restart or failover above earlier ones.';
            fix := 'As a superuser, in every database that uses shardid: SELECT shardid.apply_floors(); and, for ids handed out but never stored, SELECT shardid.raise_high_water(...) with the newest id time this server handed out.';
            RETURN NEXT;
        END IF;
        IF r.floors_unapplied AND r.mode <> 'session' THEN
            problem := 'floors not applied on this server';
            object := format('database %I', current_database());
            detail := 'The database came to this server without CREATE EXTENSION (pg_upgrade, CREATE DATABASE ... TEMPLATE): strict mode makes no ids in it until its shards'' floors are applied, so that new ids sort after the stored ones.';
            fix := 'As a superuser: SELECT shardid.apply_floors();';
            RETURN NEXT;
        END IF;
        IF NOT r.epoch_origin THEN
            problem := 'epoch origin missing';
            object := 'replication origin shardid_epoch';
            detail := 'The replication origin shardid_epoch does not exist: next_id() fails, and a changed shardid.epoch would go unnoticed.';
            fix := 'As a superuser: SELECT pg_replication_origin_create(''shardid_epoch'');';
            RETURN NEXT;
        END IF;
        IF r.high_water_ahead_ms > r.max_lead_ms + 60000 THEN
            problem := 'high-water mark far ahead of the clock';
            object := 'replication origin shardid_high_water';
            detail := format('The high-water mark (%s) is %s ms ahead of the clock: after a restart every shard continues from it, so ids carry times that far ahead (the clock was set ahead, or raise_high_water() was given a future moment).',
                             r.high_water_mark, r.high_water_ahead_ms);
            fix := 'Check the system clock (NTP). Ids stay unique and ordered, and catch up when the clock reaches the mark.';
            RETURN NEXT;
        END IF;
        IF r.origin_slots < r.origins THEN
            problem := 'too few replication origin slots';
            object := r.origin_slots_setting;
            detail := format('%s is %s, but %s replication origins exist, shardid''s 2 included: a restart with them in the checkpoint fails, and a standby with fewer dies in redo.',
                             r.origin_slots_setting, r.origin_slots, r.origins);
            fix := format('Set %s to at least %s on this server and on every standby, and restart; preload shardid on standbys too, so that a shortfall is a clear FATAL.',
                          r.origin_slots_setting, r.origins);
            RETURN NEXT;
        END IF;
        IF r.unconfirmed_raises > 0 THEN
            problem := 'high-water raises not confirmed';
            object := 'synchronous_standby_names';
            detail := format('%s raises of the high-water mark were not confirmed by the synchronous standbys since the server started (cancelled or timed out): sessions got errors instead of ids.',
                             r.unconfirmed_raises);
            fix := 'Check that the synchronous standbys are up and keep up.';
            RETURN NEXT;
        END IF;
        IF r.floors_beyond_bound > 0 THEN
            problem := 'floors far ahead';
            object := 'shard floors';
            detail := format('%s times since the server started a shard''s floor lay too far ahead of the clock for strict mode to follow it.', r.floors_beyond_bound);
            fix := 'See the rows ''stored id beyond the bound'' below, and the WARNINGs of the registrations and shardid.raise_floor() calls that met them.';
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_mark() IS
'doctor(): the durable high-water mark, its origins, the origin slots, unconfirmed raises, floors too far ahead';

-- =====================================================================
-- 9. Last: the privileges and objects of schema shardid as meant
-- =====================================================================

-- Default privileges (ALTER DEFAULT PRIVILEGES) of the role running this
-- script applied to every object it made.  Whatever they granted beyond
-- what this script means goes: every privilege of roles other than the
-- owner (but the registry's writers, pg_database_owner), and on tables
-- and views everything but SELECT for PUBLIC.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT CASE c.relkind WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind,
               pg_catalog.format('%I.%I', n.nspname, c.relname) AS object, a.grantee
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        CROSS JOIN LATERAL pg_catalog.aclexplode(c.relacl) a
        WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid'
          AND a.grantee OPERATOR(pg_catalog.<>) c.relowner AND a.grantee OPERATOR(pg_catalog.<>) 0
          AND NOT (c.relname OPERATOR(pg_catalog.=) 'shard_registry'
                   AND a.grantee OPERATOR(pg_catalog.=) 'pg_database_owner'::pg_catalog.regrole::pg_catalog.oid)
        UNION
        SELECT DISTINCT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
               p.oid::pg_catalog.regprocedure::pg_catalog.text, a.grantee
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
        CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) a
        WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid'
          AND a.grantee OPERATOR(pg_catalog.<>) p.proowner AND a.grantee OPERATOR(pg_catalog.<>) 0
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %I CASCADE', g.kind, g.object,
                                  pg_catalog.pg_get_userbyid(g.grantee));
    END LOOP;
END
$$;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA shardid FROM PUBLIC;

-- What section 0 checked, once more: nothing in the schema but shardid's own.
SELECT shardid.check_no_foreign_objects();
