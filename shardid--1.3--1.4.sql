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

-- Schema shardid_internal (1.4): the functions shardid is built from that
-- are no part of its API (the doctor's checks, provisioning's steps, the
-- triggers of its own tables and its event triggers), so that \df shardid.*
-- lists what users call.  This script makes it: no role but a superuser
-- ever had a chance to put anything in it, so a schema of that name that
-- exists already is refused, whoever owns it and whatever it holds (schema
-- shardid may exist before CREATE EXTENSION and is checked by section 0).
-- Every privilege on it but USAGE is taken from everyone else (default
-- privileges on schemas may have granted some); PUBLIC keeps USAGE: doctor()
-- and add_shards() run as their caller and call its functions.
DO $internal$
DECLARE
    s record;
BEGIN
    SELECT n.nspname, n.nspowner, r.rolsuper,
           (SELECT pg_catalog.count(*) FROM pg_catalog.pg_depend d
            WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass::pg_catalog.oid
              AND d.refobjid OPERATOR(pg_catalog.=) n.oid) AS objects
    INTO s
    FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
    WHERE n.nspname OPERATOR(pg_catalog.=) 'shardid_internal';
    IF FOUND THEN
        RAISE EXCEPTION 'schema "shardid_internal" exists already'
            USING ERRCODE = 'duplicate_schema',
                  DETAIL = pg_catalog.format('Its owner is role %I%s; objects in it: %s.  shardid makes this schema itself, for functions that run with the rights of superusers, so that no other role could have created anything in it.',
                                             pg_catalog.pg_get_userbyid(s.nspowner),
                                             CASE WHEN s.rolsuper THEN '' ELSE ', which is not a superuser' END,
                                             s.objects),
                  HINT = 'A superuser should find out who created it and what it holds, drop it or rename it (ALTER SCHEMA shardid_internal RENAME TO ...), and run the command again.';
    END IF;
END
$internal$;

CREATE SCHEMA shardid_internal;

COMMENT ON SCHEMA shardid_internal IS
'shardid''s private functions (not its API: they may change in any release)';

DO $internal$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT a.grantee, a.grantor
        FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
        WHERE s.nspname OPERATOR(pg_catalog.=) 'shardid_internal' AND a.grantee OPERATOR(pg_catalog.<>) s.nspowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA shardid_internal FROM %s GRANTED BY %I CASCADE',
                                  CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                       ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
                                  pg_catalog.pg_get_userbyid(g.grantor));
    END LOOP;
END
$internal$;
GRANT USAGE ON SCHEMA shardid_internal TO PUBLIC;

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

-- Whether the floor step reads a column (C, from the relation cache): the
-- fast test before id_column_unreadable() says why not.  With nowait, NULL
-- at once when another session holds the table in ACCESS EXCLUSIVE mode
-- (doctor() waits for no lock).
CREATE FUNCTION id_column_readable(tab oid, col smallint, nowait boolean DEFAULT false)
RETURNS boolean
AS 'MODULE_PATHNAME', 'shardid_id_column_readable'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_column_readable(oid, smallint, boolean) IS
'private: whether the floor step reads the ids of a column (a bigint key column, at any position, of a valid btree index without a predicate); with nowait, NULL when the table is locked';

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
    -- (OFFSET 0 keeps each EXISTS a lookup per column: as a join it read
    -- every next_id() DEFAULT of the database at each registration)
    FOR r IN
        SELECT c.oid AS tab, a.attnum, a.attname, NULL::text AS reason
        FROM pg_depend dep
        JOIN pg_class c ON c.oid = dep.objid AND c.relkind IN ('r', 'p')
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE dep.classid = 'pg_class'::regclass AND dep.objsubid = 0
          AND dep.refclassid = 'pg_namespace'::regclass
          AND dep.refobjid = to_regnamespace(quote_ident(check_id_columns.schema_name))
          -- (the DEFAULT first, then its dependencies: a join could read
          -- every dependency on next_id() of the database for each column)
          AND (EXISTS (SELECT FROM pg_attrdef d
                       WHERE d.adrelid = c.oid AND d.adnum = a.attnum
                         AND EXISTS (SELECT FROM pg_depend p
                                     WHERE p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
                                       AND p.refclassid = 'pg_proc'::regclass
                                       AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                          'shardid.next_id(integer)'::regprocedure)
                                     OFFSET 0)
                       OFFSET 0)
               OR (NOT a.atthasdef
                   AND EXISTS (SELECT FROM pg_type t
                               WHERE t.oid = a.atttypid AND t.typtype = 'd'
                                 AND EXISTS (SELECT FROM pg_depend p
                                             WHERE p.classid = 'pg_type'::regclass AND p.objid = t.oid
                                               AND p.refclassid = 'pg_proc'::regclass
                                               AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                                  'shardid.next_id(integer)'::regprocedure)
                                             OFFSET 0)
                               OFFSET 0)))
          AND NOT coalesce(shardid.id_column_readable(c.oid, a.attnum), true)
        ORDER BY c.relname, a.attnum
    LOOP
        r.reason := shardid.id_column_unreadable(r.tab, r.attnum);
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
               AND NOT coalesce(shardid.id_column_readable(d.table_oid, a.attnum, nowait => true), true)
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

-- 1.4: without preloading (PostgreSQL 17+, strict mode through the shared
-- memory registry) a session loads shardid only when it first calls one of
-- its functions, and its writes of explicit ids before that (a data-only
-- pg_restore, a COPY) pass unseen by the hooks that raise floors after
-- them (src/floor.c).  The login event trigger shardid_load loads the
-- library in every new session of the database: calling load_library()
-- loads it, and it does nothing else.  A failing login trigger refuses
-- every connection to the database, superusers' too: where the library
-- cannot be loaded (its file removed or replaced by an older one while the
-- extension stays), the session goes on with a WARNING that names the
-- cause.  PostgreSQL 15 and 16 have no login event (there strict mode needs
-- preloading, which loads it in every session).  shardid.apply_floors()
-- makes the trigger where pg_upgrade from 15 or 16 left none.
CREATE FUNCTION shardid_internal.load_library()
RETURNS void
AS 'MODULE_PATHNAME', 'shardid_load_library'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_internal.load_library() IS
'loads shardid in the session that calls it (its hooks raise floors after writes of explicit ids); does nothing else';

-- every role's login calls it
GRANT EXECUTE ON FUNCTION shardid_internal.load_library() TO PUBLIC;

CREATE FUNCTION shardid_internal.load_at_login()
RETURNS event_trigger
AS $$
BEGIN
    PERFORM shardid_internal.load_library();
EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'shardid is not loaded in this session: %', SQLERRM
        USING DETAIL = 'Rows this session writes with explicit ids do not raise their shard''s floor.',
              HINT = 'Check that the shardid library of the installed version is in place (pg_config --pkglibdir), or add shardid to shared_preload_libraries; then SELECT shardid.raise_floor(shard) for shards written meanwhile.';
END
$$ LANGUAGE plpgsql;

COMMENT ON FUNCTION shardid_internal.load_at_login() IS
'event trigger function of shardid_load (PostgreSQL 17+): loads shardid in every new session, so that its writes of explicit ids raise floors without preloading; where it cannot, the session goes on with a WARNING';

REVOKE ALL ON FUNCTION shardid_internal.load_at_login() FROM PUBLIC;

DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 170000 THEN
        CREATE EVENT TRIGGER shardid_load ON login
            EXECUTE FUNCTION shardid_internal.load_at_login();
        ALTER EVENT TRIGGER shardid_load ENABLE ALWAYS;
        COMMENT ON EVENT TRIGGER shardid_load IS
        'loads shardid in every new session (PostgreSQL 17+), so that writes of explicit ids raise floors without preloading';
    END IF;
END
$$;

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
    -- the origins of databases that no longer exist (DROP DATABASE leaves
    -- them; origin ids are 16 bits, shared with subscriptions)
    PERFORM pg_catalog.pg_replication_origin_drop(o.roname)
    FROM pg_catalog.pg_replication_origin o
    WHERE o.roname OPERATOR(pg_catalog.~~) 'shardid\_floors\_%'
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_database d
                      WHERE o.roname OPERATOR(pg_catalog.=) ('shardid_floors_' OPERATOR(pg_catalog.||) d.oid::pg_catalog.text));
    PERFORM pg_catalog.pg_replication_origin_create(o.name)
    FROM (VALUES ('shardid_high_water'), ('shardid_epoch'),
                 ('shardid_floors_' OPERATOR(pg_catalog.||)
                  (SELECT d.oid FROM pg_catalog.pg_database d
                   WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())::pg_catalog.text)) o(name)
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_origin r WHERE r.roname OPERATOR(pg_catalog.=) o.name);
    -- the login trigger (17+) where pg_upgrade from 15 or 16 left none
    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 OPERATOR(pg_catalog.>=) 170000
       AND NOT EXISTS (SELECT FROM pg_catalog.pg_event_trigger e
                       WHERE e.evtname OPERATOR(pg_catalog.=) 'shardid_load') THEN
        CREATE EVENT TRIGGER shardid_load ON login
            EXECUTE FUNCTION shardid_internal.load_at_login();
        ALTER EVENT TRIGGER shardid_load ENABLE ALWAYS;
        COMMENT ON EVENT TRIGGER shardid_load IS
        'loads shardid in every new session (PostgreSQL 17+), so that writes of explicit ids raise floors without preloading';
        ALTER EXTENSION shardid ADD EVENT TRIGGER shardid_load;
    END IF;
    UPDATE shardid.shard_registry r SET floor_id = r.floor_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid.apply_floors() IS
'superusers, after pg_upgrade or CREATE DATABASE ... TEMPLATE: create the replication origins shardid needs (and its login trigger on 17+) and raise the floor of every registered shard of this database, so that new ids sort after every stored one; returns the number of shards';

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
        IF r.shared_memory = 'dynamic shared memory'
           AND (current_setting('event_triggers', true) = 'off'
                OR NOT EXISTS (SELECT FROM pg_event_trigger e
                               WHERE e.evtname = 'shardid_load' AND e.evtevent = 'login'
                                 AND e.evtenabled <> 'D')) THEN
            problem := 'shardid not loaded at login';
            object := 'event trigger shardid_load';
            detail := 'shardid is not in shared_preload_libraries, and its login event trigger is missing, disabled or off (event_triggers): a session that writes explicit ids (a data-only pg_restore, COPY) before it calls a shardid function does not raise the floor, and new ids may sort below those rows.';
            fix := 'As a superuser: SELECT shardid.apply_floors(); (it makes the trigger), ALTER EVENT TRIGGER shardid_load ENABLE ALWAYS; and event_triggers = on; or add shardid to shared_preload_libraries. Then SELECT shardid.raise_floor(shard) for shards written meanwhile.';
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
'doctor(): the durable high-water mark, its origins, the origin slots, unconfirmed raises, floors too far ahead, the login trigger without preloading';

-- Wrong calls and drift.
--
-- Every wrong call of provisioning and conversion says what to do, and
-- what drifted from what provisioning makes is seen:
--  * add_shards() and the functions of 1.2 check the template (its id
--    column exists, is bigint and not generated), the names and the shards
--    before anything is made (check_template(), check_shards()): 1.3 made
--    shards with no id DEFAULT for an id_column no table has;
--  * add_shards() CALLed inside a transaction block or from a function is
--    refused at once with what to do (can_commit()), not at its first
--    COMMIT with "invalid transaction termination";
--  * a batch that fails keeps its error's DETAIL and HINT;
--  * convert_table() refuses a shard registered to another schema, and a
--    schema registered to another shard (1.3 accepted them with a NOTICE
--    whose HINT then failed), and each of its refusals says what to do;
--  * a table provisioning adopts is checked as doctor() checks it: its id
--    column's DEFAULT (id_default_drift()), its drift with the statements
--    that align it (drift_fix()), another role's objects in its schema
--    (shard_foreign_objects()), each a WARNING; so is a DEFAULT outside
--    the shard schemas that makes ids of a shard it registers
--    (warn_claimed_elsewhere()); and so is use_sequence => false where
--    strict mode does not hold (warn_sequence_free(): every INSERT fails);
--  * doctor() reports tables of registered shards whose id column has no
--    next_id() DEFAULT (doctor_no_id_default()), compares every table of a
--    registered shard with its template (1.3: only those with a next_id()
--    DEFAULT of the registered shard), and reports another role's objects
--    in shard schemas (doctor_foreign_objects()); and says that the epoch
--    is not set also in a session's first call where the library is not
--    preloaded (doctor_epoch_unset() loads it first).

CREATE OR REPLACE FUNCTION check_template(template name, prefix text, digits integer, id_column name)
RETURNS oid[]
AS $$
DECLARE
    tmpl oid;
    tmpl_rels oid[];
    owner_names text;
    suggestion name;
    bad record;
BEGIN
    tmpl := to_regnamespace(quote_ident(template));
    IF tmpl IS NULL THEN
        RAISE EXCEPTION 'template schema "%" does not exist', template
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Pass the schema that holds the tables of a shard as designed once (README, Logical shards): CREATE SCHEMA app_template; CREATE TABLE app_template.users (id bigint PRIMARY KEY, ...);';
    END IF;
    IF template IN ('pg_catalog', 'information_schema', 'shardid') OR template LIKE 'pg\_%' THEN
        RAISE EXCEPTION 'template schema "%" is a system schema', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Design the tables of a logical shard in a schema of their own.';
    END IF;
    -- The template's tables and partitioned tables, found through their
    -- dependency on the schema (pg_depend's index on the referenced object:
    -- pg_class has no index on relnamespace, and a scan of it per call
    -- grew with every shard made).  Every relation but a TOAST table and a
    -- composite type records it; they are not tables of a template.
    tmpl_rels := ARRAY(SELECT c.oid FROM pg_class c
                       WHERE c.oid IN (SELECT d.objid FROM pg_depend d
                                       WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = tmpl
                                         AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass)
                         AND c.relnamespace = tmpl AND c.relkind IN ('r', 'p'));
    IF NOT EXISTS (SELECT FROM pg_class c
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition) THEN
        RAISE EXCEPTION 'template schema "%" has no tables', template
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Provisioning copies the plain tables of the template; partitioned tables, views and functions are not copied.',
                  HINT = format('Create the tables of a shard in it first, such as CREATE TABLE %I.users (id bigint PRIMARY KEY, name text);', template);
    END IF;
    -- Copying a table (LIKE ... INCLUDING ALL) builds its indexes, which
    -- can run functions of the table's owner: the template and its tables
    -- must be the caller's own, a superuser's, or (for a role that is no
    -- superuser) those of a role whose privileges it has.
    SELECT string_agg(DISTINCT quote_ident(pg_get_userbyid(o.owner)::text), ', ') INTO owner_names
    FROM (SELECT nsp.nspowner AS owner FROM pg_namespace nsp WHERE nsp.nspname = template
          UNION ALL
          SELECT c.relowner FROM pg_class c WHERE c.oid = ANY (tmpl_rels)) o
    WHERE NOT shardid.owner_trusted(o.owner);
    IF owner_names IS NOT NULL THEN
        RAISE EXCEPTION 'template schema "%" or its tables belong to role %', template, owner_names
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Copying a template runs expressions of its tables (index expressions and predicates), which would run with your privileges.',
                  HINT = 'Use a template that you own, or run shardid.add_shards() as the owner of the template.';
    END IF;
    -- The id column: the copy of each template table that has it gets the
    -- id DEFAULT.  A name that no table has (a typo) would make shards whose
    -- inserts fail, a column of another type than bigint shards whose ids
    -- do not fit (doctor(): "id column not bigint"), a generated column
    -- takes no DEFAULT: each is refused before anything is made.
    IF NOT EXISTS (SELECT FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
                     AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped) THEN
        -- the bigint primary key most tables of the template have, if any
        SELECT a.attname INTO suggestion
        FROM pg_class c
        JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary AND i.indnkeyatts = 1
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
        WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
          AND a.atttypid = 'bigint'::regtype
        GROUP BY a.attname ORDER BY count(*) DESC, a.attname LIMIT 1;
        RAISE EXCEPTION 'no table of template schema "%" has column "%"', template, id_column
            USING ERRCODE = 'undefined_column',
                  DETAIL = format('Provisioning gives column %I of each table the id DEFAULT: %s would get none, and an insert that gives no id would fail.',
                                  id_column,
                                  (SELECT string_agg(format('%I.%I', template, c.relname), ', ' ORDER BY c.relname)
                                   FROM pg_class c
                                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition)),
                  HINT = CASE WHEN suggestion IS NOT NULL
                              THEN format('Pass the id column of the template''s tables: id_column => %L (their bigint primary key), or leave id_column out for %L.',
                                          suggestion, 'id'::text)
                              ELSE format('Pass id_column => the bigint column of the template''s tables that holds their ids (%L when left out).', 'id'::text) END;
    END IF;
    SELECT c.oid::regclass AS tab, format_type(a.atttypid, a.atttypmod) AS type, a.attgenerated
    INTO bad
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped
    JOIN pg_type ty ON ty.oid = a.atttypid
    WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
      AND (CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END <> 'bigint'::regtype
           OR a.attgenerated <> '')
    ORDER BY c.relname LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'column "%" of template table % is %', id_column, bad.tab,
                        CASE WHEN bad.attgenerated <> '' THEN 'generated' ELSE bad.type || ', not bigint' END
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Provisioning gives the id column of each table a DEFAULT that calls shardid.next_id(), which makes bigint ids: a column of another type does not hold them, a generated column takes no DEFAULT.',
                  HINT = CASE WHEN bad.attgenerated <> ''
                              THEN format('Make it a plain column of the template (ALTER TABLE %s ALTER COLUMN %I DROP EXPRESSION;), or pass id_column => the template''s id column.', bad.tab, id_column)
                              ELSE format('Make it bigint in the template (ALTER TABLE %s ALTER COLUMN %I TYPE bigint;), or pass id_column => the template''s bigint id column.', bad.tab, id_column) END;
    END IF;
    IF digits < 1 OR digits > 4 OR prefix = '' THEN
        RAISE EXCEPTION 'schema names need a non-empty prefix and 1 to 4 digits'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Got prefix %L and %s digits.', prefix, digits),
                  HINT = 'Leave prefix and digits out for schemas shard_0000 to shard_8191, or pass, say, prefix => ''app_'', digits => 4.';
    END IF;
    RETURN tmpl_rels;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_template(name, text, integer, name) IS
'private: raise an error, with what to do, unless a template, its id column, prefix and digits can make shards; returns the template''s tables';

CREATE OR REPLACE FUNCTION shard_foreign_objects(schemas name[])
RETURNS TABLE (schema_name name, shard integer, object text, owner name, detail text, fix text)
AS $$
WITH ns AS MATERIALIZED (
    SELECT n.oid, n.nspname, n.nspowner FROM pg_namespace n WHERE n.nspname = ANY (schemas)
), objs AS MATERIALIZED (
    SELECT ns.nspname, 'pg_namespace'::regclass::oid AS classid, ns.oid AS objid, ns.nspowner AS owner
    FROM ns
    UNION ALL
    SELECT ns.nspname, d.classid, d.objid,
           CASE d.classid
               WHEN 'pg_class'::regclass THEN (SELECT c.relowner FROM pg_class c
                                               WHERE c.oid = d.objid AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S'))
               WHEN 'pg_proc'::regclass THEN (SELECT p.proowner FROM pg_proc p WHERE p.oid = d.objid)
               WHEN 'pg_type'::regclass THEN (SELECT t.typowner FROM pg_type t
                                              WHERE t.oid = d.objid AND t.typtype <> 'm'
                                                AND NOT (t.typcategory = 'A' AND t.typelem <> 0)
                                                AND NOT EXISTS (SELECT FROM pg_class r WHERE r.oid = t.typrelid AND r.relkind <> 'c'))
               WHEN 'pg_operator'::regclass THEN (SELECT o.oprowner FROM pg_operator o WHERE o.oid = d.objid)
               WHEN 'pg_collation'::regclass THEN (SELECT o.collowner FROM pg_collation o WHERE o.oid = d.objid)
               WHEN 'pg_conversion'::regclass THEN (SELECT o.conowner FROM pg_conversion o WHERE o.oid = d.objid)
               WHEN 'pg_opclass'::regclass THEN (SELECT o.opcowner FROM pg_opclass o WHERE o.oid = d.objid)
               WHEN 'pg_opfamily'::regclass THEN (SELECT o.opfowner FROM pg_opfamily o WHERE o.oid = d.objid)
               WHEN 'pg_statistic_ext'::regclass THEN (SELECT o.stxowner FROM pg_statistic_ext o WHERE o.oid = d.objid)
               WHEN 'pg_ts_config'::regclass THEN (SELECT o.cfgowner FROM pg_ts_config o WHERE o.oid = d.objid)
               WHEN 'pg_ts_dict'::regclass THEN (SELECT o.dictowner FROM pg_ts_dict o WHERE o.oid = d.objid)
           END
    FROM ns
    JOIN pg_depend d ON d.refclassid = 'pg_namespace'::regclass AND d.refobjid = ns.oid
                    AND d.refobjsubid = 0 AND d.deptype = 'n'
), foreign_owners AS MATERIALIZED (
    -- each owner found judged once (for one schema, usually one owner)
    SELECT o.owner
    FROM (SELECT DISTINCT objs.owner FROM objs WHERE objs.owner IS NOT NULL) o
    WHERE NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.oid = o.owner)
      AND NOT has_table_privilege(o.owner, 'shardid.shard_registry'::regclass, 'INSERT')
      AND NOT shardid.owner_trusted(o.owner)
)
SELECT objs.nspname, g.shard, x.object, pg_get_userbyid(objs.owner),
       format('%s%s is in schema %I of shard %s but belongs to role %I, which may not register shards: provisioning does not adopt it, and the code attached to it (a view''s query, rules and triggers, a table''s triggers and index expressions, a function) runs with the privileges of whoever uses it.',
              upper(left(x.object, 1)), substr(x.object, 2), objs.nspname, coalesce(g.shard::text, '(not registered)'),
              pg_get_userbyid(objs.owner)),
       CASE WHEN objs.classid = 'pg_namespace'::regclass
            THEN format('A superuser should give the schema to a role that may register shards (ALTER SCHEMA %I OWNER TO ...;) after checking what role %I made in it.',
                        objs.nspname, pg_get_userbyid(objs.owner))
            ELSE format('A superuser should find out why role %I made it, and drop it, move it out of the shard''s schema, or give it to a role that may register shards (ALTER ... OWNER TO), then run shardid.add_shards() again if the template has a table of its name.',
                        pg_get_userbyid(objs.owner)) END
FROM objs
JOIN foreign_owners f ON f.owner = objs.owner
LEFT JOIN shardid.shard_registry g ON g.schema_name = objs.nspname
CROSS JOIN LATERAL (SELECT pg_describe_object(objs.classid, objs.objid, 0) AS object) x
ORDER BY objs.nspname, objs.classid <> 'pg_namespace'::regclass, x.object
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shard_foreign_objects(name[]) IS
'private: the objects in the given shard schemas (and the schemas) of roles that may not register shards and whose objects the caller does not trust, with what to do; provisioning warns of them, doctor() reports them';

CREATE OR REPLACE FUNCTION drift_fix(template_table regclass, shard_table regclass, id_column name)
RETURNS text
AS $$
DECLARE
    owner oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = shard_table);
BEGIN
    IF has_table_privilege(owner, 'shardid.shard_registry'::regclass, 'INSERT')
       OR shardid.owner_trusted(owner) THEN
        RETURN format('To align it with the template: %s (a DROP removes what the table holds there; if the shard is right, change the template instead).',
                      shardid.doctor_align_statements(template_table, shard_table, id_column));
    END IF;
    RETURN format('Table %s belongs to role %I, which may not register shards: have that role align it with the template (shardid.doctor_align_statements(%L, %L, %L) gives the statements), or give the table to a role that may. Run no statement on it as another role: it would run what its owner chose (casts, index expressions).',
                  shard_table, pg_get_userbyid(owner), template_table::text, shard_table::text, id_column);
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION drift_fix(regclass, regclass, name) IS
'private: what to do about a shard''s table that differs from its template (the statements that align it, or whose table it is), as doctor() and provisioning say it';

CREATE OR REPLACE FUNCTION id_default_drift(shard_table regclass, id_column name, shard integer,
                                 OUT detail text, OUT fix text)
RETURNS record
AS $$
DECLARE
    col record;
    calls_next_id boolean := false;
    passed integer;
    seq regclass;
    expr text;
    owner name := (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = shard_table);
BEGIN
    SELECT a.attidentity, a.attgenerated,
           coalesce(d.adbin, CASE WHEN t.typtype = 'd' THEN t.typdefaultbin END) AS expr,
           CASE WHEN d.adbin IS NOT NULL THEN d.adrelid ELSE 0 END AS expr_table
    INTO col
    FROM pg_attribute a
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = shard_table AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    -- a missing column is drift from the template (table_drift())
    IF NOT FOUND OR col.attgenerated <> '' THEN
        RETURN;
    END IF;
    IF col.expr IS NOT NULL THEN
        SELECT dc.calls_next_id, dc.shard, dc.sequence INTO calls_next_id, passed, seq
        FROM shardid.default_call(col.expr, 'shardid.next_id(integer,bigint)'::regprocedure,
                                  'shardid.next_id(integer)'::regprocedure) dc;
        IF calls_next_id AND passed IS NOT DISTINCT FROM id_default_drift.shard THEN
            RETURN;
        END IF;
        expr := coalesce(shardid.default_text(col.expr, col.expr_table),
                         '(not shown: the table is locked by another session)');
    END IF;
    IF calls_next_id THEN
        detail := format('Column %I of table %s has DEFAULT %s, which makes ids of shard %s, not of shard %s, the shard of its schema.',
                         id_column, shard_table, expr, coalesce(passed::text, '(not a constant)'), shard);
        fix := format('As the owner of the table (role %I): ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s;',
                      owner, shard_table, id_column,
                      CASE WHEN seq IS NULL THEN format('shardid.next_id(%s)', shard)
                           ELSE format('shardid.next_id(%s, nextval(%L::regclass))', shard, seq::text) END);
        RETURN;
    END IF;
    detail := format('Column %I of table %s %s: %s', id_column, shard_table,
                     CASE WHEN col.attidentity <> '' THEN 'is an identity column'
                          WHEN col.expr IS NULL THEN 'has no DEFAULT'
                          ELSE format('has DEFAULT %s', expr) END,
                     CASE WHEN col.attidentity = '' AND col.expr IS NULL
                          THEN format('an INSERT that gives no id fails, and ids given by hand need not carry shard %s.', shard)
                          ELSE format('its ids are not ids of shard %s (a sequence''s numbers decode as shard 0 near the epoch), and shardid.id_schema() finds no schema for them.', shard) END);
    fix := format('As the owner of the table (role %I): SELECT shardid.convert_table(%L, %s%s); it gives the column the DEFAULT of shard %s and keeps the ids the table holds as legacy ids.',
                  owner, shard_table::text, shard,
                  CASE WHEN id_column <> 'id' THEN format(', %L', id_column) ELSE '' END, shard);
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION id_default_drift(regclass, name, integer) IS
'private: what the id column of a shard''s table makes instead of the ids of its shard (no DEFAULT, an identity, another DEFAULT, another shard''s next_id()), with the statement that gives it the shard''s ids; NULL when it makes them';

CREATE OR REPLACE FUNCTION check_shards(shards integer[])
RETURNS void
AS $$
DECLARE
    s integer;
BEGIN
    FOREACH s IN ARRAY shards LOOP
        IF s IS NULL THEN
            RAISE EXCEPTION 'the shards of the call include NULL'
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'Pass shard numbers between 0 and 8191, such as ''{0, 3, 6, 9}'', or a range: first_shard => 0, last_shard => 1999.';
        END IF;
        IF s < 0 OR s > shardid.max_shard() THEN
            RAISE EXCEPTION 'shard % is out of range', s
                USING ERRCODE = 'numeric_value_out_of_range',
                      DETAIL = format('A shard must be between 0 and %s (13 bits).', shardid.max_shard()),
                      HINT = format('Pass a logical shard between 0 and %s: with N logical shards (at most %s), a key''s shard is key %% N.',
                                    shardid.max_shard(), shardid.max_shard() + 1);
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_shards(integer[]) IS
'private: raise an error, with what to pass, for a NULL or a shard out of range in the shards of a call';

CREATE OR REPLACE FUNCTION warn_claimed_elsewhere(shards integer[])
RETURNS void
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
               pg_get_userbyid(c.relowner) AS owner, dc.shard,
               (SELECT g.schema_name FROM shardid.shard_registry g WHERE g.shard = dc.shard) AS registered
        FROM pg_namespace n
        JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
        JOIN pg_attrdef ad ON ad.adrelid = c.oid
        JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
        CROSS JOIN LATERAL shardid.default_call(ad.adbin, 'shardid.next_id(integer,bigint)'::regprocedure,
                                                'shardid.next_id(integer)'::regprocedure) dc
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g WHERE g.schema_name = n.nspname)
          AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
          AND EXISTS (SELECT FROM pg_depend dep
                      WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
                        AND dep.refclassid = 'pg_proc'::regclass
                        AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                             'shardid.next_id(integer)'::regprocedure))
          AND dc.shard = ANY (shards)
        ORDER BY 1, 2, 3 LOOP
        RAISE WARNING 'shard % is registered to schema "%", but the DEFAULT of %.%.% makes its ids too',
                      r.shard, r.registered, quote_ident(r.schema_name), quote_ident(r.table_name), quote_ident(r.column_name)
            USING DETAIL = format('The DEFAULT makes ids of shard %s, which is registered to schema %I: its ids can collide with that shard''s and routing sends them there.',
                                  r.shard, r.registered),
                  HINT = format('Ask the owner of %I.%I (%s) to change the DEFAULT to a shard of its own.',
                                r.schema_name, r.table_name, r.owner);
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION warn_claimed_elsewhere(integer[]) IS
'private: a WARNING for each DEFAULT outside the schemas of registered shards that makes ids of one of the given shards (add_shards() asks for the shards it registered)';

CREATE OR REPLACE FUNCTION warn_sequence_free(use_sequence boolean)
RETURNS void
AS $$
BEGIN
    IF use_sequence IS FALSE AND (SELECT i.mode FROM shardid.info() i) <> 'strict' THEN
        RAISE WARNING 'new shard tables get DEFAULT shardid.next_id(shard), which needs strict mode, and strict mode does not hold on this server'
            USING DETAIL = 'Every INSERT into them fails with "shardid.next_id(shard) needs shardid in shared_preload_libraries" until it does (doctor(): "sequence-free DEFAULT without strict mode").',
                  HINT = 'Add shardid to shared_preload_libraries and restart the server, or leave use_sequence out for shardid.next_id(shard, nextval(...)) with a sequence per table.';
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION warn_sequence_free(boolean) IS
'private: a WARNING when provisioning is asked for sequence-free DEFAULTs (use_sequence => false) where strict mode does not hold';

CREATE OR REPLACE FUNCTION can_commit()
RETURNS boolean
AS 'MODULE_PATHNAME', 'shardid_can_commit'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION can_commit() IS
'private: whether the procedure that calls it may commit (CALLed outside a transaction block and any function)';

CREATE OR REPLACE FUNCTION convert_table(tab regclass, shard integer, id_column name DEFAULT 'id',
                              OUT legacy_below bigint, OUT id_default text)
RETURNS record
AS $$
DECLARE
    me pg_catalog.pg_roles%ROWTYPE;
    rel record;
    col record;
    seq regclass;
    seq_last bigint;
    seq_name text;
    is_strict boolean;
    registered_schema name;
    registered_shard integer;
    i integer := 0;
BEGIN
    PERFORM shardid.check_shards(ARRAY[shard]);
    SELECT * INTO me FROM pg_roles r WHERE r.rolname = current_user;
    SELECT c.relowner INTO rel FROM pg_class c WHERE c.oid = tab;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table with OID % does not exist', tab::oid
            USING ERRCODE = 'undefined_table',
                  HINT = 'Pass the table by name, such as shardid.convert_table(''public.orders'', 42).';
    END IF;
    IF NOT (rel.relowner = me.oid OR (NOT me.rolsuper AND pg_has_role(rel.relowner, 'USAGE'))) THEN
        IF me.rolsuper THEN
            RAISE EXCEPTION 'table % belongs to role %, not to the superuser %', tab,
                            quote_ident(pg_get_userbyid(rel.relowner)::text), quote_ident(current_user::text)
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Converting alters the table as its owner would (widening a column rewrites it and evaluates the owner''s index expressions and CHECK constraints): a superuser does not run another role''s code.',
                      HINT = format('SET ROLE %I; first, then convert the table.', pg_get_userbyid(rel.relowner));
        END IF;
        RAISE EXCEPTION 'must be owner of table %', tab
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Run it as role %I, the owner of the table, or as a member of that role.', pg_get_userbyid(rel.relowner));
    END IF;

    -- inserts in flight finish first, those that come wait for the new DEFAULT;
    -- the table alone (ONLY), and only a plain table: LOCK TABLE would lock
    -- every partition or child of one that is refused anyway, waiting for
    -- each while the queries of all of them waited behind it, and would
    -- refuse a sequence, an index or a view with an error of its own
    FOR pass IN 1..2 LOOP
        SELECT c.relname, c.relkind, c.relpersistence, c.relispartition, c.relowner,
               EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = c.oid) AS has_children,
               n.nspname
        INTO rel
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tab;
        EXIT WHEN pass = 2 OR rel.relkind <> 'r' OR rel.relispartition OR rel.has_children;
        EXECUTE format('LOCK TABLE ONLY %s IN ACCESS EXCLUSIVE MODE', tab);
    END LOOP;
    IF rel.relkind <> 'r' OR rel.relispartition OR rel.has_children THEN
        RAISE EXCEPTION '% % cannot be converted',
                        CASE WHEN rel.relkind = 'p' THEN 'partitioned table' WHEN rel.relispartition THEN 'partition'
                             WHEN rel.relkind = 'r' THEN 'table' WHEN rel.relkind = 'v' THEN 'view'
                             WHEN rel.relkind = 'm' THEN 'materialized view' WHEN rel.relkind = 'f' THEN 'foreign table'
                             WHEN rel.relkind = 'S' THEN 'sequence' WHEN rel.relkind IN ('i', 'I') THEN 'index'
                             ELSE 'relation' END, tab
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'shardid.convert_table() converts plain tables, not partitioned tables, partitions, tables with inheritance children or other relations.',
                  HINT = CASE WHEN rel.relkind IN ('v', 'm') THEN 'Convert the table that holds the rows and makes the ids.'
                              WHEN rel.relkind = 'p' OR rel.relispartition OR rel.has_children
                              THEN format('The old ids of a partitioned table, a partition or a table with children cannot be recorded as legacy ids: keep the old table apart, and make the table of new rows with DEFAULT shardid.next_id(%s), as shardid.add_shards() makes shard tables.', shard)
                              ELSE 'Pass a plain table, such as shardid.convert_table(''public.orders'', 42).' END;
    END IF;
    IF rel.relpersistence = 't' THEN
        RAISE EXCEPTION 'table % is temporary', tab
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'A temporary table holds no shard''s rows.',
                  HINT = 'Convert the permanent table that holds the shard''s rows.';
    END IF;
    IF EXISTS (SELECT FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab) THEN
        RAISE EXCEPTION 'table % is already converted to shardid ids', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = (SELECT format('Its ids (column %I) below %s are legacy ids; its DEFAULT makes ids of shard %s.',
                                          l.id_column, l.legacy_below, l.shard)
                            FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab),
                  HINT = 'Nothing to do: a table is converted once, and its DEFAULT already makes shardid ids.';
    END IF;
    -- the shard and the schema must be each other's, where either is
    -- registered: the table's ids would otherwise route to another schema
    -- (or none), and a registration of its own would be refused
    registered_schema := (SELECT r.schema_name FROM shardid.shard_registry r
                          WHERE r.shard = convert_table.shard
                            AND to_regnamespace(quote_ident(r.schema_name)) IS NOT NULL);
    IF registered_schema IS DISTINCT FROM rel.nspname AND registered_schema IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is registered to schema "%", not to the schema of table %', shard, registered_schema, tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Routing (shardid.id_schema()) sends the ids of shard %s to schema %I; the ids of table %s would go there too, and schema %I cannot be registered to shard %s as well.',
                                  shard, registered_schema, tab, rel.nspname, shard),
                  HINT = format('Move the table into the shard''s schema first (ALTER TABLE %s SET SCHEMA %I;) and convert it there, or pass %s.',
                                tab, registered_schema,
                                coalesce((SELECT format('shard %s, the shard of schema %I', r.shard, r.schema_name)
                                          FROM shardid.shard_registry r WHERE r.schema_name = rel.nspname),
                                         format('a shard that is registered nowhere (and register it to schema %I)', rel.nspname)));
    END IF;
    registered_shard := (SELECT r.shard FROM shardid.shard_registry r WHERE r.schema_name = rel.nspname);
    IF registered_shard IS DISTINCT FROM shard AND registered_shard IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" of table % holds shard %, not shard %', rel.nspname, tab, registered_shard, shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Schema %I is registered to shard %s: a table in it that made ids of shard %s would route them elsewhere (doctor(): "DEFAULT of another shard").',
                                  rel.nspname, registered_shard, shard),
                  HINT = format('Pass shard %s: SELECT * FROM shardid.convert_table(%L, %s%s);', registered_shard, tab::text, registered_shard,
                                CASE WHEN id_column <> 'id' THEN format(', %L', id_column) ELSE '' END);
    END IF;

    SELECT a.attnum, a.atttypid::regtype AS type, a.attidentity, a.attgenerated,
           d.oid AS default_oid,
           EXISTS (SELECT FROM pg_depend dep
                   WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
                     AND dep.refclassid = 'pg_proc'::regclass
                     AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                          'shardid.next_id(integer)'::regprocedure)) AS makes_ids
    INTO col
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = tab AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table % does not exist', id_column, tab
            USING ERRCODE = 'undefined_column',
                  HINT = coalesce((SELECT format('Pass the id column: id_column => %L (%s).', a.attname,
                                                 CASE WHEN EXISTS (SELECT FROM pg_index i WHERE i.indrelid = tab AND i.indisprimary
                                                                     AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum)
                                                      THEN 'its primary key' ELSE 'its integer column' END)
                                   FROM pg_attribute a
                                   WHERE a.attrelid = tab AND a.attnum > 0 AND NOT a.attisdropped
                                     AND a.atttypid IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype)
                                   ORDER BY EXISTS (SELECT FROM pg_index i WHERE i.indrelid = tab AND i.indisprimary
                                                      AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum) DESC,
                                            a.attnum
                                   LIMIT 1),
                                  'The table has no smallint, integer or bigint column to convert.');
    END IF;
    IF col.makes_ids THEN
        RAISE EXCEPTION 'column "%" of table % already makes shardid ids', id_column, tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its DEFAULT calls shardid.next_id(); shardid.convert_table() converts a column of a sequence, an identity or ids given by the application.',
                  HINT = 'Nothing to convert: shardid.doctor() says whether its DEFAULT names the shard of its schema.';
    END IF;
    IF col.type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) OR col.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of table % cannot be converted', id_column, tab
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('shardid.convert_table() converts smallint, integer and bigint columns that are not generated; this one is %s.',
                                  CASE WHEN col.attgenerated <> '' THEN 'generated' ELSE col.type::text END),
                  HINT = CASE WHEN col.attgenerated <> '' THEN 'Pass the column that holds the ids the table makes, not a generated one.'
                              WHEN (SELECT t.typtype FROM pg_type t WHERE t.oid = col.type) = 'd'
                              THEN format('A column of a domain keeps the domain''s DEFAULT and checks: give it the DEFAULT of shard %s by hand (ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s);) once no old id reaches the ids of now.',
                                          shard, tab, id_column, shard)
                              ELSE 'Pass the integer id column of the table as id_column; ids of another type (uuid, text) stay as they are, in a table of their own.' END;
    END IF;

    -- the sequence: the identity's, or the one the DEFAULT calls nextval() of
    IF col.attidentity <> '' THEN
        seq := pg_get_serial_sequence(tab::text, id_column::text)::regclass;
    ELSE
        SELECT dep.refobjid::regclass INTO seq
        FROM pg_depend dep JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
        WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = col.default_oid
          AND dep.refclassid = 'pg_class'::regclass
        ORDER BY dep.refobjid LIMIT 1;
    END IF;
    IF seq IS NOT NULL THEN
        seq_last := pg_sequence_last_value(seq);
    END IF;

    IF col.attidentity <> '' THEN
        -- the values stay; the identity's sequence goes with it
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tab, id_column);
        seq := NULL;
    END IF;
    IF col.type <> 'bigint'::regtype THEN
        -- record_legacy_ids() widens it, as the owner in a security-restricted operation
        RAISE WARNING 'column "%" of table % is widened from % to bigint', id_column, tab, col.type
            USING DETAIL = 'The table and its indexes are rewritten under an ACCESS EXCLUSIVE lock: every read and write of it waits until this transaction ends.',
                  HINT = 'Columns of other tables that reference it keep their type: widen them too before they receive new ids.';
    END IF;

    legacy_below := shardid.record_legacy_ids(tab, id_column, shard,
                                              coalesce(seq_last, -9223372036854775808));

    is_strict := (SELECT i.mode FROM shardid.info() i) = 'strict';
    IF is_strict THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s)', tab, id_column, shard);
    ELSE
        -- the table's owner's sequence (a member of hers may be converting)
        IF seq IS NULL OR NOT EXISTS (SELECT FROM pg_class s WHERE s.oid = seq AND s.relowner = rel.relowner) THEN
            LOOP
                seq_name := left(rel.relname || '_' || id_column, 50) || CASE WHEN i > 0 THEN '_' || i ELSE '' END || '_seq';
                EXIT WHEN to_regclass(format('%I.%I', rel.nspname, seq_name)) IS NULL;
                i := i + 1;
            END LOOP;
            EXECUTE format('CREATE SEQUENCE %I.%I AS bigint CACHE 1', rel.nspname, seq_name);
            seq := format('%I.%I', rel.nspname, seq_name)::regclass;
            IF rel.relowner <> me.oid THEN
                EXECUTE format('ALTER SEQUENCE %s OWNER TO %I', seq, pg_get_userbyid(rel.relowner));
            END IF;
            EXECUTE format('ALTER SEQUENCE %s OWNED BY %s.%I', seq, tab, id_column);
        ELSE
            -- ids need CACHE 1 (doctor()) and a sequence that does not run out
            IF EXISTS (SELECT FROM pg_sequence s WHERE s.seqrelid = seq
                       AND (s.seqcache <> 1 OR s.seqtypid <> 'bigint'::regtype)) THEN
                EXECUTE format('ALTER SEQUENCE %s AS bigint CACHE 1', seq);
            END IF;
        END IF;
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, pg_catalog.nextval(%L::pg_catalog.regclass))',
                       tab, id_column, shard, seq::text);
    END IF;

    -- whether the boundary counts was decided by record_legacy_ids(), by who converts
    IF NOT (SELECT l.trusted FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab) THEN
        RAISE WARNING 'table % was converted by role %, which may not register shards', tab,
                      quote_ident(current_user::text)
            USING DETAIL = 'Routing (shardid.id_schema(), shardid.id_is_legacy()) counts the legacy ids of tables converted by roles that may register shards only: the old ids of this table route by the shard their bits name, also after a later grant.',
                  HINT = format('A superuser who checked its boundary makes it count: UPDATE shardid.legacy_ids SET trusted = true WHERE tab = %L::regclass;', tab::text);
    END IF;
    IF shardid.shard_schema(shard) IS DISTINCT FROM rel.nspname THEN
        RAISE NOTICE 'shard % is not registered to schema "%"', shard, rel.nspname
            USING HINT = format('Routing finds the new ids once it is: SELECT shardid.register_shard(%s, %L);', shard, rel.nspname);
    END IF;
    SELECT pg_get_expr(d.adbin, d.adrelid) INTO id_default
    FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    WHERE d.adrelid = tab AND a.attname = id_column;
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION convert_table(regclass, integer, name) IS
'switch the serial, bigserial, identity or integer id column of a table of the caller to the ids of a shard (integer columns widened to bigint), keeping its ids as legacy ids below the returned boundary (shardid.legacy_ids); new ids sort after them';

CREATE OR REPLACE FUNCTION make_local_shards(template name,
                                  shards integer[],
                                  prefix text DEFAULT 'shard_',
                                  digits integer DEFAULT 4,
                                  id_column name DEFAULT 'id',
                                  use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    s integer;
    sch name;
    owner oid;
    registered name;
    t record;
    fk record;
    seq text;
    suffix text;
    n integer;
    existing regclass;
    existing_kind "char";
    drift text;
    id_drift record;
    foreign_object record;
    made_schemas name[] := '{}';
    tmpl oid;
    tmpl_rels oid[];
    made_rels oid[];
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.create_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = format('NULL was passed for %s.',
                                  concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                            CASE WHEN shards IS NULL THEN 'shards' END,
                                            CASE WHEN prefix IS NULL THEN 'prefix' END,
                                            CASE WHEN digits IS NULL THEN 'digits' END,
                                            CASE WHEN id_column IS NULL THEN 'id_column' END)),
                  HINT = 'Name the template schema and the shards, such as CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}'', in_batches => false), and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id''.';
    END IF;
    tmpl_rels := shardid.check_template(template, prefix, digits, id_column);
    tmpl := to_regnamespace(quote_ident(template));
    PERFORM shardid.check_registry_writer('register');

    -- check every shard before creating anything; a shard given twice is
    -- made once
    PERFORM shardid.check_shards(shards);
    shards := ARRAY(SELECT u.s FROM unnest(shards) WITH ORDINALITY u(s, i) GROUP BY u.s ORDER BY min(u.i));
    FOREACH s IN ARRAY shards LOOP
        IF octet_length(prefix) + greatest(digits, length(s::text)) > 63 THEN
            RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
                USING ERRCODE = 'name_too_long',
                      DETAIL = format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', octet_length(prefix)),
                      HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
        END IF;
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF sch = template THEN
            RAISE EXCEPTION 'shard % would be the template schema "%" itself', s, template
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Keep the template in a schema of its own, named as no shard is (app_template, say), or pass another prefix.';
        END IF;
        PERFORM shardid.check_shard_schema(sch, s);
        SELECT r.schema_name INTO registered FROM shardid.shard_registry r WHERE r.shard = s;
        IF registered IS DISTINCT FROM sch AND to_regnamespace(quote_ident(registered)) IS NOT NULL THEN
            RAISE EXCEPTION 'shard % is already registered to schema "%"', s, registered
                USING ERRCODE = 'unique_violation',
                      HINT = format('If schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    registered, s, s);
        END IF;
        SELECT r.shard INTO n FROM shardid.shard_registry r WHERE r.schema_name = sch AND r.shard <> s;
        IF FOUND THEN
            RAISE EXCEPTION 'schema "%" is already registered to shard %', sch, n
                USING ERRCODE = 'unique_violation',
                      DETAIL = format('A schema holds one logical shard; shard %s would be made in it.', s),
                      HINT = format('Pass another prefix or digits, so that shard %s gets a schema of its own; if schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    s, sch, n, n);
        END IF;
    END LOOP;

    -- every missing schema first: a change of pg_namespace makes the
    -- session plan each of its statements again (PostgreSQL resets its plan
    -- cache), so once per call rather than once per shard
    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF to_regnamespace(quote_ident(sch)) IS NULL THEN
            -- fails if another session made it meanwhile
            EXECUTE format('CREATE SCHEMA %I', sch);
            made_schemas := made_schemas || sch;
        END IF;
    END LOOP;

    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        -- checked again where it is used: it may be new since the check
        PERFORM shardid.check_shard_schema(sch, s);
        made_rels := '{}';

        FOR t IN
            SELECT c.oid, c.relname,
                   (SELECT a.attidentity FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = id_column AND NOT a.attisdropped) AS identity
            FROM pg_class c
            WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
            ORDER BY c.relname
        LOOP
            shard := s;
            schema_name := sch;
            table_name := t.relname;
            existing := to_regclass(format('%I.%I', sch, t.relname));
            IF existing IS NOT NULL THEN
                -- adopted only if it is what this would have made: a table
                -- of a trusted owner (a view's INSTEAD OF trigger, a rule or
                -- a trigger of another role would run with the privileges
                -- of whoever writes to it), reported where it has drifted
                SELECT c.relkind, c.relowner INTO existing_kind, owner FROM pg_class c WHERE c.oid = existing;
                IF existing_kind NOT IN ('r', 'p') OR NOT shardid.owner_trusted(owner) THEN
                    RAISE EXCEPTION 'shard % already holds % %, which belongs to role %', s,
                                    CASE existing_kind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                         WHEN 'f' THEN 'foreign table' WHEN 'S' THEN 'sequence'
                                         WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' ELSE 'table' END,
                                    existing, quote_ident(pg_get_userbyid(owner)::text)
                        USING ERRCODE = 'insufficient_privilege',
                              DETAIL = format('Provisioning adopts only tables that it would have made: tables of your own or of a superuser. %s would run the code its owner attached to it with the privileges of whoever writes to it.', existing),
                              HINT = format('Find out who made it; drop or rename it, then run shardid.add_shards() again to make %s from template %I.', existing, template);
                END IF;
                -- what doctor() would report of it, said now, with its fix
                drift := shardid.table_drift(t.oid, existing, id_column);
                IF drift IS NOT NULL THEN
                    RAISE WARNING 'table % of shard % differs from its template %.%: %', existing, s,
                                  quote_ident(template), quote_ident(t.relname), drift
                        USING HINT = 'Provisioning keeps an existing table as it is. ' || shardid.drift_fix(t.oid, existing, id_column);
                END IF;
                IF t.identity IS NOT NULL THEN
                    id_drift := shardid.id_default_drift(existing, id_column, s);
                    IF id_drift.detail IS NOT NULL THEN
                        RAISE WARNING 'column "%" of table % makes no ids of shard %', id_column, existing, s
                            USING DETAIL = id_drift.detail,
                                  HINT = 'Provisioning keeps an existing table as it is. ' || id_drift.fix;
                    END IF;
                END IF;
                action := 'exists';
                RETURN NEXT;
                CONTINUE;
            END IF;
            EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                           sch, t.relname, template, t.relname);
            IF t.identity IS NOT NULL THEN
                IF t.identity <> '' THEN
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                   sch, t.relname, id_column);
                END IF;
                -- the id form, chosen (and said) when the first table is made
                IF use_sequence IS NULL THEN
                    use_sequence := shardid.default_uses_sequence();
                END IF;
                IF use_sequence THEN
                    -- <table>_<column>_seq cut to 63 bytes on a character
                    -- boundary, numbered (_seq1, _seq2, ...) while that
                    -- name is taken or is the name of a template table
                    n := 0;
                    LOOP
                        suffix := '_seq' || CASE WHEN n > 0 THEN n::text ELSE '' END;
                        seq := t.relname || '_' || id_column;
                        WHILE octet_length(seq) + octet_length(suffix) > 63 LOOP
                            seq := left(seq, -1);
                        END LOOP;
                        seq := seq || suffix;
                        EXIT WHEN to_regclass(format('%I.%I', sch, seq)) IS NULL
                              AND NOT EXISTS (SELECT FROM pg_class c
                                              WHERE c.relnamespace = tmpl
                                                AND c.relkind = 'r' AND c.relname = seq);
                        n := n + 1;
                    END LOOP;
                    EXECUTE format('CREATE SEQUENCE %I.%I CACHE 1 OWNED BY %I.%I.%I',
                                   sch, seq, sch, t.relname, id_column);
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, nextval(%L::regclass))',
                                   sch, t.relname, id_column, s, format('%I.%I', sch, seq));
                ELSE
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s)',
                                   sch, t.relname, id_column, s);
                END IF;
                action := 'created';
            ELSE
                action := format('created, no %I column: no id DEFAULT', id_column);
            END IF;
            made_rels := made_rels || t.oid;
            RETURN NEXT;
        END LOOP;

        -- foreign keys between tables of the template join the shard's own tables
        FOR fk IN
            SELECT c.relname, con.conname, pg_get_constraintdef(con.oid) AS def
            FROM pg_constraint con
            JOIN pg_class c ON c.oid = con.conrelid
            WHERE con.conrelid = ANY (made_rels) AND con.contype = 'f'
            ORDER BY c.relname, con.conname
        LOOP
            EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', sch, fk.relname, fk.conname,
                           replace(fk.def, 'REFERENCES ' || quote_ident(template) || '.',
                                   'REFERENCES ' || quote_ident(sch) || '.'));
        END LOOP;

        PERFORM shardid.register_shard(s, sch);

        -- an existing schema adopted: another role's objects in it, which
        -- doctor() reports, said now
        IF NOT sch = ANY (made_schemas) THEN
            FOR foreign_object IN SELECT * FROM shardid.shard_foreign_objects(ARRAY[sch]) LOOP
                RAISE WARNING 'schema % of shard % holds %, which belongs to role %', quote_ident(sch), s,
                              foreign_object.object, quote_ident(foreign_object.owner::text)
                    USING DETAIL = foreign_object.detail,
                          HINT = foreign_object.fix;
            END LOOP;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION make_local_shards(name, integer[], text, integer, name, boolean) IS
'private: create and register a schema per shard with every table of the template and the id DEFAULT naming that shard (next_id(shard) where strict mode holds, else next_id(shard, nextval(...)) with a CACHE 1 sequence per table; use_sequence chooses), never distributed by Citus; existing tables are skipped';

CREATE OR REPLACE PROCEDURE add_shards(template name,
                            shards integer[] DEFAULT NULL,
                            first_shard integer DEFAULT NULL,
                            last_shard integer DEFAULT NULL,
                            distribute boolean DEFAULT NULL,
                            in_batches boolean DEFAULT true,
                            prefix text DEFAULT 'shard_',
                            digits integer DEFAULT 4,
                            id_column name DEFAULT 'id',
                            use_sequence boolean DEFAULT NULL,
                            INOUT tables_created integer DEFAULT NULL,
                            INOUT tables_existing integer DEFAULT NULL)
AS $$
DECLARE
    r record;
    batch integer;
    part integer[];
    i integer := 1;
    made integer;
    found_existing integer;
    failed_detail text;
    failed_hint text;
    new_shards integer[];
BEGIN
    IF template IS NULL OR prefix IS NULL OR digits IS NULL OR id_column IS NULL
       OR in_batches IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.add_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = pg_catalog.format('NULL was passed for %s.',
                               pg_catalog.concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                                    CASE WHEN prefix IS NULL THEN 'prefix' END,
                                                    CASE WHEN digits IS NULL THEN 'digits' END,
                                                    CASE WHEN id_column IS NULL THEN 'id_column' END,
                                                    CASE WHEN in_batches IS NULL THEN 'in_batches' END)),
                  HINT = 'Name the template schema, and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id'', in_batches => true.';
    END IF;
    -- a list, or a range (CALL takes no subquery to build an array)
    IF shards IS NOT NULL AND (first_shard IS NOT NULL OR last_shard IS NOT NULL) THEN
        RAISE EXCEPTION 'shardid.add_shards() takes shards or first_shard and last_shard, not both'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
    END IF;
    IF shards IS NULL THEN
        IF first_shard IS NULL OR last_shard IS NULL THEN
            RAISE EXCEPTION 'shardid.add_shards() needs shards, or first_shard and last_shard'
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
        END IF;
        IF first_shard OPERATOR(pg_catalog.>) last_shard THEN
            RAISE EXCEPTION 'first shard % is after last shard %', first_shard, last_shard
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = pg_catalog.format('A range runs upwards, both ends included: first_shard => %s, last_shard => %s.',
                                               last_shard, first_shard);
        END IF;
        -- both ends checked before the list is built (a range to 2^31
        -- would be a list of 2^31 shards)
        PERFORM shardid.check_shards(ARRAY[first_shard, last_shard]);
        shards := ARRAY(SELECT pg_catalog.generate_series(first_shard, last_shard));
    END IF;
    -- a NULL or a shard out of range is refused before anything is made
    PERFORM shardid.check_shards(shards);
    -- distribute => true is refused before anything is made where it
    -- would not distribute
    IF distribute THEN
        PERFORM shardid.shards_distributed(true);
    END IF;
    -- the shards this call registers, whose ids a DEFAULT elsewhere may
    -- make already (said once they are registered)
    new_shards := ARRAY(SELECT u.s FROM pg_catalog.unnest(shards) u(s)
                        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g
                                          WHERE g.shard OPERATOR(pg_catalog.=) u.s));
    -- in the caller's transaction: errors as they come, nothing committed
    IF NOT in_batches THEN
        SELECT pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.<>) 'exists')::pg_catalog.int4,
               pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.=) 'exists')::pg_catalog.int4
        INTO tables_created, tables_existing
        FROM shardid.make_shards(template, shards, distribute, prefix, digits, id_column, use_sequence) c;
        PERFORM shardid.warn_sequence_free(use_sequence);
        IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
            PERFORM shardid.warn_claimed_elsewhere(new_shards);
        END IF;
        RETURN;
    END IF;
    -- the template, the names and the right to register, checked before
    -- anything is made (each batch checks them again)
    PERFORM shardid.check_template(template, prefix, digits, id_column);
    IF pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.+)
       GREATEST(digits, pg_catalog.length((SELECT pg_catalog.max(u.s) FROM pg_catalog.unnest(shards) u(s))::pg_catalog.text))
       OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
            USING ERRCODE = 'name_too_long',
                  DETAIL = pg_catalog.format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', pg_catalog.octet_length(prefix)),
                  HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
    END IF;
    PERFORM shardid.check_registry_writer('register');
    -- Batches commit, which a procedure cannot where it was called inside
    -- a transaction block (BEGIN, a migration tool's transaction) or from
    -- a function: refused here, with what to do, before anything is made
    -- (its first COMMIT would fail with "invalid transaction termination").
    IF NOT shardid.can_commit() THEN
        RAISE EXCEPTION 'shardid.add_shards() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each batch of shards, and a procedure called inside a transaction block (BEGIN, a migration tool''s transaction) or from a function cannot commit.',
                  HINT = 'CALL it on its own, outside a transaction block; or, to make every shard in this transaction (a migration''s), CALL shardid.add_shards(..., in_batches => false), which takes about 4 locks per table of each shard (README, Sizing the lock table).';
    END IF;
    -- the id form is chosen (and said) once for every shard of the call
    IF use_sequence IS NULL THEN
        use_sequence := shardid.default_uses_sequence();
    END IF;
    PERFORM shardid.warn_sequence_free(use_sequence);
    tables_created := 0;
    tables_existing := 0;
    -- Shards are made a batch per transaction: a new schema makes the
    -- session plan every statement again (PostgreSQL resets its plan cache
    -- at a change of pg_namespace), once per batch instead of once per
    -- shard.  A batch holds the locks of its new relations until it
    -- commits, about six per table of the template (the table, its
    -- indexes, its TOAST table and index) and one per schema: batches stay
    -- within max_locks_per_transaction, and 64 shards at most.
    batch := pg_catalog.current_setting('max_locks_per_transaction')::pg_catalog.int4
             OPERATOR(pg_catalog./)
             (1 OPERATOR(pg_catalog.+) 6 OPERATOR(pg_catalog.*)
              GREATEST(1, (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_class c
                           WHERE c.relnamespace OPERATOR(pg_catalog.=)
                                 pg_catalog.to_regnamespace(pg_catalog.quote_ident(template))::pg_catalog.oid
                             AND c.relkind OPERATOR(pg_catalog.=) 'r')));
    batch := LEAST(GREATEST(batch, 1), 64);
    WHILE i OPERATOR(pg_catalog.<=) pg_catalog.cardinality(shards) LOOP
        part := shards[i : i OPERATOR(pg_catalog.+) batch OPERATOR(pg_catalog.-) 1];
        made := 0;
        found_existing := 0;
        BEGIN
            FOR r IN SELECT c.action FROM shardid.make_shards(template, part, distribute, prefix, digits,
                                                              id_column, use_sequence) c LOOP
                IF r.action OPERATOR(pg_catalog.=) 'exists' THEN
                    found_existing := found_existing OPERATOR(pg_catalog.+) 1;
                ELSE
                    made := made OPERATOR(pg_catalog.+) 1;
                END IF;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            IF batch OPERATOR(pg_catalog.>) 1 THEN
                -- the batch is undone: the rest goes a shard at a time, so
                -- that a failure names its shard
                batch := 1;
                CONTINUE;
            END IF;
            -- a failure names its shard, keeps what its error said, and
            -- says that the same CALL resumes
            GET STACKED DIAGNOSTICS failed_detail = PG_EXCEPTION_DETAIL, failed_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION 'provisioning shard % failed: %', part[1], SQLERRM
                USING ERRCODE = SQLSTATE,
                      DETAIL = pg_catalog.concat_ws(' ', NULLIF(failed_detail, ''),
                                   pg_catalog.format('The shards before it in the list are made and committed (%s tables made, %s found existing by this call); shard %s and those after it are not.',
                                                     tables_created, tables_existing, part[1])),
                      HINT = pg_catalog.concat_ws(' ', NULLIF(failed_hint, ''),
                                 CASE WHEN failed_hint OPERATOR(pg_catalog.=) '' THEN 'Fix the cause (for "out of shared memory", raise max_locks_per_transaction: README, Logical shards), then run the same CALL again: it resumes, keeping what exists.'
                                      ELSE 'Then run the same CALL again: it resumes, keeping what exists.' END);
        END;
        COMMIT;
        tables_created := tables_created OPERATOR(pg_catalog.+) made;
        tables_existing := tables_existing OPERATOR(pg_catalog.+) found_existing;
        i := i OPERATOR(pg_catalog.+) pg_catalog.cardinality(part);
    END LOOP;
    IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
        PERFORM shardid.warn_claimed_elsewhere(new_shards);
    END IF;
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE add_shards(name, integer[], integer, integer, boolean, boolean, text, integer, name, boolean, integer, integer) IS
'create and register a schema per shard (a list: shards; a range: first_shard, last_shard) with every table of the template and ids naming that shard, a Citus tenant schema where schema-based sharding is on (distribute => false: never; true: refused where it is not); commits after each batch of shards (as many as max_locks_per_transaction allows, 64 at most; a failure names its shard, the same CALL resumes), outside a transaction block; in_batches => false: in the caller''s transaction';

CREATE OR REPLACE FUNCTION doctor_epoch_unset()
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
BEGIN
    -- the setting is defined when the library loads: where it is not
    -- preloaded, the first doctor() of a session may come before any call
    -- of it, and pg_settings would not know the setting yet
    PERFORM shardid.max_shard();
    IF (SELECT source FROM pg_settings WHERE name = 'shardid.epoch') = 'default' THEN
        problem := 'epoch not set';
        object := 'shardid.epoch';
        detail := format('shardid.epoch is at its built-in default (%s); ids of this server decode right only where the same epoch is in force.',
                         current_setting('shardid.epoch'));
        fix := format('Set it explicitly and identically on every server: ALTER SYSTEM SET shardid.epoch = %L; SELECT pg_reload_conf();',
                      current_setting('shardid.epoch'));
        RETURN NEXT;
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_epoch_unset() IS
'doctor(): shardid.epoch at its built-in default';

CREATE OR REPLACE FUNCTION doctor_foreign_objects()
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM shardid.foreign_objects() LOOP
        problem := 'foreign object in schema shardid';
        object := r.object;
        detail := format('%s (owner %s) is in schema shardid but is not shardid''s own; a call that names shardid may run it.',
                         r.object, coalesce(r.owner::text, '-'));
        fix := 'A superuser should find out who created it, remove it from the extension if it was added (ALTER EXTENSION shardid DROP ...) and drop it.';
        RETURN NEXT;
    END LOOP;
    FOR r IN SELECT * FROM shardid.shard_foreign_objects(ARRAY(SELECT g.schema_name FROM shardid.shard_registry g)) LOOP
        problem := 'foreign object in a shard schema';
        object := r.object;
        detail := r.detail;
        fix := r.fix;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_foreign_objects() IS
'doctor(): objects in schema shardid that are not shardids own, and objects in the schemas of registered shards of roles that may not register shards';

CREATE OR REPLACE FUNCTION doctor_no_id_default(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    registered jsonb := (SELECT jsonb_object_agg(g.schema_name, g.shard) FROM shardid.shard_registry g);
    with_ids jsonb := (SELECT jsonb_object_agg(d.table_oid::text, true) FROM unnest(defs) d);
    id_column_of jsonb := (SELECT jsonb_object_agg(x.table_name, x.column_name)
                           FROM (SELECT d.table_name, mode() WITHIN GROUP (ORDER BY d.column_name) AS column_name
                                 FROM unnest(defs) d GROUP BY d.table_name) x);
    any_id_column name := coalesce((SELECT mode() WITHIN GROUP (ORDER BY d.column_name) FROM unnest(defs) d), 'id');
    citus_unserved oid[];
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT pg_catalog.array_agg(p.logicalrelid::pg_catalog.oid) FROM pg_catalog.pg_dist_partition p '
                'WHERE p.partmethod OPERATOR(pg_catalog.<>) ''n'' OR p.repmodel OPERATOR(pg_catalog.=) ''t'''
            INTO citus_unserved;
    END IF;
    FOR r IN
        SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
               x.detail, x.fix
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                           AND a.attname = coalesce(id_column_of ->> c.relname::text, any_id_column)::name
        JOIN pg_type t ON t.oid = a.atttypid
        CROSS JOIN LATERAL shardid.id_default_drift(c.oid, a.attname, (registered ->> n.nspname::text)::integer) x
        WHERE registered ? n.nspname::text
          AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND NOT coalesce(with_ids ? c.oid::text, false)
          AND CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
              IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype)
          AND NOT c.oid = ANY (coalesce(citus_unserved, '{}'))
          AND NOT EXISTS (SELECT FROM pg_trigger tg
                          WHERE tg.tgrelid = c.oid AND tg.tgfoid = 'shardid.set_id()'::regprocedure)
          AND x.detail IS NOT NULL
        ORDER BY 1, 2 LOOP
        problem := 'id column without a next_id() DEFAULT';
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        detail := r.detail;
        fix := r.fix;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_no_id_default(shardid.id_defaults[]) IS
'doctor(): id columns of tables of registered shards without a next_id() DEFAULT (none, an identity, a sequence''s or another DEFAULT), with the convert_table() call that gives them the shard''s ids';

CREATE OR REPLACE FUNCTION doctor_drift(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    not_templates jsonb;
    registered jsonb := (SELECT jsonb_object_agg(g.schema_name, g.shard) FROM shardid.shard_registry g);
    id_columns jsonb := (SELECT jsonb_object_agg(d.table_oid::text, d.column_name) FROM unnest(defs) d);
    id_column_of jsonb := (SELECT jsonb_object_agg(x.table_name, x.column_name)
                           FROM (SELECT d.table_name, mode() WITHIN GROUP (ORDER BY d.column_name) AS column_name
                                 FROM unnest(defs) d GROUP BY d.table_name) x);
    any_id_column name := coalesce((SELECT mode() WITHIN GROUP (ORDER BY d.column_name) FROM unnest(defs) d), 'id');
    tables oid[];
    names name[];
    template_of jsonb;
    locked oid[];
BEGIN
    not_templates := (SELECT jsonb_object_agg(x.schema_name, true)
                      FROM (SELECT d.schema_name FROM unnest(defs) d
                            UNION SELECT g.schema_name FROM shardid.shard_registry g
                            UNION VALUES ('shardid'::name), ('information_schema'::name)) x);
    locked := ARRAY(SELECT l.relation FROM pg_locks l
                    WHERE l.locktype = 'relation' AND l.mode = 'AccessExclusiveLock'
                      AND l.pid IS DISTINCT FROM pg_backend_pid()
                      AND l.database = (SELECT db.oid FROM pg_database db WHERE db.datname = current_database()));
    -- the template of each table name: the tables of the few schemas that
    -- are no shard's, found through their dependency on the schema (pg_class
    -- has no index on relnamespace, and read by name it would give every
    -- shard's table of that name), in a jsonb object looked up by key
    -- the tables of registered shards (pg_class read once, joined to the
    -- registry by schema name)
    tables := ARRAY(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE registered ? n.nspname::text
                      AND c.relkind IN ('r', 'p') AND NOT c.relispartition);
    names := ARRAY(SELECT DISTINCT c.relname FROM unnest(tables) t(oid) JOIN pg_class c ON c.oid = t.oid);
    template_of := (SELECT jsonb_object_agg(o.relname, o.template_oid)
                    FROM (SELECT c.relname, min(c.oid) AS template_oid
                          FROM pg_namespace n
                          JOIN pg_depend dep ON dep.refclassid = 'pg_namespace'::regclass AND dep.refobjid = n.oid
                                            AND dep.refobjsubid = 0 AND dep.classid = 'pg_class'::regclass
                          JOIN pg_class c ON c.oid = dep.objid
                          WHERE NOT coalesce(not_templates ? n.nspname::text, false) AND n.nspname !~ '^pg_'
                            AND c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                            AND c.relname = ANY (names)
                            -- of a role that may register shards, or whose
                            -- objects the caller trusts: any role with a
                            -- schema of its own could otherwise hide a drift
                            -- (a second table of the name) or be the template
                            -- whose DEFAULTs and checks the fix adds
                            AND (has_table_privilege(c.relowner, 'shardid.shard_registry'::regclass, 'INSERT')
                                 OR shardid.owner_trusted(c.relowner))
                          GROUP BY c.relname HAVING count(*) = 1) o);
    FOR r IN
        WITH pairs AS MATERIALIZED (
            -- the tables of registered shards, with their id column and
            -- their template
            SELECT c.oid AS table_oid, n.nspname AS schema_name, c.relname AS table_name,
                   coalesce(id_columns ->> c.oid::text, id_column_of ->> c.relname::text, any_id_column)::name AS column_name,
                   (registered ->> n.nspname::text)::integer AS shard,
                   (template_of ->> c.relname::text)::oid AS template_oid
            FROM unnest(tables) t(oid)
            JOIN pg_class c ON c.oid = t.oid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE template_of ? c.relname::text
        ), rels AS (
            SELECT p.table_oid AS rel, p.column_name FROM pairs p
            UNION ALL
            SELECT DISTINCT p.template_oid, p.column_name FROM pairs p
        ), items AS (
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'column', a.attname, a.atttypid, a.atttypmod, a.attnotnull,
                             CASE WHEN a.atthasdef AND a.attname <> rl.column_name THEN
                                 (SELECT regexp_replace(ad.adbin, ' :location -?[0-9]+', '', 'g') FROM pg_attrdef ad
                                  WHERE ad.adrelid = a.attrelid AND ad.adnum = a.attnum) END) AS item
            FROM rels rl JOIN pg_attribute a ON a.attrelid = rl.rel
            WHERE a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'constraint', c.contype, c.conkey, c.connoinherit,
                             (SELECT f.relname FROM pg_class f WHERE f.oid = c.confrelid),
                             regexp_replace(c.conbin, ' :location -?[0-9]+', '', 'g'))
            FROM rels rl JOIN pg_constraint c ON c.conrelid = rl.rel
            WHERE c.contype IN ('p', 'u', 'f', 'c', 'x')
            UNION ALL
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'index', i.indisunique, i.indnullsnotdistinct, i.indnkeyatts, i.indkey,
                             i.indclass, i.indoption, i.indcollation, ic.reloptions, ic.relam,
                             regexp_replace(i.indexprs, ' :location -?[0-9]+', '', 'g'),
                             regexp_replace(i.indpred, ' :location -?[0-9]+', '', 'g'))
            FROM rels rl JOIN pg_index i ON i.indrelid = rl.rel
            JOIN pg_class ic ON ic.oid = i.indexrelid
        ), shapes AS MATERIALIZED (
            SELECT x.rel, x.column_name,
                   concat_ws(' ', count(*), sum(hashtext(x.item)), sum(hashtextextended(x.item, 1))) AS shape
            FROM items x GROUP BY x.rel, x.column_name
        ), differing AS MATERIALIZED (
            SELECT p.*, s.shape,
                   p.table_oid = ANY (locked) OR p.template_oid = ANY (locked) AS is_locked
            FROM pairs p
            JOIN shapes s ON s.rel = p.table_oid AND s.column_name = p.column_name
            JOIN shapes ts ON ts.rel = p.template_oid AND ts.column_name = p.column_name
            WHERE s.shape <> ts.shape
        ), drifts AS (
            -- tables of one shape differ from the template alike
            SELECT o.template_oid, o.column_name, o.shape,
                   shardid.table_drift(o.template_oid, o.table_oid, o.column_name) AS drift
            FROM (SELECT DISTINCT ON (d.template_oid, d.column_name, d.shape) d.*
                  FROM differing d WHERE NOT d.is_locked
                  ORDER BY d.template_oid, d.column_name, d.shape, d.table_oid) o
        )
        SELECT d.*, f.drift
        FROM differing d
        LEFT JOIN drifts f ON f.template_oid = d.template_oid AND f.column_name = d.column_name AND f.shape = d.shape
        WHERE d.is_locked OR f.drift IS NOT NULL
        ORDER BY d.schema_name, d.table_name LOOP
        object := format('%I.%I', r.schema_name, r.table_name);
        IF r.is_locked THEN
            problem := 'table not compared with its template';
            detail := format('Table %I.%I or its template %s is locked by another session (ACCESS EXCLUSIVE), and reading its definition would wait.',
                             r.schema_name, r.table_name, r.template_oid::regclass);
            fix := 'Run shardid.doctor() again when the table is not locked.';
        ELSE
            problem := 'table differs from its template';
            detail := format('Table %I.%I of shard %s differs from %s, the only table of that name outside the shard schemas of a role that may register shards (or whose objects you trust), taken as its template: %s.',
                             r.schema_name, r.table_name, r.shard, r.template_oid::regclass, r.drift);
            fix := shardid.drift_fix(r.template_oid, r.table_oid, r.column_name);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor_drift(shardid.id_defaults[]) IS
'doctor(): tables of registered shards that differ from their template (the only table of their name outside the shard schemas), with the statements that would align them';

CREATE OR REPLACE FUNCTION doctor(scan_rows boolean DEFAULT true)
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    defs shardid.id_defaults[];
BEGIN
    RETURN QUERY SELECT * FROM shardid.doctor_epoch_unset();
    -- every check below decodes ids with the epoch in force: under another
    -- epoch than the ids' their rows and fixes would be wrong (a
    -- raise_high_water() to a time decoded under it, say), so that row
    -- stands alone
    RETURN QUERY SELECT * FROM shardid.doctor_ids_epoch();
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM shardid.doctor_sign_bit();
    defs := shardid.doctor_id_defaults();
    RETURN QUERY SELECT * FROM shardid.doctor_id_columns(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_mark();
    RETURN QUERY SELECT * FROM shardid.doctor_lock_table();
    IF scan_rows THEN
        RETURN QUERY SELECT * FROM shardid.doctor_stored_ids();
    END IF;
    RETURN QUERY SELECT * FROM shardid.doctor_unindexed(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_domains(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_foreign_objects();
    RETURN QUERY SELECT * FROM shardid.doctor_missing_schemas();
    RETURN QUERY SELECT * FROM shardid.doctor_claimed_shards(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_schema_shards(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_no_id_default(defs);
    RETURN QUERY SELECT * FROM shardid.doctor_drift(defs);
    IF scan_rows THEN
        RETURN QUERY SELECT * FROM shardid.doctor_rows(defs);
    END IF;
    RETURN QUERY SELECT * FROM shardid.doctor_citus();
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET row_security = off;

COMMENT ON FUNCTION doctor(boolean) IS
'one row per problem with the logical shards of this database, each with how to fix it; scan_rows => false skips reading table rows';

CREATE OR REPLACE FUNCTION create_shards(template name,
                              shards integer[],
                              prefix text DEFAULT 'shard_',
                              digits integer DEFAULT 4,
                              id_column name DEFAULT 'id',
                              use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
SELECT shardid.warn_sequence_free(use_sequence);
SELECT * FROM shardid.make_shards(template, shards, NULL, prefix, digits, id_column, use_sequence)
$$ LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, in_batches => false), with a row per table: shard, schema, table and what was done';

CREATE OR REPLACE FUNCTION create_local_shards(template name,
                                    shards integer[],
                                    prefix text DEFAULT 'shard_',
                                    digits integer DEFAULT 4,
                                    id_column name DEFAULT 'id',
                                    use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
SELECT shardid.warn_sequence_free(use_sequence);
SELECT * FROM shardid.make_local_shards(template, shards, prefix, digits, id_column, use_sequence)
$$ LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_local_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, distribute => false, in_batches => false), with a row per table (which, with Citus schema-based sharding on, makes plain schemas where this makes tenant schemas whose tables stay local)';
-- (end of: wrong calls and drift)

-- The private functions move to schema shardid_internal (1.4); below, every
-- routine that calls one by name is made again with the new name.  Those a
-- view or trigger names are bound by oid and follow.
ALTER FUNCTION shardid.can_commit() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.check_id_columns(name) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.check_registry_writer(text) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.check_shard_schema(name, integer) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.check_shards(integer[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.check_template(name, text, integer, name) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.citus_guard() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.citus_guard_ddl() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.default_call(pg_node_tree, regprocedure, regprocedure) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.default_text(pg_node_tree, oid) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.default_uses_sequence() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_align_statements(regclass, regclass, name) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_citus() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_claimed_shards(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_domains(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_drift(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_epoch_unset() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_foreign_objects() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_id_columns(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_id_defaults() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_ids_epoch() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_lock_table() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_mark() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_missing_schemas() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_no_id_default(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_rows(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_schema_shards(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_sign_bit() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_stored_ids() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.doctor_unindexed(shardid.id_defaults[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.drift_fix(regclass, regclass, name) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.floor_after_ddl() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.floor_before_ddl() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.foreign_objects() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.id_column_fix(oid, smallint) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.id_column_readable(oid, smallint, boolean) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.id_column_unreadable(oid, smallint) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.id_default_drift(regclass, name, integer) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.legacy_ids_guard() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.make_local_shards(name, integer[], text, integer, name, boolean) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.make_shards(name, integer[], boolean, text, integer, name, boolean) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.owner_trusted(oid) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.registry_floor() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.registry_guard() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.rows_of_other_shards(regclass, name, integer) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.shard_foreign_objects(name[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.shard_stamps() SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.shards_distributed(boolean) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.table_drift(regclass, regclass, name) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.warn_claimed_elsewhere(integer[]) SET SCHEMA shardid_internal;
ALTER FUNCTION shardid.warn_sequence_free(boolean) SET SCHEMA shardid_internal;

-- trigger functions: no one calls them (1.4)
REVOKE EXECUTE ON FUNCTION shardid_internal.registry_guard() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION shardid_internal.legacy_ids_guard() FROM PUBLIC;

COMMENT ON FUNCTION shardid_internal.citus_guard() IS
'event trigger function of shardid_citus_guard: without Citus it returns at once; refuses an ALTER TABLE, a function''s too, that leaves a table distributed by a column, a reference table or a tenant table with a next_id() DEFAULT; for a statement the client sent it calls shardid_internal.citus_guard_ddl(), then refuses a table made in or moved into a tenant schema with a next_id() DEFAULT left (its domain''s)';

COMMENT ON FUNCTION shardid.mark_status() IS
'deprecated in 1.3 (removed in 2.0): the same columns are in info(), stored_checks, stored_moves and stored_too_far as floors_applied, floors_moved and floors_beyond_bound; stored_unindexed is 0';

-- The deprecated routines of SQL call this first: a WARNING the first time
-- a session calls each, naming what replaces it and the release that
-- removes it (2.0).  Only those names: any other is refused.
CREATE FUNCTION shardid_internal.warn_deprecated(routine text)
RETURNS void
AS 'MODULE_PATHNAME', 'shardid_warn_deprecated'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.warn_deprecated(text) IS
'private: the WARNING of a deprecated routine (create_shards, create_local_shards, provision_shards(shards), provision_shards(first_shard, last_shard)), once per session';

CREATE OR REPLACE FUNCTION shardid_internal.foreign_objects(OUT object text, OUT owner name)
RETURNS SETOF record
AS $$
WITH RECURSIVE ext AS (
    SELECT e.oid AS extoid, e.extnamespace AS ns FROM pg_extension e WHERE e.extname = 'shardid'
    UNION ALL
    SELECT e.oid, n.oid FROM pg_extension e, pg_namespace n
    WHERE e.extname = 'shardid' AND n.nspname = 'shardid_internal'
), ours(classid, objid) AS (
    SELECT d.classid, d.objid FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.extoid AND d.deptype = 'e'
    UNION
    SELECT d.classid, d.objid FROM pg_depend d
    JOIN ours o ON d.refclassid = o.classid AND d.refobjid = o.objid
    WHERE d.deptype IN ('i', 'a')
), present(classid, objid, owner) AS (
    SELECT 'pg_proc'::regclass, oid, proowner FROM pg_proc, ext WHERE pronamespace = ext.ns
    UNION ALL SELECT 'pg_class'::regclass, oid, relowner FROM pg_class, ext WHERE relnamespace = ext.ns
    UNION ALL SELECT 'pg_type'::regclass, oid, typowner FROM pg_type, ext WHERE typnamespace = ext.ns
    UNION ALL SELECT 'pg_operator'::regclass, oid, oprowner FROM pg_operator, ext WHERE oprnamespace = ext.ns
    UNION ALL SELECT 'pg_collation'::regclass, oid, collowner FROM pg_collation, ext WHERE collnamespace = ext.ns
    UNION ALL SELECT 'pg_conversion'::regclass, oid, conowner FROM pg_conversion, ext WHERE connamespace = ext.ns
    UNION ALL SELECT 'pg_opclass'::regclass, oid, opcowner FROM pg_opclass, ext WHERE opcnamespace = ext.ns
    UNION ALL SELECT 'pg_opfamily'::regclass, oid, opfowner FROM pg_opfamily, ext WHERE opfnamespace = ext.ns
    UNION ALL SELECT 'pg_statistic_ext'::regclass, oid, stxowner FROM pg_statistic_ext, ext WHERE stxnamespace = ext.ns
    UNION ALL SELECT 'pg_ts_config'::regclass, oid, cfgowner FROM pg_ts_config, ext WHERE cfgnamespace = ext.ns
    UNION ALL SELECT 'pg_ts_dict'::regclass, oid, dictowner FROM pg_ts_dict, ext WHERE dictnamespace = ext.ns
    UNION ALL SELECT 'pg_ts_parser'::regclass, oid, NULL::oid FROM pg_ts_parser, ext WHERE prsnamespace = ext.ns
    UNION ALL SELECT 'pg_ts_template'::regclass, oid, NULL::oid FROM pg_ts_template, ext WHERE tmplnamespace = ext.ns
    UNION ALL SELECT 'pg_extension'::regclass, e.oid, e.extowner FROM pg_extension e, ext
              WHERE e.extnamespace = ext.ns AND e.oid <> ext.extoid
)
SELECT pg_describe_object(p.classid, p.objid, 0), pg_get_userbyid(p.owner)
FROM present p
WHERE NOT EXISTS (SELECT FROM ours o WHERE o.classid = p.classid AND o.objid = p.objid)
   OR p.owner IS NOT NULL AND NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.oid = p.owner)
ORDER BY 1
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.foreign_objects() IS
'objects in schemas shardid and shardid_internal that are not shardid''s own, or that a role which is no superuser owns; doctor() reports them';

CREATE OR REPLACE FUNCTION check_no_foreign_objects()
RETURNS void
AS $$
DECLARE
    found_objects text;
BEGIN
    SELECT string_agg(format('%s (owner %s)', f.object, f.owner), ', ')
    INTO found_objects FROM shardid_internal.foreign_objects() f;
    IF found_objects IS NOT NULL THEN
        RAISE EXCEPTION 'schema shardid holds objects that are not part of extension shardid'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Found: %s.  Another role may have created them to be run in place of shardid''s own functions.', found_objects),
                  HINT = 'A superuser should find out who created them, remove them from the extension (ALTER EXTENSION shardid DROP ...) and drop them or move them to another schema, and run the command again.';
    END IF;
END
$$ LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_no_foreign_objects() IS
'raise an error if schema shardid holds objects that are not shardid''s own';

CREATE OR REPLACE FUNCTION shardid_internal.registry_guard()
RETURNS trigger
AS $$
BEGIN
    -- an UPDATE may only raise the floor (shardid.raise_floor())
    IF TG_OP = 'UPDATE' AND
       (NEW.shard, NEW.schema_name, NEW.registered_at, NEW.registered_by) IS DISTINCT FROM
       (OLD.shard, OLD.schema_name, OLD.registered_at, OLD.registered_by) THEN
        RAISE EXCEPTION 'the shard registry is not updated in place'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Use shardid.unregister_shard() and shardid.register_shard(); shardid.raise_floor() raises a shard''s floor.';
    END IF;
    PERFORM shardid_internal.check_registry_writer(CASE TG_OP WHEN 'DELETE' THEN 'unregister' ELSE 'register' END);
    IF TG_OP = 'UPDATE' THEN
        RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    IF NEW.shard < 0 OR NEW.shard > shardid.max_shard() THEN
        RAISE EXCEPTION 'shard % is out of range', NEW.shard
            USING ERRCODE = 'numeric_value_out_of_range',
                  DETAIL = format('A shard must be between 0 and %s (13 bits).', shardid.max_shard());
    END IF;
    IF NEW.schema_name IN ('pg_catalog', 'information_schema', 'pg_toast', 'shardid')
       OR NEW.schema_name ~ '^pg_(toast_)?temp_' THEN
        RAISE EXCEPTION 'schema "%" cannot hold a logical shard', NEW.schema_name
            USING ERRCODE = 'invalid_schema_name',
                  DETAIL = 'System schemas, temporary schemas and schema shardid are not shard schemas.';
    END IF;
    IF to_regnamespace(quote_ident(NEW.schema_name)) IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', NEW.schema_name
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    NEW.registered_at := now();
    NEW.registered_by := current_user;
    RETURN NEW;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.registry_guard() IS
'trigger on shardid.shard_registry: checks who writes it and what (no system schema, the schema exists), and records who did';

CREATE OR REPLACE FUNCTION shardid_internal.check_id_columns(schema_name name)
RETURNS void
AS $$
DECLARE
    r record;
BEGIN
    -- (OFFSET 0 keeps each EXISTS a lookup per column: as a join it read
    -- every next_id() DEFAULT of the database at each registration)
    FOR r IN
        SELECT c.oid AS tab, a.attnum, a.attname, NULL::text AS reason
        FROM pg_depend dep
        JOIN pg_class c ON c.oid = dep.objid AND c.relkind IN ('r', 'p')
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE dep.classid = 'pg_class'::regclass AND dep.objsubid = 0
          AND dep.refclassid = 'pg_namespace'::regclass
          AND dep.refobjid = to_regnamespace(quote_ident(check_id_columns.schema_name))
          -- (the DEFAULT first, then its dependencies: a join could read
          -- every dependency on next_id() of the database for each column)
          AND (EXISTS (SELECT FROM pg_attrdef d
                       WHERE d.adrelid = c.oid AND d.adnum = a.attnum
                         AND EXISTS (SELECT FROM pg_depend p
                                     WHERE p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
                                       AND p.refclassid = 'pg_proc'::regclass
                                       AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                          'shardid.next_id(integer)'::regprocedure)
                                     OFFSET 0)
                       OFFSET 0)
               OR (NOT a.atthasdef
                   AND EXISTS (SELECT FROM pg_type t
                               WHERE t.oid = a.atttypid AND t.typtype = 'd'
                                 AND EXISTS (SELECT FROM pg_depend p
                                             WHERE p.classid = 'pg_type'::regclass AND p.objid = t.oid
                                               AND p.refclassid = 'pg_proc'::regclass
                                               AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                                  'shardid.next_id(integer)'::regprocedure)
                                             OFFSET 0)
                               OFFSET 0)))
          AND NOT coalesce(shardid_internal.id_column_readable(c.oid, a.attnum), true)
        ORDER BY c.relname, a.attnum
    LOOP
        r.reason := shardid_internal.id_column_unreadable(r.tab, r.attnum);
        CONTINUE WHEN r.reason IS NULL;
        RAISE EXCEPTION 'the ids of column "%" of table % cannot be read: %', r.attname, r.tab::regclass, r.reason
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Registering a shard reads the newest id of each id column of its schema through a btree index on the column (at any position of its key), so that new ids sort after the stored ones; restores raise the floor the same way.',
                  HINT = 'Run ' || shardid_internal.id_column_fix(r.tab, r.attnum) || ' then register the shard again.';
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_id_columns(name) IS
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
    PERFORM shardid_internal.check_registry_writer('register');
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
    PERFORM shardid_internal.check_id_columns(schema_name);
    -- a registration whose schema was dropped gives way
    DELETE FROM shardid.shard_registry r WHERE r.shard = register_shard.shard;
    INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (shard, schema_name);
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION register_shard(integer, name) IS
'record that a schema holds a logical shard in this database, for routing; refused while another existing schema is registered to it';

CREATE OR REPLACE FUNCTION unregister_shard(shard integer)
RETURNS boolean
AS $$
DECLARE
    n integer;
BEGIN
    PERFORM shardid_internal.check_registry_writer('unregister');
    DELETE FROM shardid.shard_registry r WHERE r.shard = unregister_shard.shard;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n > 0;
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION unregister_shard(integer) IS
'forget where a logical shard lives in this database (its schema and tables stay); true if it was registered';

CREATE OR REPLACE FUNCTION citus_distribute_shard(schema_name name, shard integer)
RETURNS TABLE (table_name name, id_column name)
AS $$
DECLARE
    d record;
    owner_names text;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_schema') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name)) IS NULL THEN
        RAISE EXCEPTION 'schema "%" does not exist', schema_name
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    -- distributing copies the rows into the shard tables (index
    -- expressions, constraints): of trusted owners only
    SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(o.owner)::text), ', ')
    INTO owner_names
    FROM (SELECT nsp.nspowner AS owner FROM pg_catalog.pg_namespace nsp
          WHERE nsp.nspname OPERATOR(pg_catalog.=) citus_distribute_shard.schema_name
          UNION ALL
          SELECT c.relowner FROM pg_catalog.pg_class c
          WHERE c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace(pg_catalog.quote_ident(schema_name))::oid
            AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])) o
    WHERE NOT shardid_internal.owner_trusted(o.owner);
    IF owner_names IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" or its tables belong to role %', schema_name, owner_names
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Distributing a schema copies its rows into Citus shard tables, which runs expressions of its tables (index expressions, constraints) with your privileges.',
                  HINT = 'Run it as the owner of the schema and its tables.';
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

CREATE OR REPLACE FUNCTION citus_doctor()
RETURNS TABLE (problem text, object text, node text, detail text, fix text)
AS $$
DECLARE
    t record;
    r record;
    seq text;
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_schema') IS NULL THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'feature_not_supported';
    END IF;
    -- next_id() DEFAULTs and set_id() triggers of Citus tables; the
    -- distribution column is read from partkey, the Var Citus stores as text
    FOR t IN SELECT x.*, p.partmethod, p.repmodel,
                    CASE p.partmethod WHEN 'h' THEN 'hash' WHEN 'a' THEN 'append' WHEN 'r' THEN 'range' END AS method,
                    (SELECT a.attname FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid OPERATOR(pg_catalog.=) p.logicalrelid
                       AND a.attnum OPERATOR(pg_catalog.=)
                           pg_catalog.substring(p.partkey, ':varattno ([0-9]+)')::pg_catalog.int4) AS dist_column
             FROM (SELECT i.schema_name, i.table_name, i.column_name, i.shard::text AS shard, i.table_oid,
                          NULL::name AS trigger_name
                   FROM shardid.id_defaults i
                   UNION ALL
                   SELECT n.nspname, c.relname, (a.args[2])::name, a.args[1], c.oid, g.tgname
                   FROM pg_catalog.pg_trigger g
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.tgrelid
                   JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
                   CROSS JOIN LATERAL (SELECT pg_catalog.string_to_array(pg_catalog.encode(g.tgargs, 'escape'), '\000') AS args) a
                   WHERE g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid) x
             JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) x.table_oid
             ORDER BY 1, 2, 3 LOOP
        object := pg_catalog.format('%I.%I.%I', t.schema_name, t.table_name, t.column_name);
        node := NULL;
        -- the name bigserial would give the column's sequence
        seq := pg_catalog.left(t.table_name OPERATOR(pg_catalog.||) '_' OPERATOR(pg_catalog.||) t.column_name, 59) OPERATOR(pg_catalog.||) '_seq';
        IF t.partmethod OPERATOR(pg_catalog.<>) 'n' OR t.repmodel OPERATOR(pg_catalog.=) 't' THEN
            IF t.partmethod OPERATOR(pg_catalog.<>) 'n' THEN
                problem := 'shardid on a table distributed by a column';
                detail := pg_catalog.format('Citus distributes %I.%I by column %I (%s): the rows of shard %s live on the placements of many Citus shards, ',
                                            t.schema_name, t.table_name, COALESCE(t.dist_column, '?'), t.method, t.shard);
            ELSE
                problem := 'shardid on a reference table';
                detail := pg_catalog.format('%I.%I is a Citus reference table, copied to every node, ',
                                            t.schema_name, t.table_name);
            END IF;
            IF t.trigger_name IS NULL THEN
                detail := detail OPERATOR(pg_catalog.||)
                          pg_catalog.format('and its DEFAULT calls shardid.next_id(%s) on whichever node receives the INSERT; nodes repeat each other''s ids. shardid does not serve such tables.',
                                            t.shard);
                fix := pg_catalog.format('Give the column Citus''s own ids, unique across nodes: CREATE SEQUENCE %I.%I; ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT pg_catalog.nextval(%L); (not shardid.citus_use_trigger(), which refuses this table). For shardid''s ids, use a Citus tenant schema per logical shard: CALL shardid.add_shards(), shardid.citus_distribute_shard().',
                                         t.schema_name, seq, t.schema_name, t.table_name, t.column_name,
                                         pg_catalog.format('%I.%I', t.schema_name, seq));
            ELSE
                detail := detail OPERATOR(pg_catalog.||)
                          pg_catalog.format('and its set_id() trigger makes ids of shard %s on every node that holds a copy; they repeat each other''s ids. shardid does not serve such tables.',
                                            t.shard);
                fix := pg_catalog.format('DROP TRIGGER %I ON %I.%I; then give the column Citus''s own ids, unique across nodes: CREATE SEQUENCE %I.%I; ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT pg_catalog.nextval(%L);. For shardid''s ids, use a Citus tenant schema per logical shard: CALL shardid.add_shards(), shardid.citus_distribute_shard().',
                                         t.trigger_name, t.schema_name, t.table_name,
                                         t.schema_name, seq, t.schema_name, t.table_name, t.column_name,
                                         pg_catalog.format('%I.%I', t.schema_name, seq));
            END IF;
            RETURN NEXT;
        ELSIF t.trigger_name IS NULL THEN
            problem := 'id made where the statement arrives';
            detail := pg_catalog.format('Its DEFAULT calls shardid.next_id(%s) on whichever node receives the INSERT; nodes repeat each other''s ids.',
                                        t.shard);
            fix := pg_catalog.format('SELECT shardid.citus_use_trigger(%L, %s);',
                                     pg_catalog.format('%I.%I', t.schema_name, t.table_name), t.shard);
            RETURN NEXT;
        END IF;
    END LOOP;
    -- a table added later to a tenant schema whose tables have the
    -- trigger: neither trigger nor DEFAULT on the column the schema's other
    -- tables make ids in, so every INSERT without an id fails (NOT NULL)
    FOR t IN SELECT DISTINCT ON (c.oid) c.oid::pg_catalog.regclass::text AS tab, s.schema_name, s.shard, s.id_column
             FROM (SELECT DISTINCT ct.schema_name, ct.shard, ct.id_column FROM shardid.citus_tenants ct) s
             JOIN pg_catalog.pg_namespace n ON n.nspname OPERATOR(pg_catalog.=) s.schema_name
             JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) n.oid
             JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) c.oid
             JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
                  AND a.attname OPERATOR(pg_catalog.=) s.id_column AND a.attnum OPERATOR(pg_catalog.>) 0
                  AND NOT a.attisdropped
             WHERE p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.<>) 't'
               AND NOT c.relispartition
               AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype::oid
               AND NOT a.atthasdef AND a.attidentity OPERATOR(pg_catalog.=) '' AND a.attgenerated OPERATOR(pg_catalog.=) ''
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_trigger g
                               WHERE g.tgrelid OPERATOR(pg_catalog.=) c.oid
                                 AND g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid)
             ORDER BY c.oid, s.shard LOOP
        problem := 'tenant table without ids';
        object := t.tab;
        node := NULL;
        detail := pg_catalog.format('Tenant schema %I makes ids of shard %s with the set_id() trigger, but this table has neither the trigger nor a DEFAULT on its column %I: an INSERT without an id fails (null value in column %I).',
                                    t.schema_name, t.shard, t.id_column, t.id_column);
        fix := pg_catalog.format('SELECT shardid.citus_use_trigger(%L, %s, %L);', t.tab, t.shard, t.id_column);
        RETURN NEXT;
    END LOOP;
    -- a trigger table whose id column leads no plain btree index: set_id()
    -- reads a table's newest id through such an index only, so after a
    -- tenant moved off a node whose clock was ahead new ids may sort below
    -- the moved ones (a primary key on the id column is such an index)
    FOR t IN SELECT ct.table_oid::pg_catalog.regclass::text AS tab, ct.id_column
             FROM shardid.citus_tenants ct
             -- tables Citus distributes by a column and reference tables
             -- have a row of their own above
             WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_dist_partition p
                               WHERE p.logicalrelid OPERATOR(pg_catalog.=) ct.table_oid
                                 AND (p.partmethod OPERATOR(pg_catalog.<>) 'n'
                                      OR p.repmodel OPERATOR(pg_catalog.=) 't'))
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_index i
                               JOIN pg_catalog.pg_class ic ON ic.oid OPERATOR(pg_catalog.=) i.indexrelid
                               JOIN pg_catalog.pg_am am ON am.oid OPERATOR(pg_catalog.=) ic.relam
                               JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) ct.table_oid
                                    AND a.attname OPERATOR(pg_catalog.=) ct.id_column
                               WHERE i.indrelid OPERATOR(pg_catalog.=) ct.table_oid
                                 AND am.amname OPERATOR(pg_catalog.=) 'btree'
                                 AND i.indkey[0] OPERATOR(pg_catalog.=) a.attnum
                                 AND i.indexprs IS NULL AND i.indpred IS NULL AND i.indisvalid)
             ORDER BY 1 LOOP
        problem := 'tenant table without an index on its id';
        object := t.tab;
        node := NULL;
        detail := pg_catalog.format('The set_id() trigger reads the newest id stored in %s through a btree index that starts with column %I, and this table has none: after Citus moved the tenant off a node whose clock was ahead, new ids may sort below the moved ones.',
                                    t.tab, t.id_column);
        fix := pg_catalog.format('ALTER TABLE %s ADD PRIMARY KEY (%I);  -- or CREATE INDEX ON %s (%I);',
                                 t.tab, t.id_column, t.tab, t.id_column);
        RETURN NEXT;
    END LOOP;
    -- triggers that citus_tenants leaves out: the table's owner may not
    -- register shards
    FOR t IN SELECT c.oid::pg_catalog.regclass::text AS tab, pg_catalog.pg_get_userbyid(c.relowner) AS owner
             FROM pg_catalog.pg_trigger g
             JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.tgrelid
             WHERE g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid
               AND NOT pg_catalog.has_table_privilege(c.relowner, 'shardid.shard_registry'::pg_catalog.regclass, 'INSERT')
             ORDER BY 1 LOOP
        problem := 'tenant table of a role that may not register shards';
        object := t.tab;
        node := NULL;
        detail := pg_catalog.format('Role %s owns this table with a set_id() trigger; routing on the workers and these checks leave it out.',
                                    pg_catalog.quote_ident(t.owner));
        fix := pg_catalog.format('GRANT INSERT, DELETE ON shardid.shard_registry TO %I; on every node, or give the table to a role that may register shards.',
                                 t.owner);
        RETURN NEXT;
    END LOOP;
    FOR t IN SELECT c.shard, pg_catalog.string_agg(DISTINCT c.schema_name::text, ', ') AS schemas
             FROM shardid.citus_tenants c GROUP BY c.shard
             HAVING pg_catalog.count(DISTINCT c.schema_name) OPERATOR(pg_catalog.>) 1 LOOP
        problem := 'shard claimed by several schemas';
        object := t.shard::text;
        node := NULL;
        detail := pg_catalog.format('Schemas %s all make ids of shard %s.', t.schemas, t.shard);
        fix := 'Give every tenant schema a shard of its own: run shardid.citus_use_trigger(<table>, <shard>) with another shard for each table of all schemas but one.';
        RETURN NEXT;
    END LOOP;
    -- run_command_on_placements() passes the command through format()
    -- again, with the shard table's name: every '%' but its placeholders
    -- (%1$L, the name as a literal) is doubled
    FOR t IN SELECT c.table_oid, c.shard, c.id_column FROM shardid.citus_tenants c
             JOIN pg_catalog.pg_dist_partition p ON p.logicalrelid OPERATOR(pg_catalog.=) c.table_oid
             -- tenant tables only: the unsupported ones are reported above
             WHERE p.partmethod OPERATOR(pg_catalog.=) 'n' AND p.repmodel OPERATOR(pg_catalog.<>) 't'
             ORDER BY c.schema_name, c.table_name LOOP
        FOR r IN SELECT * FROM pg_catalog.run_command_on_placements(t.table_oid::pg_catalog.regclass,
                    pg_catalog.format('SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_trigger g WHERE g.tgrelid OPERATOR(pg_catalog.=) %%1$L::pg_catalog.regclass AND g.tgfoid OPERATOR(pg_catalog.=) %L::pg_catalog.regprocedure) OPERATOR(pg_catalog.||) %L OPERATOR(pg_catalog.||) shardid_internal.rows_of_other_shards(%%1$L::pg_catalog.regclass, %s, %s)',
                                      'shardid.set_id()', ' ',
                                      pg_catalog.replace(pg_catalog.quote_literal(t.id_column), '%', '%%'),
                                      t.shard)) LOOP
            node := pg_catalog.format('%s:%s', r.nodename, r.nodeport);
            object := pg_catalog.format('%s (shard table %s)', t.table_oid::pg_catalog.regclass, r.shardid);
            IF NOT r.success THEN
                problem := 'placement not checked';
                detail := r.result;
                fix := 'Run shardid.citus_doctor() again when the node answers.';
                RETURN NEXT;
                CONTINUE;
            END IF;
            IF pg_catalog.split_part(r.result, ' ', 1) OPERATOR(pg_catalog.=) '0' THEN
                problem := 'trigger missing on a placement';
                detail := 'The shard table makes no ids.';
                fix := pg_catalog.format('SELECT shardid.citus_use_trigger(%L, %s);',
                                         t.table_oid::pg_catalog.regclass::text, t.shard);
                RETURN NEXT;
            END IF;
            IF pg_catalog.split_part(r.result, ' ', 2) OPERATOR(pg_catalog.<>) '0' THEN
                problem := 'rows of other shards';
                detail := pg_catalog.format('%s rows have an id of another shard than %s.',
                                            pg_catalog.split_part(r.result, ' ', 2), t.shard);
                fix := pg_catalog.format('Find them with SELECT * FROM %s WHERE shardid.id_shard(%I) OPERATOR(pg_catalog.<>) %s; and move them to the schema of their shard.',
                                         t.table_oid::pg_catalog.regclass::text, t.id_column, t.shard);
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
            detail := pg_catalog.format('%s replication origins are free; shardid takes 2 on every node and an online citus_schema_move needs one more on its target.', r.result);
            fix := 'Raise max_replication_slots (max_active_replication_origins from PostgreSQL 18) on that node, to 2 plus one per concurrent move, and restart it.';
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION citus_doctor() IS
'Citus checks of the shard tables on the workers and of every node (doctor() includes them): ids made by DEFAULTs on the routing node, shardid on tables distributed by a column and reference tables (unsupported), tenant tables without ids, shards claimed twice, the set_id() trigger and rows of other shards on every placement, free replication origins on every node';

REVOKE ALL ON FUNCTION citus_doctor() FROM PUBLIC;

CREATE OR REPLACE FUNCTION shardid_internal.citus_guard_ddl()
RETURNS void
AS $$
DECLARE
    cmd record;
    rel record;
    part record;
    distributed boolean;
    has_trigger boolean;
    dflt record;
    trg record;
    nsch integer;
    g_shard integer;
    g_column name;
    hint CONSTANT text := 'For shardid''s ids, use Citus schema-based sharding, a tenant schema per logical shard: shardid.add_shards(), shardid.citus_distribute_shard(). For this table, use a bigserial or identity column: Citus keeps their values unique across nodes.';
BEGIN
    IF pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NULL
       OR pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NULL THEN
        RETURN;
    END IF;
    -- the coordinator: the workers get its commands, and Citus's internal
    -- sessions (application_name as Citus sets it) make shard tables
    IF (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g) IS DISTINCT FROM 0
       OR pg_catalog.current_setting('application_name') OPERATOR(pg_catalog.~) '^citus_(internal|rebalancer) gpid='
       OR NOT COALESCE(pg_catalog.current_setting('citus.enable_ddl_propagation', true), 'on')::boolean THEN
        RETURN;
    END IF;
    FOR cmd IN SELECT DISTINCT d.objid, d.object_type
               FROM pg_catalog.pg_event_trigger_ddl_commands() d
               WHERE d.object_type OPERATOR(pg_catalog.=) ANY (ARRAY['table', 'trigger'])
               ORDER BY d.objid LOOP
        IF cmd.object_type OPERATOR(pg_catalog.=) 'trigger' THEN
            SELECT g.tgrelid INTO trg FROM pg_catalog.pg_trigger g
            WHERE g.oid OPERATOR(pg_catalog.=) cmd.objid
              AND g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid;
            IF FOUND THEN
                SELECT p.partmethod, p.repmodel,
                       (SELECT a.attname FROM pg_catalog.pg_attribute a
                        WHERE a.attrelid OPERATOR(pg_catalog.=) p.logicalrelid
                          AND a.attnum OPERATOR(pg_catalog.=)
                              pg_catalog.substring(p.partkey, ':varattno ([0-9]+)')::pg_catalog.int4) AS dist_column
                INTO part FROM pg_catalog.pg_dist_partition p
                WHERE p.logicalrelid OPERATOR(pg_catalog.=) trg.tgrelid;
                IF FOUND AND part.partmethod OPERATOR(pg_catalog.<>) 'n' THEN
                    RAISE EXCEPTION 'shardid does not serve table %, which Citus distributes by column "%"',
                                    trg.tgrelid::pg_catalog.regclass, COALESCE(part.dist_column, '?')
                        USING ERRCODE = 'feature_not_supported',
                              DETAIL = 'The rows of one shardid shard would live on the placements of many Citus shards, on several nodes, and each would make ids of that shard that repeat the others''. A shard''s ids must all come from one server.',
                              HINT = hint;
                ELSIF FOUND AND part.repmodel OPERATOR(pg_catalog.=) 't' THEN
                    RAISE EXCEPTION 'shardid does not serve table %, a Citus reference table', trg.tgrelid::pg_catalog.regclass
                        USING ERRCODE = 'feature_not_supported',
                              DETAIL = 'Citus keeps a copy of a reference table on every node, and each copy would make its own ids for the same rows. A shard''s ids must all come from one server.',
                              HINT = hint;
                END IF;
            END IF;
            CONTINUE;
        END IF;
        SELECT c.oid, c.relname, c.relnamespace, n.nspname INTO rel
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE c.oid OPERATOR(pg_catalog.=) cmd.objid
          AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
          AND c.relpersistence OPERATOR(pg_catalog.=) 'p' AND NOT c.relispartition;
        IF NOT FOUND THEN
            CONTINUE;
        END IF;
        -- the first bigint column whose own DEFAULT calls next_id()
        SELECT a.attname, dc.shard INTO dflt
        FROM pg_catalog.pg_attrdef d
        JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid
             AND a.attnum OPERATOR(pg_catalog.=) d.adnum
        CROSS JOIN LATERAL shardid_internal.default_call(d.adbin, 'shardid.next_id(integer,bigint)'::pg_catalog.regprocedure,
                                                'shardid.next_id(integer)'::pg_catalog.regprocedure) dc
        WHERE d.adrelid OPERATOR(pg_catalog.=) rel.oid
          AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype::oid
          AND EXISTS (SELECT FROM pg_catalog.pg_depend dep
                      WHERE dep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
                        AND dep.objid OPERATOR(pg_catalog.=) d.oid
                        AND dep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                        AND dep.refobjid OPERATOR(pg_catalog.=) ANY (ARRAY['shardid.next_id(integer,bigint)'::pg_catalog.regprocedure,
                                                                           'shardid.next_id(integer)'::pg_catalog.regprocedure]::pg_catalog.oid[]))
        ORDER BY a.attnum LIMIT 1;
        SELECT p.partmethod, p.repmodel,
               (SELECT a.attname FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) p.logicalrelid
                  AND a.attnum OPERATOR(pg_catalog.=)
                      pg_catalog.substring(p.partkey, ':varattno ([0-9]+)')::pg_catalog.int4) AS dist_column
        INTO part
        FROM pg_catalog.pg_dist_partition p
        WHERE p.logicalrelid OPERATOR(pg_catalog.=) rel.oid;
        distributed := FOUND;
        IF FOUND AND (part.partmethod OPERATOR(pg_catalog.<>) 'n' OR part.repmodel OPERATOR(pg_catalog.=) 't') THEN
            IF dflt.attname IS NOT NULL THEN
                IF part.partmethod OPERATOR(pg_catalog.<>) 'n' THEN
                    RAISE EXCEPTION 'shardid does not serve table %, which Citus distributes by column "%"',
                                    rel.oid::pg_catalog.regclass, COALESCE(part.dist_column, '?')
                        USING ERRCODE = 'feature_not_supported',
                              DETAIL = pg_catalog.format('The DEFAULT of its column %I calls shardid.next_id(), which Citus runs on whichever node receives the INSERT: the nodes would repeat each other''s ids.', dflt.attname),
                              HINT = hint;
                END IF;
                RAISE EXCEPTION 'shardid does not serve table %, a Citus reference table', rel.oid::pg_catalog.regclass
                    USING ERRCODE = 'feature_not_supported',
                          DETAIL = pg_catalog.format('The DEFAULT of its column %I calls shardid.next_id(), which Citus runs on whichever node receives the INSERT: the nodes would repeat each other''s ids.', dflt.attname),
                          HINT = hint;
            END IF;
            CONTINUE;
        END IF;
        -- a tenant schema (Citus's catalog, by its primary key)
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_dist_schema s
                       WHERE s.schemaid OPERATOR(pg_catalog.=) rel.relnamespace) THEN
            CONTINUE;
        END IF;
        SELECT g.tgname, g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid AS set_id,
               (pg_catalog.string_to_array(pg_catalog.encode(g.tgargs, 'escape'), '\000'))[1] AS shard
        INTO trg
        FROM pg_catalog.pg_trigger g
        WHERE g.tgrelid OPERATOR(pg_catalog.=) rel.oid
          AND (g.tgname OPERATOR(pg_catalog.=) 'shardid_set_id'
               OR g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid)
        ORDER BY 2 DESC LIMIT 1;
        has_trigger := FOUND;
        -- a tenant table Citus already distributed (ALTER TABLE): Citus
        -- sends the client's statement to the workers after this trigger,
        -- so a DEFAULT dropped here would stay on every worker's copy, and
        -- an INSERT routed by a worker would keep that worker's id
        IF distributed AND dflt.attname IS NOT NULL THEN
            RAISE EXCEPTION 'a DEFAULT that calls shardid.next_id() is refused on tenant table %', rel.oid::pg_catalog.regclass
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = pg_catalog.format('Citus runs the DEFAULT of column %I on whichever node receives the INSERT: the nodes would repeat each other''s ids. The ids of a tenant table are made where its rows are stored, by the shardid.set_id() trigger.', dflt.attname),
                      HINT = CASE WHEN has_trigger AND trg.set_id
                                  THEN pg_catalog.format('Leave the column without a DEFAULT: the set_id() trigger of shard %s makes its ids.', trg.shard)
                                  ELSE pg_catalog.format('Leave the column without a DEFAULT and install the trigger: SELECT shardid.citus_use_trigger(%L, %s, %L);',
                                                         rel.oid::pg_catalog.regclass::text, COALESCE(dflt.shard::text, 'shard'), dflt.attname) END;
        END IF;
        IF has_trigger THEN
            -- a next_id() DEFAULT given to a table whose trigger makes its
            -- ids: the routing node's id would be kept
            IF trg.set_id AND dflt.attname IS NOT NULL THEN
                EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP DEFAULT',
                                          rel.nspname, rel.relname, dflt.attname);
                RAISE NOTICE 'ids of table % are made by the shardid.set_id() trigger of shard %, where its rows are stored',
                             rel.oid::pg_catalog.regclass, trg.shard
                    USING DETAIL = pg_catalog.format('Its column %I lost its DEFAULT, which called shardid.next_id() and which Citus would run on whichever node receives the INSERT: the nodes would repeat each other''s ids.', dflt.attname);
            END IF;
            CONTINUE;
        END IF;
        IF dflt.attname IS NOT NULL THEN
            IF dflt.shard IS NULL THEN
                CONTINUE;
            END IF;
            g_shard := dflt.shard;
            g_column := dflt.attname;
        ELSE
            -- the shard of the schema's other tables (found through their
            -- dependency on the schema, an index of pg_depend)
            SELECT pg_catalog.count(*)::integer, pg_catalog.min(x.shard), pg_catalog.min(x.id_column::text)
            INTO nsch, g_shard, g_column
            FROM (SELECT DISTINCT (a.args[1])::integer AS shard, (a.args[2])::name AS id_column
                  FROM pg_catalog.pg_depend dep
                  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) dep.objid
                  JOIN pg_catalog.pg_trigger g ON g.tgrelid OPERATOR(pg_catalog.=) c.oid
                  CROSS JOIN LATERAL (SELECT pg_catalog.string_to_array(pg_catalog.encode(g.tgargs, 'escape'), '\000') AS args) a
                  WHERE dep.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                    AND dep.refobjid OPERATOR(pg_catalog.=) rel.relnamespace
                    AND dep.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                    AND c.oid OPERATOR(pg_catalog.<>) rel.oid
                    AND g.tgfoid OPERATOR(pg_catalog.=) 'shardid.set_id()'::pg_catalog.regprocedure::oid
                    AND g.tgnargs OPERATOR(pg_catalog.=) 2
                    AND a.args[1] OPERATOR(pg_catalog.~) '^[0-9]{1,4}$'
                    AND pg_catalog.has_table_privilege(c.relowner, 'shardid.shard_registry'::pg_catalog.regclass, 'INSERT')) x;
            IF nsch OPERATOR(pg_catalog.>) 1 THEN
                CONTINUE;
            ELSIF nsch OPERATOR(pg_catalog.=) 0 THEN
                SELECT r.shard, 'id'::name INTO g_shard, g_column FROM shardid.shard_registry r
                WHERE r.schema_name OPERATOR(pg_catalog.=) rel.nspname;
                IF NOT FOUND THEN
                    CONTINUE;
                END IF;
            END IF;
            -- a column an INSERT without an id fails on
            IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid OPERATOR(pg_catalog.=) rel.oid
                             AND a.attname OPERATOR(pg_catalog.=) g_column
                             AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                             AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype::oid
                             AND a.attnotnull AND NOT a.atthasdef
                             AND a.attidentity OPERATOR(pg_catalog.=) '' AND a.attgenerated OPERATOR(pg_catalog.=) '') THEN
                CONTINUE;
            END IF;
        END IF;
        EXECUTE pg_catalog.format(
            'CREATE TRIGGER shardid_set_id BEFORE INSERT ON %I.%I FOR EACH ROW EXECUTE FUNCTION shardid.set_id(%s, %L)',
            rel.nspname, rel.relname, g_shard, g_column);
        IF dflt.attname IS NOT NULL THEN
            EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I DROP DEFAULT',
                                      rel.nspname, rel.relname, dflt.attname);
            RAISE NOTICE 'ids of table % are made by the shardid.set_id() trigger of shard %, where its rows are stored',
                         rel.oid::pg_catalog.regclass, g_shard
                USING DETAIL = pg_catalog.format('Its column %I lost its DEFAULT, which called shardid.next_id() and which Citus would run on whichever node receives the INSERT: the nodes would repeat each other''s ids.', dflt.attname);
        ELSE
            RAISE NOTICE 'ids of table % are made by the shardid.set_id() trigger of shard %, where its rows are stored',
                         rel.oid::pg_catalog.regclass, g_shard
                USING DETAIL = pg_catalog.format('Tenant schema %I makes ids of shard %s in its column %I, which this table has, without a DEFAULT: as shardid.citus_use_trigger(%L, %s, %L) does.',
                                                 rel.nspname, g_shard, g_column,
                                                 rel.oid::pg_catalog.regclass::text, g_shard, g_column);
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.citus_guard_ddl() IS
'the work of event trigger shardid_citus_guard on the Citus coordinator: the set_id() trigger for a table made in or moved into a tenant schema, next_id() DEFAULTs and set_id() triggers on tables distributed by a column and reference tables refused';

REVOKE ALL ON FUNCTION shardid_internal.citus_guard_ddl() FROM PUBLIC;

CREATE OR REPLACE FUNCTION convert_table(tab regclass, shard integer, id_column name DEFAULT 'id',
                              OUT legacy_below bigint, OUT id_default text)
RETURNS record
AS $$
DECLARE
    me pg_catalog.pg_roles%ROWTYPE;
    rel record;
    col record;
    seq regclass;
    seq_last bigint;
    seq_name text;
    is_strict boolean;
    registered_schema name;
    registered_shard integer;
    i integer := 0;
BEGIN
    PERFORM shardid_internal.check_shards(ARRAY[shard]);
    SELECT * INTO me FROM pg_roles r WHERE r.rolname = current_user;
    SELECT c.relowner INTO rel FROM pg_class c WHERE c.oid = tab;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table with OID % does not exist', tab::oid
            USING ERRCODE = 'undefined_table',
                  HINT = 'Pass the table by name, such as shardid.convert_table(''public.orders'', 42).';
    END IF;
    IF NOT (rel.relowner = me.oid OR (NOT me.rolsuper AND pg_has_role(rel.relowner, 'USAGE'))) THEN
        IF me.rolsuper THEN
            RAISE EXCEPTION 'table % belongs to role %, not to the superuser %', tab,
                            quote_ident(pg_get_userbyid(rel.relowner)::text), quote_ident(current_user::text)
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Converting alters the table as its owner would (widening a column rewrites it and evaluates the owner''s index expressions and CHECK constraints): a superuser does not run another role''s code.',
                      HINT = format('SET ROLE %I; first, then convert the table.', pg_get_userbyid(rel.relowner));
        END IF;
        RAISE EXCEPTION 'must be owner of table %', tab
            USING ERRCODE = 'insufficient_privilege',
                  HINT = format('Run it as role %I, the owner of the table, or as a member of that role.', pg_get_userbyid(rel.relowner));
    END IF;

    -- inserts in flight finish first, those that come wait for the new DEFAULT;
    -- the table alone (ONLY), and only a plain table: LOCK TABLE would lock
    -- every partition or child of one that is refused anyway, waiting for
    -- each while the queries of all of them waited behind it, and would
    -- refuse a sequence, an index or a view with an error of its own
    FOR pass IN 1..2 LOOP
        SELECT c.relname, c.relkind, c.relpersistence, c.relispartition, c.relowner,
               EXISTS (SELECT FROM pg_inherits i WHERE i.inhparent = c.oid) AS has_children,
               n.nspname
        INTO rel
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tab;
        EXIT WHEN pass = 2 OR rel.relkind <> 'r' OR rel.relispartition OR rel.has_children;
        EXECUTE format('LOCK TABLE ONLY %s IN ACCESS EXCLUSIVE MODE', tab);
    END LOOP;
    IF rel.relkind <> 'r' OR rel.relispartition OR rel.has_children THEN
        RAISE EXCEPTION '% % cannot be converted',
                        CASE WHEN rel.relkind = 'p' THEN 'partitioned table' WHEN rel.relispartition THEN 'partition'
                             WHEN rel.relkind = 'r' THEN 'table' WHEN rel.relkind = 'v' THEN 'view'
                             WHEN rel.relkind = 'm' THEN 'materialized view' WHEN rel.relkind = 'f' THEN 'foreign table'
                             WHEN rel.relkind = 'S' THEN 'sequence' WHEN rel.relkind IN ('i', 'I') THEN 'index'
                             ELSE 'relation' END, tab
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'shardid.convert_table() converts plain tables, not partitioned tables, partitions, tables with inheritance children or other relations.',
                  HINT = CASE WHEN rel.relkind IN ('v', 'm') THEN 'Convert the table that holds the rows and makes the ids.'
                              WHEN rel.relkind = 'p' OR rel.relispartition OR rel.has_children
                              THEN format('The old ids of a partitioned table, a partition or a table with children cannot be recorded as legacy ids: keep the old table apart, and make the table of new rows with DEFAULT shardid.next_id(%s), as shardid.add_shards() makes shard tables.', shard)
                              ELSE 'Pass a plain table, such as shardid.convert_table(''public.orders'', 42).' END;
    END IF;
    IF rel.relpersistence = 't' THEN
        RAISE EXCEPTION 'table % is temporary', tab
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = 'A temporary table holds no shard''s rows.',
                  HINT = 'Convert the permanent table that holds the shard''s rows.';
    END IF;
    IF EXISTS (SELECT FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab) THEN
        RAISE EXCEPTION 'table % is already converted to shardid ids', tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = (SELECT format('Its ids (column %I) below %s are legacy ids; its DEFAULT makes ids of shard %s.',
                                          l.id_column, l.legacy_below, l.shard)
                            FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab),
                  HINT = 'Nothing to do: a table is converted once, and its DEFAULT already makes shardid ids.';
    END IF;
    -- the shard and the schema must be each other's, where either is
    -- registered: the table's ids would otherwise route to another schema
    -- (or none), and a registration of its own would be refused
    registered_schema := (SELECT r.schema_name FROM shardid.shard_registry r
                          WHERE r.shard = convert_table.shard
                            AND to_regnamespace(quote_ident(r.schema_name)) IS NOT NULL);
    IF registered_schema IS DISTINCT FROM rel.nspname AND registered_schema IS NOT NULL THEN
        RAISE EXCEPTION 'shard % is registered to schema "%", not to the schema of table %', shard, registered_schema, tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Routing (shardid.id_schema()) sends the ids of shard %s to schema %I; the ids of table %s would go there too, and schema %I cannot be registered to shard %s as well.',
                                  shard, registered_schema, tab, rel.nspname, shard),
                  HINT = format('Move the table into the shard''s schema first (ALTER TABLE %s SET SCHEMA %I;) and convert it there, or pass %s.',
                                tab, registered_schema,
                                coalesce((SELECT format('shard %s, the shard of schema %I', r.shard, r.schema_name)
                                          FROM shardid.shard_registry r WHERE r.schema_name = rel.nspname),
                                         format('a shard that is registered nowhere (and register it to schema %I)', rel.nspname)));
    END IF;
    registered_shard := (SELECT r.shard FROM shardid.shard_registry r WHERE r.schema_name = rel.nspname);
    IF registered_shard IS DISTINCT FROM shard AND registered_shard IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" of table % holds shard %, not shard %', rel.nspname, tab, registered_shard, shard
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Schema %I is registered to shard %s: a table in it that made ids of shard %s would route them elsewhere (doctor(): "DEFAULT of another shard").',
                                  rel.nspname, registered_shard, shard),
                  HINT = format('Pass shard %s: SELECT * FROM shardid.convert_table(%L, %s%s);', registered_shard, tab::text, registered_shard,
                                CASE WHEN id_column <> 'id' THEN format(', %L', id_column) ELSE '' END);
    END IF;

    SELECT a.attnum, a.atttypid::regtype AS type, a.attidentity, a.attgenerated,
           d.oid AS default_oid,
           EXISTS (SELECT FROM pg_depend dep
                   WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid
                     AND dep.refclassid = 'pg_proc'::regclass
                     AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                          'shardid.next_id(integer)'::regprocedure)) AS makes_ids
    INTO col
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = tab AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of table % does not exist', id_column, tab
            USING ERRCODE = 'undefined_column',
                  HINT = coalesce((SELECT format('Pass the id column: id_column => %L (%s).', a.attname,
                                                 CASE WHEN EXISTS (SELECT FROM pg_index i WHERE i.indrelid = tab AND i.indisprimary
                                                                     AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum)
                                                      THEN 'its primary key' ELSE 'its integer column' END)
                                   FROM pg_attribute a
                                   WHERE a.attrelid = tab AND a.attnum > 0 AND NOT a.attisdropped
                                     AND a.atttypid IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype)
                                   ORDER BY EXISTS (SELECT FROM pg_index i WHERE i.indrelid = tab AND i.indisprimary
                                                      AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum) DESC,
                                            a.attnum
                                   LIMIT 1),
                                  'The table has no smallint, integer or bigint column to convert.');
    END IF;
    IF col.makes_ids THEN
        RAISE EXCEPTION 'column "%" of table % already makes shardid ids', id_column, tab
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Its DEFAULT calls shardid.next_id(); shardid.convert_table() converts a column of a sequence, an identity or ids given by the application.',
                  HINT = 'Nothing to convert: shardid.doctor() says whether its DEFAULT names the shard of its schema.';
    END IF;
    IF col.type NOT IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype) OR col.attgenerated <> '' THEN
        RAISE EXCEPTION 'column "%" of table % cannot be converted', id_column, tab
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('shardid.convert_table() converts smallint, integer and bigint columns that are not generated; this one is %s.',
                                  CASE WHEN col.attgenerated <> '' THEN 'generated' ELSE col.type::text END),
                  HINT = CASE WHEN col.attgenerated <> '' THEN 'Pass the column that holds the ids the table makes, not a generated one.'
                              WHEN (SELECT t.typtype FROM pg_type t WHERE t.oid = col.type) = 'd'
                              THEN format('A column of a domain keeps the domain''s DEFAULT and checks: give it the DEFAULT of shard %s by hand (ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s);) once no old id reaches the ids of now.',
                                          shard, tab, id_column, shard)
                              ELSE 'Pass the integer id column of the table as id_column; ids of another type (uuid, text) stay as they are, in a table of their own.' END;
    END IF;

    -- the sequence: the identity's, or the one the DEFAULT calls nextval() of
    IF col.attidentity <> '' THEN
        seq := pg_get_serial_sequence(tab::text, id_column::text)::regclass;
    ELSE
        SELECT dep.refobjid::regclass INTO seq
        FROM pg_depend dep JOIN pg_class s ON s.oid = dep.refobjid AND s.relkind = 'S'
        WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = col.default_oid
          AND dep.refclassid = 'pg_class'::regclass
        ORDER BY dep.refobjid LIMIT 1;
    END IF;
    IF seq IS NOT NULL THEN
        seq_last := pg_sequence_last_value(seq);
    END IF;

    IF col.attidentity <> '' THEN
        -- the values stay; the identity's sequence goes with it
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tab, id_column);
        seq := NULL;
    END IF;
    IF col.type <> 'bigint'::regtype THEN
        -- record_legacy_ids() widens it, as the owner in a security-restricted operation
        RAISE WARNING 'column "%" of table % is widened from % to bigint', id_column, tab, col.type
            USING DETAIL = 'The table and its indexes are rewritten under an ACCESS EXCLUSIVE lock: every read and write of it waits until this transaction ends.',
                  HINT = 'Columns of other tables that reference it keep their type: widen them too before they receive new ids.';
    END IF;

    legacy_below := shardid.record_legacy_ids(tab, id_column, shard,
                                              coalesce(seq_last, -9223372036854775808));

    is_strict := (SELECT i.mode FROM shardid.info() i) = 'strict';
    IF is_strict THEN
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s)', tab, id_column, shard);
    ELSE
        -- the table's owner's sequence (a member of hers may be converting)
        IF seq IS NULL OR NOT EXISTS (SELECT FROM pg_class s WHERE s.oid = seq AND s.relowner = rel.relowner) THEN
            LOOP
                seq_name := left(rel.relname || '_' || id_column, 50) || CASE WHEN i > 0 THEN '_' || i ELSE '' END || '_seq';
                EXIT WHEN to_regclass(format('%I.%I', rel.nspname, seq_name)) IS NULL;
                i := i + 1;
            END LOOP;
            EXECUTE format('CREATE SEQUENCE %I.%I AS bigint CACHE 1', rel.nspname, seq_name);
            seq := format('%I.%I', rel.nspname, seq_name)::regclass;
            IF rel.relowner <> me.oid THEN
                EXECUTE format('ALTER SEQUENCE %s OWNER TO %I', seq, pg_get_userbyid(rel.relowner));
            END IF;
            EXECUTE format('ALTER SEQUENCE %s OWNED BY %s.%I', seq, tab, id_column);
        ELSE
            -- ids need CACHE 1 (doctor()) and a sequence that does not run out
            IF EXISTS (SELECT FROM pg_sequence s WHERE s.seqrelid = seq
                       AND (s.seqcache <> 1 OR s.seqtypid <> 'bigint'::regtype)) THEN
                EXECUTE format('ALTER SEQUENCE %s AS bigint CACHE 1', seq);
            END IF;
        END IF;
        EXECUTE format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, pg_catalog.nextval(%L::pg_catalog.regclass))',
                       tab, id_column, shard, seq::text);
    END IF;

    -- whether the boundary counts was decided by record_legacy_ids(), by who converts
    IF NOT (SELECT l.trusted FROM shardid.legacy_ids l WHERE l.tab = convert_table.tab) THEN
        RAISE WARNING 'table % was converted by role %, which may not register shards', tab,
                      quote_ident(current_user::text)
            USING DETAIL = 'Routing (shardid.id_schema(), shardid.id_is_legacy()) counts the legacy ids of tables converted by roles that may register shards only: the old ids of this table route by the shard their bits name, also after a later grant.',
                  HINT = format('A superuser who checked its boundary makes it count: UPDATE shardid.legacy_ids SET trusted = true WHERE tab = %L::regclass;', tab::text);
    END IF;
    IF shardid.shard_schema(shard) IS DISTINCT FROM rel.nspname THEN
        RAISE NOTICE 'shard % is not registered to schema "%"', shard, rel.nspname
            USING HINT = format('Routing finds the new ids once it is: SELECT shardid.register_shard(%s, %L);', shard, rel.nspname);
    END IF;
    SELECT pg_get_expr(d.adbin, d.adrelid) INTO id_default
    FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    WHERE d.adrelid = tab AND a.attname = id_column;
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION convert_table(regclass, integer, name) IS
'switch the serial, bigserial, identity or integer id column of a table of the caller to the ids of a shard (integer columns widened to bigint), keeping its ids as legacy ids below the returned boundary (shardid.legacy_ids); new ids sort after them';

CREATE OR REPLACE FUNCTION shardid_internal.check_shard_schema(schema_name name, shard integer)
RETURNS void
AS $$
DECLARE
    owner oid;
BEGIN
    SELECT nsp.nspowner INTO owner FROM pg_namespace nsp WHERE nsp.nspname = schema_name;
    IF owner IS NOT NULL AND NOT shardid_internal.owner_trusted(owner) THEN
        RAISE EXCEPTION 'schema "%" of shard % already exists and belongs to role %', schema_name, shard,
                        quote_ident(pg_get_userbyid(owner)::text)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A logical shard is created in a schema of its own; its owner could change or replace the tables made in it.',
                  HINT = 'Drop or rename that schema, or choose another prefix.';
    END IF;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_shard_schema(name, integer) IS
'raise an error unless a schema about to hold a logical shard is missing or of a trusted owner';

CREATE OR REPLACE FUNCTION shardid_internal.shard_foreign_objects(schemas name[])
RETURNS TABLE (schema_name name, shard integer, object text, owner name, detail text, fix text)
AS $$
WITH ns AS MATERIALIZED (
    SELECT n.oid, n.nspname, n.nspowner FROM pg_namespace n WHERE n.nspname = ANY (schemas)
), objs AS MATERIALIZED (
    SELECT ns.nspname, 'pg_namespace'::regclass::oid AS classid, ns.oid AS objid, ns.nspowner AS owner
    FROM ns
    UNION ALL
    SELECT ns.nspname, d.classid, d.objid,
           CASE d.classid
               WHEN 'pg_class'::regclass THEN (SELECT c.relowner FROM pg_class c
                                               WHERE c.oid = d.objid AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S'))
               WHEN 'pg_proc'::regclass THEN (SELECT p.proowner FROM pg_proc p WHERE p.oid = d.objid)
               WHEN 'pg_type'::regclass THEN (SELECT t.typowner FROM pg_type t
                                              WHERE t.oid = d.objid AND t.typtype <> 'm'
                                                AND NOT (t.typcategory = 'A' AND t.typelem <> 0)
                                                AND NOT EXISTS (SELECT FROM pg_class r WHERE r.oid = t.typrelid AND r.relkind <> 'c'))
               WHEN 'pg_operator'::regclass THEN (SELECT o.oprowner FROM pg_operator o WHERE o.oid = d.objid)
               WHEN 'pg_collation'::regclass THEN (SELECT o.collowner FROM pg_collation o WHERE o.oid = d.objid)
               WHEN 'pg_conversion'::regclass THEN (SELECT o.conowner FROM pg_conversion o WHERE o.oid = d.objid)
               WHEN 'pg_opclass'::regclass THEN (SELECT o.opcowner FROM pg_opclass o WHERE o.oid = d.objid)
               WHEN 'pg_opfamily'::regclass THEN (SELECT o.opfowner FROM pg_opfamily o WHERE o.oid = d.objid)
               WHEN 'pg_statistic_ext'::regclass THEN (SELECT o.stxowner FROM pg_statistic_ext o WHERE o.oid = d.objid)
               WHEN 'pg_ts_config'::regclass THEN (SELECT o.cfgowner FROM pg_ts_config o WHERE o.oid = d.objid)
               WHEN 'pg_ts_dict'::regclass THEN (SELECT o.dictowner FROM pg_ts_dict o WHERE o.oid = d.objid)
           END
    FROM ns
    JOIN pg_depend d ON d.refclassid = 'pg_namespace'::regclass AND d.refobjid = ns.oid
                    AND d.refobjsubid = 0 AND d.deptype = 'n'
), foreign_owners AS MATERIALIZED (
    -- each owner found judged once (for one schema, usually one owner)
    SELECT o.owner
    FROM (SELECT DISTINCT objs.owner FROM objs WHERE objs.owner IS NOT NULL) o
    WHERE NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.oid = o.owner)
      AND NOT has_table_privilege(o.owner, 'shardid.shard_registry'::regclass, 'INSERT')
      AND NOT shardid_internal.owner_trusted(o.owner)
)
SELECT objs.nspname, g.shard, x.object, pg_get_userbyid(objs.owner),
       format('%s%s is in schema %I of shard %s but belongs to role %I, which may not register shards: provisioning does not adopt it, and the code attached to it (a view''s query, rules and triggers, a table''s triggers and index expressions, a function) runs with the privileges of whoever uses it.',
              upper(left(x.object, 1)), substr(x.object, 2), objs.nspname, coalesce(g.shard::text, '(not registered)'),
              pg_get_userbyid(objs.owner)),
       CASE WHEN objs.classid = 'pg_namespace'::regclass
            THEN format('A superuser should give the schema to a role that may register shards (ALTER SCHEMA %I OWNER TO ...;) after checking what role %I made in it.',
                        objs.nspname, pg_get_userbyid(objs.owner))
            ELSE format('A superuser should find out why role %I made it, and drop it, move it out of the shard''s schema, or give it to a role that may register shards (ALTER ... OWNER TO), then run shardid.add_shards() again if the template has a table of its name.',
                        pg_get_userbyid(objs.owner)) END
FROM objs
JOIN foreign_owners f ON f.owner = objs.owner
LEFT JOIN shardid.shard_registry g ON g.schema_name = objs.nspname
CROSS JOIN LATERAL (SELECT pg_describe_object(objs.classid, objs.objid, 0) AS object) x
ORDER BY objs.nspname, objs.classid <> 'pg_namespace'::regclass, x.object
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.shard_foreign_objects(name[]) IS
'private: the objects in the given shard schemas (and the schemas) of roles that may not register shards and whose objects the caller does not trust, with what to do; provisioning warns of them, doctor() reports them';

CREATE OR REPLACE FUNCTION shardid_internal.drift_fix(template_table regclass, shard_table regclass, id_column name)
RETURNS text
AS $$
DECLARE
    owner oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = shard_table);
BEGIN
    IF has_table_privilege(owner, 'shardid.shard_registry'::regclass, 'INSERT')
       OR shardid_internal.owner_trusted(owner) THEN
        RETURN format('To align it with the template: %s (a DROP removes what the table holds there; if the shard is right, change the template instead).',
                      shardid_internal.doctor_align_statements(template_table, shard_table, id_column));
    END IF;
    RETURN format('Table %s belongs to role %I, which may not register shards: have that role align it with the template (shardid_internal.doctor_align_statements(%L, %L, %L) gives the statements), or give the table to a role that may. Run no statement on it as another role: it would run what its owner chose (casts, index expressions).',
                  shard_table, pg_get_userbyid(owner), template_table::text, shard_table::text, id_column);
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.drift_fix(regclass, regclass, name) IS
'private: what to do about a shard''s table that differs from its template (the statements that align it, or whose table it is), as doctor() and provisioning say it';

CREATE OR REPLACE FUNCTION shardid_internal.id_default_drift(shard_table regclass, id_column name, shard integer,
                                 OUT detail text, OUT fix text)
RETURNS record
AS $$
DECLARE
    col record;
    calls_next_id boolean := false;
    passed integer;
    seq regclass;
    expr text;
    owner name := (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = shard_table);
BEGIN
    SELECT a.attidentity, a.attgenerated,
           coalesce(d.adbin, CASE WHEN t.typtype = 'd' THEN t.typdefaultbin END) AS expr,
           CASE WHEN d.adbin IS NOT NULL THEN d.adrelid ELSE 0 END AS expr_table
    INTO col
    FROM pg_attribute a
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = shard_table AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped;
    -- a missing column is drift from the template (table_drift())
    IF NOT FOUND OR col.attgenerated <> '' THEN
        RETURN;
    END IF;
    IF col.expr IS NOT NULL THEN
        SELECT dc.calls_next_id, dc.shard, dc.sequence INTO calls_next_id, passed, seq
        FROM shardid_internal.default_call(col.expr, 'shardid.next_id(integer,bigint)'::regprocedure,
                                  'shardid.next_id(integer)'::regprocedure) dc;
        IF calls_next_id AND passed IS NOT DISTINCT FROM id_default_drift.shard THEN
            RETURN;
        END IF;
        expr := coalesce(shardid_internal.default_text(col.expr, col.expr_table),
                         '(not shown: the table is locked by another session)');
    END IF;
    IF calls_next_id THEN
        detail := format('Column %I of table %s has DEFAULT %s, which makes ids of shard %s, not of shard %s, the shard of its schema.',
                         id_column, shard_table, expr, coalesce(passed::text, '(not a constant)'), shard);
        fix := format('As the owner of the table (role %I): ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s;',
                      owner, shard_table, id_column,
                      CASE WHEN seq IS NULL THEN format('shardid.next_id(%s)', shard)
                           ELSE format('shardid.next_id(%s, nextval(%L::regclass))', shard, seq::text) END);
        RETURN;
    END IF;
    detail := format('Column %I of table %s %s: %s', id_column, shard_table,
                     CASE WHEN col.attidentity <> '' THEN 'is an identity column'
                          WHEN col.expr IS NULL THEN 'has no DEFAULT'
                          ELSE format('has DEFAULT %s', expr) END,
                     CASE WHEN col.attidentity = '' AND col.expr IS NULL
                          THEN format('an INSERT that gives no id fails, and ids given by hand need not carry shard %s.', shard)
                          ELSE format('its ids are not ids of shard %s (a sequence''s numbers decode as shard 0 near the epoch), and shardid.id_schema() finds no schema for them.', shard) END);
    fix := format('As the owner of the table (role %I): SELECT shardid.convert_table(%L, %s%s); it gives the column the DEFAULT of shard %s and keeps the ids the table holds as legacy ids.',
                  owner, shard_table::text, shard,
                  CASE WHEN id_column <> 'id' THEN format(', %L', id_column) ELSE '' END, shard);
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.id_default_drift(regclass, name, integer) IS
'private: what the id column of a shard''s table makes instead of the ids of its shard (no DEFAULT, an identity, another DEFAULT, another shard''s next_id()), with the statement that gives it the shard''s ids; NULL when it makes them';

CREATE OR REPLACE FUNCTION shardid_internal.warn_claimed_elsewhere(shards integer[])
RETURNS void
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN
        -- the tables outside the schemas of registered shards first (a
        -- scan of pg_class), and only their DEFAULTs decoded: decoding
        -- every DEFAULT of the database cost a second a call at 8,192
        -- shards of 5 tables, paid by each add_shards() call
        WITH outside AS MATERIALIZED (
            SELECT c.oid, c.relname, c.relowner, n.nspname
            FROM pg_namespace n
            JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
            WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g WHERE g.schema_name = n.nspname)
              AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema')
        SELECT c.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
               pg_get_userbyid(c.relowner) AS owner, dc.shard,
               (SELECT g.schema_name FROM shardid.shard_registry g WHERE g.shard = dc.shard) AS registered
        FROM outside c
        JOIN pg_attrdef ad ON ad.adrelid = c.oid
        JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
        CROSS JOIN LATERAL shardid_internal.default_call(ad.adbin, 'shardid.next_id(integer,bigint)'::regprocedure,
                                                'shardid.next_id(integer)'::regprocedure) dc
        WHERE EXISTS (SELECT FROM pg_depend dep
                      WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
                        AND dep.refclassid = 'pg_proc'::regclass
                        AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                             'shardid.next_id(integer)'::regprocedure))
          AND dc.shard = ANY (shards)
        ORDER BY 1, 2, 3 LOOP
        RAISE WARNING 'shard % is registered to schema "%", but the DEFAULT of %.%.% makes its ids too',
                      r.shard, r.registered, quote_ident(r.schema_name), quote_ident(r.table_name), quote_ident(r.column_name)
            USING DETAIL = format('The DEFAULT makes ids of shard %s, which is registered to schema %I: its ids can collide with that shard''s and routing sends them there.',
                                  r.shard, r.registered),
                  HINT = format('Ask the owner of %I.%I (%s) to change the DEFAULT to a shard of its own.',
                                r.schema_name, r.table_name, r.owner);
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.warn_claimed_elsewhere(integer[]) IS
'private: a WARNING for each DEFAULT outside the schemas of registered shards that makes ids of one of the given shards (add_shards() asks for the shards it registered)';

CREATE OR REPLACE FUNCTION shardid_internal.check_template(template name, prefix text, digits integer, id_column name)
RETURNS oid[]
AS $$
DECLARE
    tmpl oid;
    tmpl_rels oid[];
    owner_names text;
    suggestion name;
    bad record;
BEGIN
    tmpl := to_regnamespace(quote_ident(template));
    IF tmpl IS NULL THEN
        RAISE EXCEPTION 'template schema "%" does not exist', template
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Pass the schema that holds the tables of a shard as designed once (README, Logical shards): CREATE SCHEMA app_template; CREATE TABLE app_template.users (id bigint PRIMARY KEY, ...);';
    END IF;
    IF template IN ('pg_catalog', 'information_schema', 'shardid') OR template LIKE 'pg\_%' THEN
        RAISE EXCEPTION 'template schema "%" is a system schema', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Design the tables of a logical shard in a schema of their own.';
    END IF;
    -- The template's tables and partitioned tables, found through their
    -- dependency on the schema (pg_depend's index on the referenced object:
    -- pg_class has no index on relnamespace, and a scan of it per call
    -- grew with every shard made).  Every relation but a TOAST table and a
    -- composite type records it; they are not tables of a template.
    tmpl_rels := ARRAY(SELECT c.oid FROM pg_class c
                       WHERE c.oid IN (SELECT d.objid FROM pg_depend d
                                       WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = tmpl
                                         AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass)
                         AND c.relnamespace = tmpl AND c.relkind IN ('r', 'p'));
    IF NOT EXISTS (SELECT FROM pg_class c
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition) THEN
        RAISE EXCEPTION 'template schema "%" has no tables', template
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Provisioning copies the plain tables of the template; partitioned tables, views and functions are not copied.',
                  HINT = format('Create the tables of a shard in it first, such as CREATE TABLE %I.users (id bigint PRIMARY KEY, name text);', template);
    END IF;
    -- Copying a table (LIKE ... INCLUDING ALL) builds its indexes, which
    -- can run functions of the table's owner: the template and its tables
    -- must be the caller's own, a superuser's, or (for a role that is no
    -- superuser) those of a role whose privileges it has.
    SELECT string_agg(DISTINCT quote_ident(pg_get_userbyid(o.owner)::text), ', ') INTO owner_names
    FROM (SELECT nsp.nspowner AS owner FROM pg_namespace nsp WHERE nsp.nspname = template
          UNION ALL
          SELECT c.relowner FROM pg_class c WHERE c.oid = ANY (tmpl_rels)) o
    WHERE NOT shardid_internal.owner_trusted(o.owner);
    IF owner_names IS NOT NULL THEN
        RAISE EXCEPTION 'template schema "%" or its tables belong to role %', template, owner_names
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Copying a template runs expressions of its tables (index expressions and predicates), which would run with your privileges.',
                  HINT = 'Use a template that you own, or run shardid.add_shards() as the owner of the template.';
    END IF;
    -- The id column: the copy of each template table that has it gets the
    -- id DEFAULT.  A name that no table has (a typo) would make shards whose
    -- inserts fail, a column of another type than bigint shards whose ids
    -- do not fit (doctor(): "id column not bigint"), a generated column
    -- takes no DEFAULT: each is refused before anything is made.
    IF NOT EXISTS (SELECT FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
                     AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped) THEN
        -- the bigint primary key most tables of the template have, if any
        SELECT a.attname INTO suggestion
        FROM pg_class c
        JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary AND i.indnkeyatts = 1
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
        WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
          AND a.atttypid = 'bigint'::regtype
        GROUP BY a.attname ORDER BY count(*) DESC, a.attname LIMIT 1;
        RAISE EXCEPTION 'no table of template schema "%" has column "%"', template, id_column
            USING ERRCODE = 'undefined_column',
                  DETAIL = format('Provisioning gives column %I of each table the id DEFAULT: %s would get none, and an insert that gives no id would fail.',
                                  id_column,
                                  (SELECT string_agg(format('%I.%I', template, c.relname), ', ' ORDER BY c.relname)
                                   FROM pg_class c
                                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition)),
                  HINT = CASE WHEN suggestion IS NOT NULL
                              THEN format('Pass the id column of the template''s tables: id_column => %L (their bigint primary key), or leave id_column out for %L.',
                                          suggestion, 'id'::text)
                              ELSE format('Pass id_column => the bigint column of the template''s tables that holds their ids (%L when left out).', 'id'::text) END;
    END IF;
    SELECT c.oid::regclass AS tab, format_type(a.atttypid, a.atttypmod) AS type, a.attgenerated
    INTO bad
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped
    JOIN pg_type ty ON ty.oid = a.atttypid
    WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
      AND (CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END <> 'bigint'::regtype
           OR a.attgenerated <> '')
    ORDER BY c.relname LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'column "%" of template table % is %', id_column, bad.tab,
                        CASE WHEN bad.attgenerated <> '' THEN 'generated' ELSE bad.type || ', not bigint' END
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Provisioning gives the id column of each table a DEFAULT that calls shardid.next_id(), which makes bigint ids: a column of another type does not hold them, a generated column takes no DEFAULT.',
                  HINT = CASE WHEN bad.attgenerated <> ''
                              THEN format('Make it a plain column of the template (ALTER TABLE %s ALTER COLUMN %I DROP EXPRESSION;), or pass id_column => the template''s id column.', bad.tab, id_column)
                              ELSE format('Make it bigint in the template (ALTER TABLE %s ALTER COLUMN %I TYPE bigint;), or pass id_column => the template''s bigint id column.', bad.tab, id_column) END;
    END IF;
    IF digits < 1 OR digits > 4 OR prefix = '' THEN
        RAISE EXCEPTION 'schema names need a non-empty prefix and 1 to 4 digits'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Got prefix %L and %s digits.', prefix, digits),
                  HINT = 'Leave prefix and digits out for schemas shard_0000 to shard_8191, or pass, say, prefix => ''app_'', digits => 4.';
    END IF;
    RETURN tmpl_rels;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_template(name, text, integer, name) IS
'private: raise an error, with what to do, unless a template, its id column, prefix and digits can make shards; returns the template''s tables';

CREATE OR REPLACE FUNCTION shardid_internal.make_local_shards(template name,
                                  shards integer[],
                                  prefix text DEFAULT 'shard_',
                                  digits integer DEFAULT 4,
                                  id_column name DEFAULT 'id',
                                  use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    s integer;
    sch name;
    owner oid;
    registered name;
    t record;
    fk record;
    seq text;
    suffix text;
    n integer;
    existing regclass;
    existing_kind "char";
    drift text;
    id_drift record;
    foreign_object record;
    made_schemas name[] := '{}';
    tmpl oid;
    tmpl_rels oid[];
    made_rels oid[];
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.create_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = format('NULL was passed for %s.',
                                  concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                            CASE WHEN shards IS NULL THEN 'shards' END,
                                            CASE WHEN prefix IS NULL THEN 'prefix' END,
                                            CASE WHEN digits IS NULL THEN 'digits' END,
                                            CASE WHEN id_column IS NULL THEN 'id_column' END)),
                  HINT = 'Name the template schema and the shards, such as CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}'', in_batches => false), and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id''.';
    END IF;
    tmpl_rels := shardid_internal.check_template(template, prefix, digits, id_column);
    tmpl := to_regnamespace(quote_ident(template));
    PERFORM shardid_internal.check_registry_writer('register');

    -- check every shard before creating anything; a shard given twice is
    -- made once
    PERFORM shardid_internal.check_shards(shards);
    shards := ARRAY(SELECT u.s FROM unnest(shards) WITH ORDINALITY u(s, i) GROUP BY u.s ORDER BY min(u.i));
    FOREACH s IN ARRAY shards LOOP
        IF octet_length(prefix) + greatest(digits, length(s::text)) > 63 THEN
            RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
                USING ERRCODE = 'name_too_long',
                      DETAIL = format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', octet_length(prefix)),
                      HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
        END IF;
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF sch = template THEN
            RAISE EXCEPTION 'shard % would be the template schema "%" itself', s, template
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Keep the template in a schema of its own, named as no shard is (app_template, say), or pass another prefix.';
        END IF;
        PERFORM shardid_internal.check_shard_schema(sch, s);
        SELECT r.schema_name INTO registered FROM shardid.shard_registry r WHERE r.shard = s;
        IF registered IS DISTINCT FROM sch AND to_regnamespace(quote_ident(registered)) IS NOT NULL THEN
            RAISE EXCEPTION 'shard % is already registered to schema "%"', s, registered
                USING ERRCODE = 'unique_violation',
                      HINT = format('If schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    registered, s, s);
        END IF;
        SELECT r.shard INTO n FROM shardid.shard_registry r WHERE r.schema_name = sch AND r.shard <> s;
        IF FOUND THEN
            RAISE EXCEPTION 'schema "%" is already registered to shard %', sch, n
                USING ERRCODE = 'unique_violation',
                      DETAIL = format('A schema holds one logical shard; shard %s would be made in it.', s),
                      HINT = format('Pass another prefix or digits, so that shard %s gets a schema of its own; if schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    s, sch, n, n);
        END IF;
    END LOOP;

    -- every missing schema first: a change of pg_namespace makes the
    -- session plan each of its statements again (PostgreSQL resets its plan
    -- cache), so once per call rather than once per shard
    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF to_regnamespace(quote_ident(sch)) IS NULL THEN
            -- fails if another session made it meanwhile
            EXECUTE format('CREATE SCHEMA %I', sch);
            made_schemas := made_schemas || sch;
        END IF;
    END LOOP;

    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        -- checked again where it is used: it may be new since the check
        PERFORM shardid_internal.check_shard_schema(sch, s);
        made_rels := '{}';

        FOR t IN
            SELECT c.oid, c.relname,
                   (SELECT a.attidentity FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = id_column AND NOT a.attisdropped) AS identity
            FROM pg_class c
            WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
            ORDER BY c.relname
        LOOP
            shard := s;
            schema_name := sch;
            table_name := t.relname;
            existing := to_regclass(format('%I.%I', sch, t.relname));
            IF existing IS NOT NULL THEN
                -- adopted only if it is what this would have made: a table
                -- of a trusted owner (a view's INSTEAD OF trigger, a rule or
                -- a trigger of another role would run with the privileges
                -- of whoever writes to it), reported where it has drifted
                SELECT c.relkind, c.relowner INTO existing_kind, owner FROM pg_class c WHERE c.oid = existing;
                IF existing_kind NOT IN ('r', 'p') OR NOT shardid_internal.owner_trusted(owner) THEN
                    RAISE EXCEPTION 'shard % already holds % %, which belongs to role %', s,
                                    CASE existing_kind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                         WHEN 'f' THEN 'foreign table' WHEN 'S' THEN 'sequence'
                                         WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' ELSE 'table' END,
                                    existing, quote_ident(pg_get_userbyid(owner)::text)
                        USING ERRCODE = 'insufficient_privilege',
                              DETAIL = format('Provisioning adopts only tables that it would have made: tables of your own or of a superuser. %s would run the code its owner attached to it with the privileges of whoever writes to it.', existing),
                              HINT = format('Find out who made it; drop or rename it, then run shardid.add_shards() again to make %s from template %I.', existing, template);
                END IF;
                -- what doctor() would report of it, said now, with its fix
                drift := shardid_internal.table_drift(t.oid, existing, id_column);
                IF drift IS NOT NULL THEN
                    RAISE WARNING 'table % of shard % differs from its template %.%: %', existing, s,
                                  quote_ident(template), quote_ident(t.relname), drift
                        USING HINT = 'Provisioning keeps an existing table as it is. ' || shardid_internal.drift_fix(t.oid, existing, id_column);
                END IF;
                IF t.identity IS NOT NULL THEN
                    id_drift := shardid_internal.id_default_drift(existing, id_column, s);
                    IF id_drift.detail IS NOT NULL THEN
                        RAISE WARNING 'column "%" of table % makes no ids of shard %', id_column, existing, s
                            USING DETAIL = id_drift.detail,
                                  HINT = 'Provisioning keeps an existing table as it is. ' || id_drift.fix;
                    END IF;
                END IF;
                action := 'exists';
                RETURN NEXT;
                CONTINUE;
            END IF;
            EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                           sch, t.relname, template, t.relname);
            IF t.identity IS NOT NULL THEN
                IF t.identity <> '' THEN
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                   sch, t.relname, id_column);
                END IF;
                -- the id form, chosen (and said) when the first table is made
                IF use_sequence IS NULL THEN
                    use_sequence := shardid_internal.default_uses_sequence();
                END IF;
                IF use_sequence THEN
                    -- <table>_<column>_seq cut to 63 bytes on a character
                    -- boundary, numbered (_seq1, _seq2, ...) while that
                    -- name is taken or is the name of a template table
                    n := 0;
                    LOOP
                        suffix := '_seq' || CASE WHEN n > 0 THEN n::text ELSE '' END;
                        seq := t.relname || '_' || id_column;
                        WHILE octet_length(seq) + octet_length(suffix) > 63 LOOP
                            seq := left(seq, -1);
                        END LOOP;
                        seq := seq || suffix;
                        EXIT WHEN to_regclass(format('%I.%I', sch, seq)) IS NULL
                              AND NOT EXISTS (SELECT FROM pg_class c
                                              WHERE c.relnamespace = tmpl
                                                AND c.relkind = 'r' AND c.relname = seq);
                        n := n + 1;
                    END LOOP;
                    EXECUTE format('CREATE SEQUENCE %I.%I CACHE 1 OWNED BY %I.%I.%I',
                                   sch, seq, sch, t.relname, id_column);
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, nextval(%L::regclass))',
                                   sch, t.relname, id_column, s, format('%I.%I', sch, seq));
                ELSE
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s)',
                                   sch, t.relname, id_column, s);
                END IF;
                action := 'created';
            ELSE
                action := format('created, no %I column: no id DEFAULT', id_column);
            END IF;
            made_rels := made_rels || t.oid;
            RETURN NEXT;
        END LOOP;

        -- foreign keys between tables of the template join the shard's own tables
        FOR fk IN
            SELECT c.relname, con.conname, pg_get_constraintdef(con.oid) AS def
            FROM pg_constraint con
            JOIN pg_class c ON c.oid = con.conrelid
            WHERE con.conrelid = ANY (made_rels) AND con.contype = 'f'
            ORDER BY c.relname, con.conname
        LOOP
            EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', sch, fk.relname, fk.conname,
                           replace(fk.def, 'REFERENCES ' || quote_ident(template) || '.',
                                   'REFERENCES ' || quote_ident(sch) || '.'));
        END LOOP;

        PERFORM shardid.register_shard(s, sch);

        -- an existing schema adopted: another role's objects in it, which
        -- doctor() reports, said now
        IF NOT sch = ANY (made_schemas) THEN
            FOR foreign_object IN SELECT * FROM shardid_internal.shard_foreign_objects(ARRAY[sch]) LOOP
                RAISE WARNING 'schema % of shard % holds %, which belongs to role %', quote_ident(sch), s,
                              foreign_object.object, quote_ident(foreign_object.owner::text)
                    USING DETAIL = foreign_object.detail,
                          HINT = foreign_object.fix;
            END LOOP;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;


COMMENT ON FUNCTION shardid_internal.make_local_shards(name, integer[], text, integer, name, boolean) IS
'private: create and register a schema per shard with every table of the template and the id DEFAULT naming that shard (next_id(shard) where strict mode holds, else next_id(shard, nextval(...)) with a CACHE 1 sequence per table; use_sequence chooses), never distributed by Citus; existing tables are skipped';

CREATE OR REPLACE FUNCTION shardid_internal.make_shards(template name,
                            shards integer[],
                            distribute boolean,
                            prefix text,
                            digits integer,
                            id_column name,
                            use_sequence boolean)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    g record;
BEGIN
    IF NOT shardid_internal.shards_distributed(distribute) THEN
        -- distribute => false where Citus's schema-based sharding is on:
        -- plain schemas, made with it off for the transaction (Citus would
        -- make each new schema a tenant schema and leave its tables local)
        IF distribute IS NOT DISTINCT FROM false AND shardid_internal.shards_distributed(NULL) THEN
            PERFORM pg_catalog.set_config('citus.enable_schema_based_sharding', 'off', true);
            RETURN QUERY SELECT * FROM shardid_internal.make_local_shards(template, shards, prefix, digits,
                                                                id_column, use_sequence);
            PERFORM pg_catalog.set_config('citus.enable_schema_based_sharding', 'on', true);
            RETURN;
        END IF;
        RETURN QUERY SELECT * FROM shardid_internal.make_local_shards(template, shards, prefix, digits,
                                                            id_column, use_sequence);
        RETURN;
    END IF;
    IF NOT pg_catalog.has_function_privilege('shardid.citus_distribute_shard(name, integer)', 'EXECUTE') THEN
        RAISE EXCEPTION 'permission denied to create Citus tenant schemas'
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'With citus.enable_schema_based_sharding on, provisioning makes each shard a Citus tenant schema through shardid.citus_distribute_shard(), which only superusers may run.',
                  HINT = 'Run it as a superuser, or make plain schemas that Citus does not distribute: CALL shardid.add_shards(..., distribute => false).';
    END IF;
    -- a table added to an existing tenant schema from here would stay
    -- local (Citus distributes only the tables of a CREATE TABLE statement
    -- of its own), and citus_distribute_shard() would refuse the schema
    SELECT n.nspname AS schema_name, c.relname AS table_name INTO g
    FROM pg_catalog.unnest(shards) s(shard)
    JOIN pg_catalog.pg_namespace n
      ON n.nspname OPERATOR(pg_catalog.=)
         (prefix OPERATOR(pg_catalog.||) pg_catalog.lpad(s.shard::text,
              GREATEST(digits, pg_catalog.length(s.shard::text)), '0'))::name
    JOIN pg_catalog.pg_dist_schema ds ON ds.schemaid OPERATOR(pg_catalog.=) n.oid
    JOIN pg_catalog.pg_class c
      ON c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace(pg_catalog.quote_ident(template))::oid
     AND c.relkind OPERATOR(pg_catalog.=) 'r' AND NOT c.relispartition
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class e
                      WHERE e.relnamespace OPERATOR(pg_catalog.=) n.oid
                        AND e.relname OPERATOR(pg_catalog.=) c.relname)
    ORDER BY 1, 2 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'schema "%" is a Citus tenant schema: provisioning cannot add table "%" to it', g.schema_name, g.table_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Citus distributes only the tables of a CREATE TABLE statement of their own; a table that provisioning made would stay local.',
                  HINT = pg_catalog.format('Run CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL); then SELECT shardid.citus_use_trigger(%L, <shard>);',
                                           g.schema_name, g.table_name, template, g.table_name,
                                           pg_catalog.format('%I.%I', g.schema_name, g.table_name));
    END IF;
    PERFORM pg_catalog.set_config('citus.enable_schema_based_sharding', 'off', true);
    RETURN QUERY SELECT * FROM shardid_internal.make_local_shards(template, shards, prefix, digits,
                                                        id_column, false);
    PERFORM pg_catalog.set_config('citus.enable_schema_based_sharding', 'on', true);
    FOR g IN SELECT r.shard, r.schema_name FROM shardid.shard_registry r
             WHERE r.shard OPERATOR(pg_catalog.=) ANY (shards) ORDER BY r.shard LOOP
        PERFORM shardid.citus_distribute_shard(g.schema_name, g.shard);
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.make_shards(name, integer[], boolean, text, integer, name, boolean) IS
'private: create and register a schema per shard with every table of the template and ids naming that shard (the id DEFAULT of make_local_shards(); distributed as shards_distributed() says, a tenant schema whose ids the set_id() trigger makes); existing tables are skipped';

CREATE OR REPLACE PROCEDURE add_shards(template name,
                            shards integer[] DEFAULT NULL,
                            first_shard integer DEFAULT NULL,
                            last_shard integer DEFAULT NULL,
                            distribute boolean DEFAULT NULL,
                            in_batches boolean DEFAULT true,
                            prefix text DEFAULT 'shard_',
                            digits integer DEFAULT 4,
                            id_column name DEFAULT 'id',
                            use_sequence boolean DEFAULT NULL,
                            INOUT tables_created integer DEFAULT NULL,
                            INOUT tables_existing integer DEFAULT NULL)
AS $$
DECLARE
    r record;
    batch integer;
    part integer[];
    i integer := 1;
    made integer;
    found_existing integer;
    failed_detail text;
    failed_hint text;
    new_shards integer[];
BEGIN
    IF template IS NULL OR prefix IS NULL OR digits IS NULL OR id_column IS NULL
       OR in_batches IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.add_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = pg_catalog.format('NULL was passed for %s.',
                               pg_catalog.concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                                    CASE WHEN prefix IS NULL THEN 'prefix' END,
                                                    CASE WHEN digits IS NULL THEN 'digits' END,
                                                    CASE WHEN id_column IS NULL THEN 'id_column' END,
                                                    CASE WHEN in_batches IS NULL THEN 'in_batches' END)),
                  HINT = 'Name the template schema, and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id'', in_batches => true.';
    END IF;
    -- a list, or a range (CALL takes no subquery to build an array)
    IF shards IS NOT NULL AND (first_shard IS NOT NULL OR last_shard IS NOT NULL) THEN
        RAISE EXCEPTION 'shardid.add_shards() takes shards or first_shard and last_shard, not both'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
    END IF;
    IF shards IS NULL THEN
        IF first_shard IS NULL OR last_shard IS NULL THEN
            RAISE EXCEPTION 'shardid.add_shards() needs shards, or first_shard and last_shard'
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
        END IF;
        IF first_shard OPERATOR(pg_catalog.>) last_shard THEN
            RAISE EXCEPTION 'first shard % is after last shard %', first_shard, last_shard
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = pg_catalog.format('A range runs upwards, both ends included: first_shard => %s, last_shard => %s.',
                                               last_shard, first_shard);
        END IF;
        -- both ends checked before the list is built (a range to 2^31
        -- would be a list of 2^31 shards)
        PERFORM shardid_internal.check_shards(ARRAY[first_shard, last_shard]);
        shards := ARRAY(SELECT pg_catalog.generate_series(first_shard, last_shard));
    END IF;
    -- a NULL or a shard out of range is refused before anything is made
    PERFORM shardid_internal.check_shards(shards);
    -- distribute => true is refused before anything is made where it
    -- would not distribute
    IF distribute THEN
        PERFORM shardid_internal.shards_distributed(true);
    END IF;
    -- the shards this call registers, whose ids a DEFAULT elsewhere may
    -- make already (said once they are registered)
    new_shards := ARRAY(SELECT u.s FROM pg_catalog.unnest(shards) u(s)
                        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g
                                          WHERE g.shard OPERATOR(pg_catalog.=) u.s));
    -- in the caller's transaction: errors as they come, nothing committed
    IF NOT in_batches THEN
        SELECT pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.<>) 'exists')::pg_catalog.int4,
               pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.=) 'exists')::pg_catalog.int4
        INTO tables_created, tables_existing
        FROM shardid_internal.make_shards(template, shards, distribute, prefix, digits, id_column, use_sequence) c;
        PERFORM shardid_internal.warn_sequence_free(use_sequence);
        IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
            PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
        END IF;
        RETURN;
    END IF;
    -- the template, the names and the right to register, checked before
    -- anything is made (each batch checks them again)
    PERFORM shardid_internal.check_template(template, prefix, digits, id_column);
    IF pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.+)
       GREATEST(digits, pg_catalog.length((SELECT pg_catalog.max(u.s) FROM pg_catalog.unnest(shards) u(s))::pg_catalog.text))
       OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
            USING ERRCODE = 'name_too_long',
                  DETAIL = pg_catalog.format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', pg_catalog.octet_length(prefix)),
                  HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
    END IF;
    PERFORM shardid_internal.check_registry_writer('register');
    -- Batches commit, which a procedure cannot where it was called inside
    -- a transaction block (BEGIN, a migration tool's transaction) or from
    -- a function: refused here, with what to do, before anything is made
    -- (its first COMMIT would fail with "invalid transaction termination").
    IF NOT shardid_internal.can_commit() THEN
        RAISE EXCEPTION 'shardid.add_shards() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each batch of shards, and a procedure called inside a transaction block (BEGIN, a migration tool''s transaction) or from a function cannot commit.',
                  HINT = 'CALL it on its own, outside a transaction block; or, to make every shard in this transaction (a migration''s), CALL shardid.add_shards(..., in_batches => false), which takes about 4 locks per table of each shard (README, Sizing the lock table).';
    END IF;
    -- the id form is chosen (and said) once for every shard of the call
    IF use_sequence IS NULL THEN
        use_sequence := shardid_internal.default_uses_sequence();
    END IF;
    PERFORM shardid_internal.warn_sequence_free(use_sequence);
    tables_created := 0;
    tables_existing := 0;
    -- Shards are made a batch per transaction: a new schema makes the
    -- session plan every statement again (PostgreSQL resets its plan cache
    -- at a change of pg_namespace), once per batch instead of once per
    -- shard.  A batch holds the locks of its new relations until it
    -- commits, about six per table of the template (the table, its
    -- indexes, its TOAST table and index) and one per schema: batches stay
    -- within max_locks_per_transaction, and 64 shards at most.
    batch := pg_catalog.current_setting('max_locks_per_transaction')::pg_catalog.int4
             OPERATOR(pg_catalog./)
             (1 OPERATOR(pg_catalog.+) 6 OPERATOR(pg_catalog.*)
              GREATEST(1, (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_class c
                           WHERE c.relnamespace OPERATOR(pg_catalog.=)
                                 pg_catalog.to_regnamespace(pg_catalog.quote_ident(template))::pg_catalog.oid
                             AND c.relkind OPERATOR(pg_catalog.=) 'r')));
    batch := LEAST(GREATEST(batch, 1), 64);
    WHILE i OPERATOR(pg_catalog.<=) pg_catalog.cardinality(shards) LOOP
        part := shards[i : i OPERATOR(pg_catalog.+) batch OPERATOR(pg_catalog.-) 1];
        made := 0;
        found_existing := 0;
        BEGIN
            FOR r IN SELECT c.action FROM shardid_internal.make_shards(template, part, distribute, prefix, digits,
                                                              id_column, use_sequence) c LOOP
                IF r.action OPERATOR(pg_catalog.=) 'exists' THEN
                    found_existing := found_existing OPERATOR(pg_catalog.+) 1;
                ELSE
                    made := made OPERATOR(pg_catalog.+) 1;
                END IF;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            IF batch OPERATOR(pg_catalog.>) 1 THEN
                -- the batch is undone: the rest goes a shard at a time, so
                -- that a failure names its shard
                batch := 1;
                CONTINUE;
            END IF;
            -- a failure names its shard, keeps what its error said, and
            -- says that the same CALL resumes
            GET STACKED DIAGNOSTICS failed_detail = PG_EXCEPTION_DETAIL, failed_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION 'provisioning shard % failed: %', part[1], SQLERRM
                USING ERRCODE = SQLSTATE,
                      DETAIL = pg_catalog.concat_ws(' ', NULLIF(failed_detail, ''),
                                   pg_catalog.format('The shards before it in the list are made and committed (%s tables made, %s found existing by this call); shard %s and those after it are not.',
                                                     tables_created, tables_existing, part[1])),
                      HINT = pg_catalog.concat_ws(' ', NULLIF(failed_hint, ''),
                                 CASE WHEN failed_hint OPERATOR(pg_catalog.=) '' THEN 'Fix the cause (for "out of shared memory", raise max_locks_per_transaction: README, Logical shards), then run the same CALL again: it resumes, keeping what exists.'
                                      ELSE 'Then run the same CALL again: it resumes, keeping what exists.' END);
        END;
        COMMIT;
        tables_created := tables_created OPERATOR(pg_catalog.+) made;
        tables_existing := tables_existing OPERATOR(pg_catalog.+) found_existing;
        i := i OPERATOR(pg_catalog.+) pg_catalog.cardinality(part);
    END LOOP;
    IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
        PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
    END IF;
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE add_shards(name, integer[], integer, integer, boolean, boolean, text, integer, name, boolean, integer, integer) IS
'create and register a schema per shard (a list: shards; a range: first_shard, last_shard) with every table of the template and ids naming that shard, a Citus tenant schema where schema-based sharding is on (distribute => false: never; true: refused where it is not); commits after each batch of shards (as many as max_locks_per_transaction allows, 64 at most; a failure names its shard, the same CALL resumes), outside a transaction block; in_batches => false: in the caller''s transaction';

CREATE OR REPLACE FUNCTION create_shards(template name,
                              shards integer[],
                              prefix text DEFAULT 'shard_',
                              digits integer DEFAULT 4,
                              id_column name DEFAULT 'id',
                              use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
SELECT shardid_internal.warn_deprecated('create_shards');
SELECT shardid_internal.warn_sequence_free(use_sequence);
SELECT * FROM shardid_internal.make_shards(template, shards, NULL, prefix, digits, id_column, use_sequence)
$$ LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, in_batches => false), with a row per table: shard, schema, table and what was done';

CREATE OR REPLACE FUNCTION create_local_shards(template name,
                                    shards integer[],
                                    prefix text DEFAULT 'shard_',
                                    digits integer DEFAULT 4,
                                    id_column name DEFAULT 'id',
                                    use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
SELECT shardid_internal.warn_deprecated('create_local_shards');
SELECT shardid_internal.warn_sequence_free(use_sequence);
SELECT * FROM shardid_internal.make_local_shards(template, shards, prefix, digits, id_column, use_sequence)
$$ LANGUAGE sql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_local_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, distribute => false, in_batches => false), with a row per table (which, with Citus schema-based sharding on, makes plain schemas where this makes tenant schemas whose tables stay local)';

CREATE OR REPLACE PROCEDURE provision_shards(template name,
                                  shards integer[],
                                  prefix text DEFAULT 'shard_',
                                  digits integer DEFAULT 4,
                                  id_column name DEFAULT 'id',
                                  use_sequence boolean DEFAULT NULL,
                                  INOUT tables_created integer DEFAULT NULL,
                                  INOUT tables_existing integer DEFAULT NULL)
AS $$
BEGIN
    PERFORM shardid_internal.warn_deprecated('provision_shards(shards)');
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    CALL shardid.add_shards(template, shards, NULL, NULL, NULL, true, prefix, digits, id_column,
                            use_sequence, tables_created, tables_existing);
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE provision_shards(name, integer[], text, integer, name, boolean, integer, integer) IS
'deprecated (1.3): CALL add_shards(template, shards)';

CREATE OR REPLACE PROCEDURE provision_shards(template name,
                                  first_shard integer,
                                  last_shard integer,
                                  prefix text DEFAULT 'shard_',
                                  digits integer DEFAULT 4,
                                  id_column name DEFAULT 'id',
                                  use_sequence boolean DEFAULT NULL,
                                  INOUT tables_created integer DEFAULT NULL,
                                  INOUT tables_existing integer DEFAULT NULL)
AS $$
BEGIN
    PERFORM shardid_internal.warn_deprecated('provision_shards(first_shard, last_shard)');
    IF first_shard IS NULL OR last_shard IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF first_shard OPERATOR(pg_catalog.>) last_shard THEN
        RAISE EXCEPTION 'first shard % is after last shard %', first_shard, last_shard
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF template IS NULL OR prefix IS NULL OR digits IS NULL OR id_column IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    CALL shardid.add_shards(template, NULL, first_shard, last_shard, NULL, true, prefix, digits,
                            id_column, use_sequence, tables_created, tables_existing);
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE provision_shards(name, integer, integer, text, integer, name, boolean, integer, integer) IS
'deprecated (1.3): CALL add_shards(template, first_shard => f, last_shard => l)';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_id_columns(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    moved_phase text;
    moved_peer text;
    n bigint;
    max_shard integer := shardid.max_shard();
    strict_mode boolean := (SELECT i.mode FROM shardid.info() i) = 'strict';
    -- the registry and the sequences of CACHE above 1 in jsonb objects,
    -- looked up by key rather than joined
    registered jsonb := (SELECT jsonb_object_agg(g.shard::text, g.schema_name) FROM shardid.shard_registry g);
    cached jsonb := (SELECT jsonb_object_agg(s.seqrelid::text, s.seqcache) FROM pg_sequence s WHERE s.seqcache > 1);
BEGIN
    FOR r IN SELECT d.schema_name, d.table_name, d.column_name, d.table_oid, d.shard,
                    coalesce(d.default_expr,
                             CASE WHEN d.via_domain IS NULL
                                  THEN (SELECT shardid_internal.default_text(ad.adbin, ad.adrelid)
                                        FROM pg_attrdef ad
                                        JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
                                        WHERE ad.adrelid = d.table_oid AND a.attname = d.column_name)
                                  ELSE (SELECT shardid_internal.default_text(t.typdefaultbin, 0)
                                        FROM pg_type t WHERE t.oid = d.via_domain) END,
                             '(not shown: the table is locked by another session)') AS default_expr,
                    d.sequence_name, d.column_type, d.sequence_free, d.plain_call, d.via_domain, d.id_type,
                    (registered ->> d.shard::text)::name AS registered_schema,
                    (cached ->> d.sequence_name::oid::text)::bigint AS sequence_cache
             FROM unnest(defs) d
             -- only the columns with a problem: every check below is false for
             -- a bigint column whose plain call passes the shard registered to
             -- its schema, with a sequence of CACHE 1 or none in strict mode
             WHERE (d.id_type = 'bigint'::regtype AND d.plain_call AND d.shard BETWEEN 0 AND max_shard
                    AND (registered ->> d.shard::text) = d.schema_name::text
                    AND NOT coalesce(cached ? d.sequence_name::oid::text, false)
                    AND (d.sequence_name IS NOT NULL OR NOT d.sequence_free OR strict_mode)) IS NOT TRUE
             ORDER BY d.schema_name, d.table_name, d.column_name LOOP
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        IF r.id_type <> 'bigint'::regtype THEN
            problem := 'id column not bigint';
            detail := format('The column has type %s; next_id() makes bigint ids, and doctor() reads no column of another type.', r.column_type);
            fix := format('ALTER TABLE %I.%I ALTER COLUMN %I TYPE bigint;', r.schema_name, r.table_name, r.column_name);
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF NOT r.plain_call THEN
            problem := 'DEFAULT not a plain next_id() call';
            detail := format('The DEFAULT %s does more than call shardid.next_id(), so the shard of its ids cannot be known.', r.default_expr);
            fix := format('Make the DEFAULT of %I.%I.%I just shardid.next_id(<shard>, nextval(<sequence>)), as shardid.add_shards() does.',
                          r.schema_name, r.table_name, r.column_name);
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF r.shard IS NULL THEN
            problem := 'shard not a constant';
            detail := format('The DEFAULT %s does not pass a constant shard, so the shard of this table cannot be checked.', r.default_expr);
            fix := 'Write the shard number into the DEFAULT, as shardid.add_shards() does.';
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF r.shard < 0 OR r.shard > max_shard THEN
            problem := 'shard out of range';
            detail := format('The DEFAULT passes shard %s; shards are 0 to %s, so every insert fails.', r.shard, max_shard);
            fix := format('Give %I.%I.%I a DEFAULT that passes a shard between 0 and %s.',
                          r.schema_name, r.table_name, r.column_name, max_shard);
            RETURN NEXT;
            CONTINUE;
        END IF;
        -- what shardid-move left here of a shard it moved away (the
        -- journal is for its writers: others are not told)
        moved_phase := NULL;
        moved_peer := NULL;
        IF r.registered_schema IS NULL AND has_table_privilege('shardid.move_journal', 'SELECT') THEN
            SELECT j.phase, j.peer INTO moved_phase, moved_peer
            FROM shardid.move_journal j
            WHERE j.side = 'source' AND j.shard = r.shard AND j.schema_name = r.schema_name
            ORDER BY j.updated_at DESC LIMIT 1;
        END IF;
        IF r.registered_schema IS NULL AND moved_phase IN ('handing-over', 'moved-away') THEN
            problem := 'copy of a shard moved away';
            detail := format('Schema %I is the frozen copy of shard %s that shardid-move left here when it moved the shard to %s (phase %s); writes to it are refused, and routing must send the shard there.',
                             r.schema_name, r.shard, moved_peer, moved_phase);
            fix := format('Route shard %s to %s. Once nothing reads this copy: shardid-move --shard %s --from <this server> --to <that server> --drop-source%s.',
                          r.shard, moved_peer, r.shard,
                          CASE moved_phase WHEN 'handing-over' THEN ' (first finish the move there: shardid-move --resume)' ELSE '' END);
            RETURN NEXT;
        ELSIF r.registered_schema IS NULL THEN
            problem := 'shard not registered';
            detail := format('The DEFAULT makes ids of shard %s, which is not in shardid.shard_registry, so routing does not find this schema.', r.shard);
            fix := format('If schema %I holds shard %s: SELECT shardid.register_shard(%s, %L);',
                          r.schema_name, r.shard, r.shard, r.schema_name);
            RETURN NEXT;
        ELSIF r.registered_schema <> r.schema_name THEN
            problem := 'DEFAULT of a shard registered elsewhere';
            detail := format('The DEFAULT makes ids of shard %s, which is registered to schema %I: its ids can collide with that shard''s and routing sends them there.',
                             r.shard, r.registered_schema);
            fix := format('Ask the owner of %I.%I (%s) to change the DEFAULT to a shard of its own.',
                          r.schema_name, r.table_name,
                          (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = r.table_oid));
            RETURN NEXT;
        END IF;
        IF r.sequence_name IS NOT NULL THEN
            n := r.sequence_cache;
            IF n > 1 THEN
                problem := 'sequence cache above 1';
                detail := format('Sequence %s has CACHE %s: sessions take values from far-apart ranges, which defeats the 1024-per-millisecond window of session mode.', r.sequence_name, n);
                fix := format('ALTER SEQUENCE %s CACHE 1;', r.sequence_name);
                RETURN NEXT;
            END IF;
        ELSIF r.sequence_free AND NOT strict_mode THEN
            problem := 'sequence-free DEFAULT without strict mode';
            detail := 'shardid.next_id(shard) needs the shared state of strict mode; every insert fails here.';
            fix := 'Add shardid to shared_preload_libraries and restart, or use shardid.next_id(shard, nextval(sequence)).';
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_id_columns(shardid.id_defaults[]) IS
'doctor(): id columns not bigint, DEFAULTs that are not a plain next_id() call or pass no constant shard or one out of range, shards not registered or registered elsewhere, copies of shards moved away, sequences with CACHE above 1, sequence-free DEFAULTs without strict mode';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_unindexed(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT d.schema_name, d.table_name, d.column_name, d.table_oid, a.attnum,
                    shardid_internal.id_column_unreadable(d.table_oid, a.attnum) AS reason
             FROM unnest(defs) d
             JOIN pg_attribute a ON a.attrelid = d.table_oid AND a.attname = d.column_name
             -- other types and DEFAULTs have rows of their own
             WHERE d.plain_call AND d.id_type = 'bigint'::regtype
               AND NOT coalesce(shardid_internal.id_column_readable(d.table_oid, a.attnum, nowait => true), true)
             ORDER BY 1, 2, 3 LOOP
        CONTINUE WHEN r.reason IS NULL;
        problem := 'id column the floor cannot read';
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        detail := format('The floor step (registering the shard, a restore''s index builds, shardid.raise_floor()) reads ids through a btree index on the id column, at any position of its key; %s, so ids restored or moved into this table are not seen, and new ids may sort before them or repeat them. Registering a shard refuses such a column.',
                         r.reason);
        fix := shardid_internal.id_column_fix(r.table_oid, r.attnum);
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_unindexed(shardid.id_defaults[]) IS
'doctor(): id columns that the floor step cannot read (their type, their indexes), with the statement that fixes each';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_foreign_objects()
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM shardid_internal.foreign_objects() LOOP
        problem := 'foreign object in schema shardid';
        object := r.object;
        detail := format('%s (owner %s) is in schema shardid but is not shardid''s own; a call that names shardid may run it.',
                         r.object, coalesce(r.owner::text, '-'));
        fix := 'A superuser should find out who created it, remove it from the extension if it was added (ALTER EXTENSION shardid DROP ...) and drop it.';
        RETURN NEXT;
    END LOOP;
    FOR r IN SELECT * FROM shardid_internal.shard_foreign_objects(ARRAY(SELECT g.schema_name FROM shardid.shard_registry g)) LOOP
        problem := 'foreign object in a shard schema';
        object := r.object;
        detail := r.detail;
        fix := r.fix;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_foreign_objects() IS
'doctor(): objects in schema shardid that are not shardids own, and objects in the schemas of registered shards of roles that may not register shards';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_no_id_default(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    registered jsonb := (SELECT jsonb_object_agg(g.schema_name, g.shard) FROM shardid.shard_registry g);
    with_ids jsonb := (SELECT jsonb_object_agg(d.table_oid::text, true) FROM unnest(defs) d);
    id_column_of jsonb := (SELECT jsonb_object_agg(x.table_name, x.column_name)
                           FROM (SELECT d.table_name, mode() WITHIN GROUP (ORDER BY d.column_name) AS column_name
                                 FROM unnest(defs) d GROUP BY d.table_name) x);
    any_id_column name := coalesce((SELECT mode() WITHIN GROUP (ORDER BY d.column_name) FROM unnest(defs) d), 'id');
    citus_unserved oid[];
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT pg_catalog.array_agg(p.logicalrelid::pg_catalog.oid) FROM pg_catalog.pg_dist_partition p '
                'WHERE p.partmethod OPERATOR(pg_catalog.<>) ''n'' OR p.repmodel OPERATOR(pg_catalog.=) ''t'''
            INTO citus_unserved;
    END IF;
    FOR r IN
        SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
               x.detail, x.fix
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                           AND a.attname = coalesce(id_column_of ->> c.relname::text, any_id_column)::name
        JOIN pg_type t ON t.oid = a.atttypid
        CROSS JOIN LATERAL shardid_internal.id_default_drift(c.oid, a.attname, (registered ->> n.nspname::text)::integer) x
        WHERE registered ? n.nspname::text
          AND c.relkind IN ('r', 'p') AND NOT c.relispartition
          AND NOT coalesce(with_ids ? c.oid::text, false)
          AND CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
              IN ('smallint'::regtype, 'integer'::regtype, 'bigint'::regtype)
          AND NOT c.oid = ANY (coalesce(citus_unserved, '{}'))
          AND NOT EXISTS (SELECT FROM pg_trigger tg
                          WHERE tg.tgrelid = c.oid AND tg.tgfoid = 'shardid.set_id()'::regprocedure)
          AND x.detail IS NOT NULL
        ORDER BY 1, 2 LOOP
        problem := 'id column without a next_id() DEFAULT';
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        detail := r.detail;
        fix := r.fix;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_no_id_default(shardid.id_defaults[]) IS
'doctor(): id columns of tables of registered shards without a next_id() DEFAULT (none, an identity, a sequence''s or another DEFAULT), with the convert_table() call that gives them the shard''s ids';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_drift(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    not_templates jsonb;
    registered jsonb := (SELECT jsonb_object_agg(g.schema_name, g.shard) FROM shardid.shard_registry g);
    id_columns jsonb := (SELECT jsonb_object_agg(d.table_oid::text, d.column_name) FROM unnest(defs) d);
    id_column_of jsonb := (SELECT jsonb_object_agg(x.table_name, x.column_name)
                           FROM (SELECT d.table_name, mode() WITHIN GROUP (ORDER BY d.column_name) AS column_name
                                 FROM unnest(defs) d GROUP BY d.table_name) x);
    any_id_column name := coalesce((SELECT mode() WITHIN GROUP (ORDER BY d.column_name) FROM unnest(defs) d), 'id');
    tables oid[];
    names name[];
    template_of jsonb;
    locked oid[];
BEGIN
    not_templates := (SELECT jsonb_object_agg(x.schema_name, true)
                      FROM (SELECT d.schema_name FROM unnest(defs) d
                            UNION SELECT g.schema_name FROM shardid.shard_registry g
                            UNION VALUES ('shardid'::name), ('information_schema'::name)) x);
    locked := ARRAY(SELECT l.relation FROM pg_locks l
                    WHERE l.locktype = 'relation' AND l.mode = 'AccessExclusiveLock'
                      AND l.pid IS DISTINCT FROM pg_backend_pid()
                      AND l.database = (SELECT db.oid FROM pg_database db WHERE db.datname = current_database()));
    -- the template of each table name: the tables of the few schemas that
    -- are no shard's, found through their dependency on the schema (pg_class
    -- has no index on relnamespace, and read by name it would give every
    -- shard's table of that name), in a jsonb object looked up by key
    -- the tables of registered shards (pg_class read once, joined to the
    -- registry by schema name)
    tables := ARRAY(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE registered ? n.nspname::text
                      AND c.relkind IN ('r', 'p') AND NOT c.relispartition);
    names := ARRAY(SELECT DISTINCT c.relname FROM unnest(tables) t(oid) JOIN pg_class c ON c.oid = t.oid);
    template_of := (SELECT jsonb_object_agg(o.relname, o.template_oid)
                    FROM (SELECT c.relname, min(c.oid) AS template_oid
                          FROM pg_namespace n
                          JOIN pg_depend dep ON dep.refclassid = 'pg_namespace'::regclass AND dep.refobjid = n.oid
                                            AND dep.refobjsubid = 0 AND dep.classid = 'pg_class'::regclass
                          JOIN pg_class c ON c.oid = dep.objid
                          WHERE NOT coalesce(not_templates ? n.nspname::text, false) AND n.nspname !~ '^pg_'
                            AND c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                            AND c.relname = ANY (names)
                            -- of a role that may register shards, or whose
                            -- objects the caller trusts: any role with a
                            -- schema of its own could otherwise hide a drift
                            -- (a second table of the name) or be the template
                            -- whose DEFAULTs and checks the fix adds
                            AND (has_table_privilege(c.relowner, 'shardid.shard_registry'::regclass, 'INSERT')
                                 OR shardid_internal.owner_trusted(c.relowner))
                          GROUP BY c.relname HAVING count(*) = 1) o);
    FOR r IN
        WITH pairs AS MATERIALIZED (
            -- the tables of registered shards, with their id column and
            -- their template
            SELECT c.oid AS table_oid, n.nspname AS schema_name, c.relname AS table_name,
                   coalesce(id_columns ->> c.oid::text, id_column_of ->> c.relname::text, any_id_column)::name AS column_name,
                   (registered ->> n.nspname::text)::integer AS shard,
                   (template_of ->> c.relname::text)::oid AS template_oid
            FROM unnest(tables) t(oid)
            JOIN pg_class c ON c.oid = t.oid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE template_of ? c.relname::text
        ), rels AS (
            SELECT p.table_oid AS rel, p.column_name FROM pairs p
            UNION ALL
            SELECT DISTINCT p.template_oid, p.column_name FROM pairs p
        ), items AS (
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'column', a.attname, a.atttypid, a.atttypmod, a.attnotnull,
                             CASE WHEN a.atthasdef AND a.attname <> rl.column_name THEN
                                 (SELECT regexp_replace(ad.adbin, ' :location -?[0-9]+', '', 'g') FROM pg_attrdef ad
                                  WHERE ad.adrelid = a.attrelid AND ad.adnum = a.attnum) END) AS item
            FROM rels rl JOIN pg_attribute a ON a.attrelid = rl.rel
            WHERE a.attnum > 0 AND NOT a.attisdropped
            UNION ALL
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'constraint', c.contype, c.conkey, c.connoinherit,
                             (SELECT f.relname FROM pg_class f WHERE f.oid = c.confrelid),
                             regexp_replace(c.conbin, ' :location -?[0-9]+', '', 'g'))
            FROM rels rl JOIN pg_constraint c ON c.conrelid = rl.rel
            WHERE c.contype IN ('p', 'u', 'f', 'c', 'x')
            UNION ALL
            SELECT rl.rel, rl.column_name,
                   concat_ws(' ', 'index', i.indisunique, i.indnullsnotdistinct, i.indnkeyatts, i.indkey,
                             i.indclass, i.indoption, i.indcollation, ic.reloptions, ic.relam,
                             regexp_replace(i.indexprs, ' :location -?[0-9]+', '', 'g'),
                             regexp_replace(i.indpred, ' :location -?[0-9]+', '', 'g'))
            FROM rels rl JOIN pg_index i ON i.indrelid = rl.rel
            JOIN pg_class ic ON ic.oid = i.indexrelid
        ), shapes AS MATERIALIZED (
            SELECT x.rel, x.column_name,
                   concat_ws(' ', count(*), sum(hashtext(x.item)), sum(hashtextextended(x.item, 1))) AS shape
            FROM items x GROUP BY x.rel, x.column_name
        ), differing AS MATERIALIZED (
            SELECT p.*, s.shape,
                   p.table_oid = ANY (locked) OR p.template_oid = ANY (locked) AS is_locked
            FROM pairs p
            JOIN shapes s ON s.rel = p.table_oid AND s.column_name = p.column_name
            JOIN shapes ts ON ts.rel = p.template_oid AND ts.column_name = p.column_name
            WHERE s.shape <> ts.shape
        ), drifts AS (
            -- tables of one shape differ from the template alike
            SELECT o.template_oid, o.column_name, o.shape,
                   shardid_internal.table_drift(o.template_oid, o.table_oid, o.column_name) AS drift
            FROM (SELECT DISTINCT ON (d.template_oid, d.column_name, d.shape) d.*
                  FROM differing d WHERE NOT d.is_locked
                  ORDER BY d.template_oid, d.column_name, d.shape, d.table_oid) o
        )
        SELECT d.*, f.drift
        FROM differing d
        LEFT JOIN drifts f ON f.template_oid = d.template_oid AND f.column_name = d.column_name AND f.shape = d.shape
        WHERE d.is_locked OR f.drift IS NOT NULL
        ORDER BY d.schema_name, d.table_name LOOP
        object := format('%I.%I', r.schema_name, r.table_name);
        IF r.is_locked THEN
            problem := 'table not compared with its template';
            detail := format('Table %I.%I or its template %s is locked by another session (ACCESS EXCLUSIVE), and reading its definition would wait.',
                             r.schema_name, r.table_name, r.template_oid::regclass);
            fix := 'Run shardid.doctor() again when the table is not locked.';
        ELSE
            problem := 'table differs from its template';
            detail := format('Table %I.%I of shard %s differs from %s, the only table of that name outside the shard schemas of a role that may register shards (or whose objects you trust), taken as its template: %s.',
                             r.schema_name, r.table_name, r.shard, r.template_oid::regclass, r.drift);
            fix := shardid_internal.drift_fix(r.template_oid, r.table_oid, r.column_name);
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_drift(shardid.id_defaults[]) IS
'doctor(): tables of registered shards that differ from their template (the only table of their name outside the shard schemas), with the statements that would align them';

CREATE OR REPLACE FUNCTION shardid_internal.doctor_rows(defs shardid.id_defaults[])
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    n bigint;
    max_shard integer := shardid.max_shard();
BEGIN
    FOR r IN SELECT * FROM (WITH RECURSIVE claims AS (
                 SELECT d.table_oid, d.column_name, d.shard, 0 AS depth
                 FROM unnest(defs) d
                 WHERE d.plain_call AND d.shard BETWEEN 0 AND max_shard AND d.id_type = 'bigint'::regtype
                 UNION ALL
                 -- tables whose ids the set_id() trigger makes
                 SELECT t.table_oid, t.id_column, t.shard, 0
                 FROM shardid.citus_tenants t
                 WHERE t.shard BETWEEN 0 AND max_shard
                 UNION ALL
                 SELECT i.inhrelid, c.column_name, c.shard, c.depth + 1
                 FROM claims c JOIN pg_inherits i ON i.inhparent = c.table_oid
                 WHERE c.depth < 100)
             SELECT DISTINCT ON (c.table_oid, c.column_name)
                    (SELECT n.nspname FROM pg_namespace n WHERE n.oid = t.relnamespace) AS schema_name,
                    t.relname AS table_name, c.column_name, c.table_oid, c.shard
             FROM claims c
             JOIN pg_class t ON t.oid = c.table_oid
             WHERE t.relkind <> 'p'
             ORDER BY c.table_oid, c.column_name, c.depth) leaves
             ORDER BY leaves.schema_name, leaves.table_name, leaves.column_name LOOP
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        -- Count in a subtransaction that is rolled back on purpose, the
        -- count riding out in the error: a rolled-back subtransaction
        -- releases its table lock, so thousands of shard tables do not
        -- fill the lock table.
        BEGIN
            n := shardid_internal.rows_of_other_shards(r.table_oid::regclass, r.column_name, r.shard::integer);
            RAISE EXCEPTION USING ERRCODE = 'SIDCN', MESSAGE = n::text;
        EXCEPTION
            WHEN SQLSTATE 'SIDCN' THEN
                n := SQLERRM::bigint;
            WHEN OTHERS THEN
                problem := 'rows not checked';
                detail := format('The table was not read: %s.', SQLERRM);
                fix := 'Run shardid.doctor() as a role that may read every shard table and that row-level security does not apply to, when the table is not locked.';
                RETURN NEXT;
                CONTINUE;
        END;
        IF n > 0 THEN
            problem := 'rows of another shard';
            detail := format('Rows with ids of another shard than %s, the shard of this table: %s.', r.shard, n);
            fix := format('Find them with SELECT * FROM %I.%I WHERE shardid.id_shard(%I) <> %s; and move them to the schema of their shard.',
                          r.schema_name, r.table_name, r.column_name, r.shard);
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET row_security = off;

COMMENT ON FUNCTION shardid_internal.doctor_rows(shardid.id_defaults[]) IS
'doctor(): rows whose id carries another shard than their tables DEFAULT or set_id() trigger, and tables that could not be read';

-- a shardid setting of the configuration files that PostgreSQL did not
-- apply (a value out of range is a WARNING in the server's log only, and
-- the setting keeps its default); pg_file_settings is for superusers and
-- pg_read_all_settings
CREATE FUNCTION shardid_internal.doctor_settings()
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
BEGIN
    IF NOT pg_catalog.has_function_privilege('pg_catalog.pg_show_all_file_settings()', 'EXECUTE') THEN
        RETURN;
    END IF;
    FOR r IN SELECT f.name, f.setting, f.sourcefile, f.sourceline, f.error, s.min_val, s.max_val, s.unit,
                    s.context, pg_catalog.current_setting(f.name, true) AS in_force
             FROM pg_catalog.pg_file_settings f
             LEFT JOIN pg_catalog.pg_settings s ON s.name OPERATOR(pg_catalog.=) f.name
             WHERE f.name LIKE 'shardid.%' AND f.error IS NOT NULL
             ORDER BY f.name, f.sourcefile, f.sourceline LOOP
        problem := 'setting not applied';
        object := r.name;
        detail := format('%s line %s sets %s = %L, which PostgreSQL did not apply (%s); the value in force is %s.%s',
                         r.sourcefile, r.sourceline, r.name, r.setting, r.error, coalesce(r.in_force, 'the default'),
                         CASE WHEN r.min_val IS NOT NULL
                              THEN format(' Its valid range is %s to %s%s.', r.min_val, r.max_val, coalesce(' ' || r.unit, ''))
                              ELSE '' END);
        fix := CASE WHEN r.context OPERATOR(pg_catalog.=) 'postmaster'
                    THEN format('Correct the line in %s and restart the server.', r.sourcefile)
                    ELSE format('Correct the line in %s, then SELECT pg_reload_conf();', r.sourcefile) END;
        RETURN NEXT;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.doctor_settings() IS
'doctor(): shardid settings of the configuration files that PostgreSQL did not apply (superusers and pg_read_all_settings)';

CREATE OR REPLACE FUNCTION doctor(scan_rows boolean DEFAULT true)
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    defs shardid.id_defaults[];
BEGIN
    RETURN QUERY SELECT * FROM shardid_internal.doctor_epoch_unset();
    RETURN QUERY SELECT * FROM shardid_internal.doctor_settings();
    -- every check below decodes ids with the epoch in force: under another
    -- epoch than the ids' their rows and fixes would be wrong (a
    -- raise_high_water() to a time decoded under it, say), so that row
    -- stands alone
    RETURN QUERY SELECT * FROM shardid_internal.doctor_ids_epoch();
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM shardid_internal.doctor_sign_bit();
    defs := shardid_internal.doctor_id_defaults();
    RETURN QUERY SELECT * FROM shardid_internal.doctor_id_columns(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_mark();
    RETURN QUERY SELECT * FROM shardid_internal.doctor_lock_table();
    IF scan_rows THEN
        RETURN QUERY SELECT * FROM shardid_internal.doctor_stored_ids();
    END IF;
    RETURN QUERY SELECT * FROM shardid_internal.doctor_unindexed(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_domains(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_foreign_objects();
    RETURN QUERY SELECT * FROM shardid_internal.doctor_missing_schemas();
    RETURN QUERY SELECT * FROM shardid_internal.doctor_claimed_shards(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_schema_shards(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_no_id_default(defs);
    RETURN QUERY SELECT * FROM shardid_internal.doctor_drift(defs);
    IF scan_rows THEN
        RETURN QUERY SELECT * FROM shardid_internal.doctor_rows(defs);
    END IF;
    RETURN QUERY SELECT * FROM shardid_internal.doctor_citus();
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET row_security = off;

COMMENT ON FUNCTION doctor(boolean) IS
'one row per problem with the logical shards of this database, each with how to fix it; scan_rows => false skips reading table rows';

-- 1.4: registration's check of id columns reads a list of tables
-- (check_table_id_columns()): provisioning reads the template tables it
-- copies, not its partitioned tables or partitions.
CREATE FUNCTION shardid_internal.check_table_id_columns(tables oid[])
RETURNS void
AS $$
DECLARE
    r record;
BEGIN
    -- (OFFSET 0 keeps each EXISTS a lookup per column: as a join it read
    -- every next_id() DEFAULT of the database at each registration)
    FOR r IN
        SELECT c.oid AS tab, a.attnum, a.attname, NULL::text AS reason
        FROM pg_class c
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE c.oid = ANY (tables) AND c.relkind IN ('r', 'p')
          -- (the DEFAULT first, then its dependencies: a join could read
          -- every dependency on next_id() of the database for each column)
          AND (EXISTS (SELECT FROM pg_attrdef d
                       WHERE d.adrelid = c.oid AND d.adnum = a.attnum
                         AND EXISTS (SELECT FROM pg_depend p
                                     WHERE p.classid = 'pg_attrdef'::regclass AND p.objid = d.oid
                                       AND p.refclassid = 'pg_proc'::regclass
                                       AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                          'shardid.next_id(integer)'::regprocedure)
                                     OFFSET 0)
                       OFFSET 0)
               OR (NOT a.atthasdef
                   AND EXISTS (SELECT FROM pg_type t
                               WHERE t.oid = a.atttypid AND t.typtype = 'd'
                                 AND EXISTS (SELECT FROM pg_depend p
                                             WHERE p.classid = 'pg_type'::regclass AND p.objid = t.oid
                                               AND p.refclassid = 'pg_proc'::regclass
                                               AND p.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                                                  'shardid.next_id(integer)'::regprocedure)
                                             OFFSET 0)
                               OFFSET 0)))
          AND NOT coalesce(shardid_internal.id_column_readable(c.oid, a.attnum), true)
        ORDER BY c.relname, a.attnum
    LOOP
        r.reason := shardid_internal.id_column_unreadable(r.tab, r.attnum);
        CONTINUE WHEN r.reason IS NULL;
        RAISE EXCEPTION 'the ids of column "%" of table % cannot be read: %', r.attname, r.tab::regclass, r.reason
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Registering a shard reads the newest id of each id column of its schema through a btree index on the column (at any position of its key), so that new ids sort after the stored ones; restores raise the floor the same way.',
                  HINT = 'Run ' || shardid_internal.id_column_fix(r.tab, r.attnum) || ' then register the shard again.';
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_table_id_columns(oid[]) IS
'private: refuses tables with an id column that the floor step cannot read, naming the reason and the fix';

-- The check of a schema's tables, found through pg_depend's index (the
-- cost follows the schema, not the database: provisioning registers
-- thousands); PL/pgSQL keeps its plan for the session.
CREATE OR REPLACE FUNCTION shardid_internal.check_id_columns(schema_name name)
RETURNS void
AS $$
BEGIN
    PERFORM shardid_internal.check_table_id_columns(
        ARRAY(SELECT dep.objid FROM pg_depend dep
              WHERE dep.classid = 'pg_class'::regclass AND dep.objsubid = 0
                AND dep.refclassid = 'pg_namespace'::regclass
                AND dep.refobjid = to_regnamespace(quote_ident(check_id_columns.schema_name))));
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_id_columns(name) IS
'private: refuses a schema with an id column that the floor step cannot read, naming the reason and the fix';

-- 1.4: provisioning reads the template's id columns before it makes
-- anything, and registers the schemas it made in one statement, without
-- the search of each schema's dependencies; a call's own checks read no
-- more as the shards grow.
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
    PERFORM shardid_internal.check_registry_writer('register');
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
    PERFORM shardid_internal.check_id_columns(schema_name);
    -- a registration whose schema was dropped gives way
    DELETE FROM shardid.shard_registry r WHERE r.shard = register_shard.shard;
    INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (shard, schema_name);
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION register_shard(integer, name) IS
'record that a schema holds a logical shard in this database, for routing; refused while another existing schema is registered to it';


CREATE OR REPLACE FUNCTION shardid_internal.check_template(template name, prefix text, digits integer, id_column name)
RETURNS oid[]
AS $$
DECLARE
    tmpl oid;
    tmpl_rels oid[];
    owner_names text;
    suggestion name;
    bad record;
BEGIN
    tmpl := to_regnamespace(quote_ident(template));
    IF tmpl IS NULL THEN
        RAISE EXCEPTION 'template schema "%" does not exist', template
            USING ERRCODE = 'invalid_schema_name',
                  HINT = 'Pass the schema that holds the tables of a shard as designed once (README, Logical shards): CREATE SCHEMA app_template; CREATE TABLE app_template.users (id bigint PRIMARY KEY, ...);';
    END IF;
    IF template IN ('pg_catalog', 'information_schema', 'shardid') OR template LIKE 'pg\_%' THEN
        RAISE EXCEPTION 'template schema "%" is a system schema', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Design the tables of a logical shard in a schema of their own.';
    END IF;
    -- The template's tables and partitioned tables, found through their
    -- dependency on the schema (pg_depend's index on the referenced object:
    -- pg_class has no index on relnamespace, and a scan of it per call
    -- grew with every shard made).  Every relation but a TOAST table and a
    -- composite type records it; they are not tables of a template.
    tmpl_rels := ARRAY(SELECT c.oid FROM pg_class c
                       WHERE c.oid IN (SELECT d.objid FROM pg_depend d
                                       WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = tmpl
                                         AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass)
                         AND c.relnamespace = tmpl AND c.relkind IN ('r', 'p'));
    IF NOT EXISTS (SELECT FROM pg_class c
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition) THEN
        RAISE EXCEPTION 'template schema "%" has no tables', template
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Provisioning copies the plain tables of the template; partitioned tables, views and functions are not copied.',
                  HINT = format('Create the tables of a shard in it first, such as CREATE TABLE %I.users (id bigint PRIMARY KEY, name text);', template);
    END IF;
    -- Copying a table (LIKE ... INCLUDING ALL) builds its indexes, which
    -- can run functions of the table's owner: the template and its tables
    -- must be the caller's own, a superuser's, or (for a role that is no
    -- superuser) those of a role whose privileges it has.
    SELECT string_agg(DISTINCT quote_ident(pg_get_userbyid(o.owner)::text), ', ') INTO owner_names
    FROM (SELECT nsp.nspowner AS owner FROM pg_namespace nsp WHERE nsp.nspname = template
          UNION ALL
          SELECT c.relowner FROM pg_class c WHERE c.oid = ANY (tmpl_rels)) o
    WHERE NOT shardid_internal.owner_trusted(o.owner);
    IF owner_names IS NOT NULL THEN
        RAISE EXCEPTION 'template schema "%" or its tables belong to role %', template, owner_names
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Copying a template runs expressions of its tables (index expressions and predicates), which would run with your privileges.',
                  HINT = 'Use a template that you own, or run shardid.add_shards() as the owner of the template.';
    END IF;
    -- The id column: the copy of each template table that has it gets the
    -- id DEFAULT.  A name that no table has (a typo) would make shards whose
    -- inserts fail, a column of another type than bigint shards whose ids
    -- do not fit (doctor(): "id column not bigint"), a generated column
    -- takes no DEFAULT: each is refused before anything is made.
    IF NOT EXISTS (SELECT FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
                     AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped) THEN
        -- the bigint primary key most tables of the template have, if any
        SELECT a.attname INTO suggestion
        FROM pg_class c
        JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary AND i.indnkeyatts = 1
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
        WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
          AND a.atttypid = 'bigint'::regtype
        GROUP BY a.attname ORDER BY count(*) DESC, a.attname LIMIT 1;
        RAISE EXCEPTION 'no table of template schema "%" has column "%"', template, id_column
            USING ERRCODE = 'undefined_column',
                  DETAIL = format('Provisioning gives column %I of each table the id DEFAULT: %s would get none, and an insert that gives no id would fail.',
                                  id_column,
                                  (SELECT string_agg(format('%I.%I', template, c.relname), ', ' ORDER BY c.relname)
                                   FROM pg_class c
                                   WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition)),
                  HINT = CASE WHEN suggestion IS NOT NULL
                              THEN format('Pass the id column of the template''s tables: id_column => %L (their bigint primary key), or leave id_column out for %L.',
                                          suggestion, 'id'::text)
                              ELSE format('Pass id_column => the bigint column of the template''s tables that holds their ids (%L when left out).', 'id'::text) END;
    END IF;
    SELECT c.oid::regclass AS tab, format_type(a.atttypid, a.atttypmod) AS type, a.attgenerated
    INTO bad
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped
    JOIN pg_type ty ON ty.oid = a.atttypid
    WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
      AND (CASE WHEN ty.typtype = 'd' THEN ty.typbasetype ELSE ty.oid END <> 'bigint'::regtype
           OR a.attgenerated <> '')
    ORDER BY c.relname LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'column "%" of template table % is %', id_column, bad.tab,
                        CASE WHEN bad.attgenerated <> '' THEN 'generated' ELSE bad.type || ', not bigint' END
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = 'Provisioning gives the id column of each table a DEFAULT that calls shardid.next_id(), which makes bigint ids: a column of another type does not hold them, a generated column takes no DEFAULT.',
                  HINT = CASE WHEN bad.attgenerated <> ''
                              THEN format('Make it a plain column of the template (ALTER TABLE %s ALTER COLUMN %I DROP EXPRESSION;), or pass id_column => the template''s id column.', bad.tab, id_column)
                              ELSE format('Make it bigint in the template (ALTER TABLE %s ALTER COLUMN %I TYPE bigint;), or pass id_column => the template''s bigint id column.', bad.tab, id_column) END;
    END IF;
    -- Each copy gets the template table's indexes, and registration reads
    -- its id column through one of them: a column it could not read is
    -- refused here, in the template, before anything is made.
    SELECT c.oid::regclass AS tab, a.attnum,
           shardid_internal.id_column_unreadable(c.oid, a.attnum) AS reason
    INTO bad
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition
      AND NOT shardid_internal.id_column_readable(c.oid, a.attnum)
      AND shardid_internal.id_column_unreadable(c.oid, a.attnum) IS NOT NULL
    ORDER BY c.relname LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'the ids of column "%" of template table % cannot be read: %', id_column, bad.tab, bad.reason
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Each shard''s copy of the table gets its indexes, and registering a shard reads the newest id of each id column through a btree index on the column (at any position of its key), so that new ids sort after the stored ones.',
                  HINT = 'Run ' || shardid_internal.id_column_fix(bad.tab, bad.attnum) || ' then provision the shards again.';
    END IF;
    IF digits < 1 OR digits > 4 OR prefix = '' THEN
        RAISE EXCEPTION 'schema names need a non-empty prefix and 1 to 4 digits'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Got prefix %L and %s digits.', prefix, digits),
                  HINT = 'Leave prefix and digits out for schemas shard_0000 to shard_8191, or pass, say, prefix => ''app_'', digits => 4.';
    END IF;
    RETURN tmpl_rels;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.check_template(name, text, integer, name) IS
'private: raise an error, with what to do, unless a template, its id column, prefix and digits can make shards; returns the template''s tables';


CREATE OR REPLACE FUNCTION shardid_internal.make_local_shards(template name,
                                  shards integer[],
                                  prefix text DEFAULT 'shard_',
                                  digits integer DEFAULT 4,
                                  id_column name DEFAULT 'id',
                                  use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    s integer;
    sch name;
    owner oid;
    registered name;
    seq text;
    suffix text;
    n integer;
    existing regclass;
    existing_kind "char";
    drift text;
    id_drift record;
    foreign_object record;
    made_schemas name[] := '{}';
    made_shards integer[] := '{}';
    made_tables regclass[] := '{}';
    known integer[];
    tmpl oid;
    tmpl_rels oid[];
    made_rels oid[];
    tmpl_read boolean := false;
    k integer;
    tab_oids oid[];
    tab_names name[];
    tab_identities "char"[];
    tab_oid oid;
    tab_name name;
    tab_identity "char";
    fk_rels oid[];
    fk_relnames name[];
    fk_connames name[];
    fk_defs text[];
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.create_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = format('NULL was passed for %s.',
                                  concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                            CASE WHEN shards IS NULL THEN 'shards' END,
                                            CASE WHEN prefix IS NULL THEN 'prefix' END,
                                            CASE WHEN digits IS NULL THEN 'digits' END,
                                            CASE WHEN id_column IS NULL THEN 'id_column' END)),
                  HINT = 'Name the template schema and the shards, such as CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}'', in_batches => false), and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id''.';
    END IF;
    tmpl_rels := shardid_internal.check_template(template, prefix, digits, id_column);
    tmpl := to_regnamespace(quote_ident(template));
    PERFORM shardid_internal.check_registry_writer('register');

    -- check every shard before creating anything; a shard given twice is
    -- made once
    PERFORM shardid_internal.check_shards(shards);
    shards := ARRAY(SELECT u.s FROM unnest(shards) WITH ORDINALITY u(s, i) GROUP BY u.s ORDER BY min(u.i));
    -- the shards whose schema exists or that the registry names, in one
    -- query: only they can fail the checks of an existing schema and of
    -- the registry below (asked shard by shard, they cost a fifth of a
    -- millisecond a shard)
    -- (each asked through an index: a join, as the planner likes it for
    -- 64 shards, would read all of pg_namespace and the registry, which
    -- grow with the shards, once a batch)
    known := ARRAY(SELECT u.s FROM unnest(shards) u(s)
                   CROSS JOIN LATERAL (SELECT prefix || lpad(u.s::text, greatest(digits, length(u.s::text)), '0')) n(sch)
                   WHERE to_regnamespace(quote_ident(n.sch)) IS NOT NULL
                      OR (SELECT true FROM shardid.shard_registry r WHERE r.shard = u.s LIMIT 1)
                      OR (SELECT true FROM shardid.shard_registry r WHERE r.schema_name = n.sch LIMIT 1));
    FOREACH s IN ARRAY shards LOOP
        IF octet_length(prefix) + greatest(digits, length(s::text)) > 63 THEN
            RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
                USING ERRCODE = 'name_too_long',
                      DETAIL = format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', octet_length(prefix)),
                      HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
        END IF;
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF sch = template THEN
            RAISE EXCEPTION 'shard % would be the template schema "%" itself', s, template
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Keep the template in a schema of its own, named as no shard is (app_template, say), or pass another prefix.';
        END IF;
        CONTINUE WHEN NOT s = ANY (known);
        PERFORM shardid_internal.check_shard_schema(sch, s);
        SELECT r.schema_name INTO registered FROM shardid.shard_registry r WHERE r.shard = s;
        IF registered IS DISTINCT FROM sch AND to_regnamespace(quote_ident(registered)) IS NOT NULL THEN
            RAISE EXCEPTION 'shard % is already registered to schema "%"', s, registered
                USING ERRCODE = 'unique_violation',
                      HINT = format('If schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    registered, s, s);
        END IF;
        SELECT r.shard INTO n FROM shardid.shard_registry r WHERE r.schema_name = sch AND r.shard <> s;
        IF FOUND THEN
            RAISE EXCEPTION 'schema "%" is already registered to shard %', sch, n
                USING ERRCODE = 'unique_violation',
                      DETAIL = format('A schema holds one logical shard; shard %s would be made in it.', s),
                      HINT = format('Pass another prefix or digits, so that shard %s gets a schema of its own; if schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    s, sch, n, n);
        END IF;
    END LOOP;

    -- every missing schema first: a change of pg_namespace makes the
    -- session plan each of its statements again (PostgreSQL resets its plan
    -- cache), so once per call rather than once per shard
    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF to_regnamespace(quote_ident(sch)) IS NULL THEN
            -- fails if another session made it meanwhile
            EXECUTE format('CREATE SCHEMA %I', sch);
            made_schemas := made_schemas || sch;
            made_shards := made_shards || s;    -- the shard of each, side by side
        END IF;
    END LOOP;

    -- The template's tables and their foreign keys, read once for every
    -- shard of the call (a query per shard was planned again for each: a
    -- millisecond a shard).
    SELECT array_agg(c.oid ORDER BY c.relname), array_agg(c.relname ORDER BY c.relname),
           array_agg(a.attidentity ORDER BY c.relname)
    INTO tab_oids, tab_names, tab_identities
    FROM pg_class c
    LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = id_column AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.oid = ANY (tmpl_rels) AND c.relkind = 'r' AND NOT c.relispartition;
    SELECT array_agg(con.conrelid ORDER BY c.relname, con.conname), array_agg(c.relname ORDER BY c.relname, con.conname),
           array_agg(con.conname ORDER BY c.relname, con.conname),
           array_agg(pg_get_constraintdef(con.oid) ORDER BY c.relname, con.conname)
    INTO fk_rels, fk_relnames, fk_connames, fk_defs
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    WHERE con.conrelid = ANY (tab_oids) AND con.contype = 'f';

    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        -- checked again where it is used: it may be new since the check
        -- (one made above is this call's own)
        IF NOT sch = ANY (made_schemas) THEN
            PERFORM shardid_internal.check_shard_schema(sch, s);
        END IF;
        made_rels := '{}';

        FOR k IN 1 .. coalesce(cardinality(tab_oids), 0) LOOP
            tab_oid := tab_oids[k];
            tab_name := tab_names[k];
            tab_identity := tab_identities[k];
            shard := s;
            schema_name := sch;
            table_name := tab_name;
            existing := to_regclass(format('%I.%I', sch, tab_name));
            IF existing IS NOT NULL THEN
                -- adopted only if it is what this would have made: a table
                -- of a trusted owner (a view's INSTEAD OF trigger, a rule or
                -- a trigger of another role would run with the privileges
                -- of whoever writes to it), reported where it has drifted
                SELECT c.relkind, c.relowner INTO existing_kind, owner FROM pg_class c WHERE c.oid = existing;
                IF existing_kind NOT IN ('r', 'p') OR NOT shardid_internal.owner_trusted(owner) THEN
                    RAISE EXCEPTION 'shard % already holds % %, which belongs to role %', s,
                                    CASE existing_kind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                         WHEN 'f' THEN 'foreign table' WHEN 'S' THEN 'sequence'
                                         WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' ELSE 'table' END,
                                    existing, quote_ident(pg_get_userbyid(owner)::text)
                        USING ERRCODE = 'insufficient_privilege',
                              DETAIL = format('Provisioning adopts only tables that it would have made: tables of your own or of a superuser. %s would run the code its owner attached to it with the privileges of whoever writes to it.', existing),
                              HINT = format('Find out who made it; drop or rename it, then run shardid.add_shards() again to make %s from template %I.', existing, template);
                END IF;
                -- what doctor() would report of it, said now, with its fix
                drift := shardid_internal.table_drift(tab_oid, existing, id_column);
                IF drift IS NOT NULL THEN
                    RAISE WARNING 'table % of shard % differs from its template %.%: %', existing, s,
                                  quote_ident(template), quote_ident(tab_name), drift
                        USING HINT = 'Provisioning keeps an existing table as it is. ' || shardid_internal.drift_fix(tab_oid, existing, id_column);
                END IF;
                IF tab_identity IS NOT NULL THEN
                    id_drift := shardid_internal.id_default_drift(existing, id_column, s);
                    IF id_drift.detail IS NOT NULL THEN
                        RAISE WARNING 'column "%" of table % makes no ids of shard %', id_column, existing, s
                            USING DETAIL = id_drift.detail,
                                  HINT = 'Provisioning keeps an existing table as it is. ' || id_drift.fix;
                    END IF;
                END IF;
                action := 'exists';
                RETURN NEXT;
                CONTINUE;
            END IF;
            EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
                           sch, tab_name, template, tab_name);
            IF tab_identity IS NOT NULL THEN
                IF tab_identity <> '' THEN
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I DROP IDENTITY',
                                   sch, tab_name, id_column);
                END IF;
                -- the id form, chosen (and said) when the first table is made
                IF use_sequence IS NULL THEN
                    use_sequence := shardid_internal.default_uses_sequence();
                END IF;
                IF use_sequence THEN
                    -- <table>_<column>_seq cut to 63 bytes on a character
                    -- boundary, numbered (_seq1, _seq2, ...) while that
                    -- name is taken or is the name of a template table
                    n := 0;
                    LOOP
                        suffix := '_seq' || CASE WHEN n > 0 THEN n::text ELSE '' END;
                        seq := tab_name || '_' || id_column;
                        WHILE octet_length(seq) + octet_length(suffix) > 63 LOOP
                            seq := left(seq, -1);
                        END LOOP;
                        seq := seq || suffix;
                        EXIT WHEN to_regclass(format('%I.%I', sch, seq)) IS NULL
                              AND NOT EXISTS (SELECT FROM pg_class c
                                              WHERE c.relnamespace = tmpl
                                                AND c.relkind = 'r' AND c.relname = seq);
                        n := n + 1;
                    END LOOP;
                    EXECUTE format('CREATE SEQUENCE %I.%I CACHE 1 OWNED BY %I.%I.%I',
                                   sch, seq, sch, tab_name, id_column);
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s, nextval(%L::regclass))',
                                   sch, tab_name, id_column, s, format('%I.%I', sch, seq));
                ELSE
                    EXECUTE format('ALTER TABLE %I.%I ALTER COLUMN %I SET DEFAULT shardid.next_id(%s)',
                                   sch, tab_name, id_column, s);
                END IF;
                -- a copy in a schema made here: its id column is read below
                IF sch = ANY (made_schemas) THEN
                    made_tables := made_tables || format('%I.%I', sch, tab_name)::regclass;
                END IF;
                action := 'created';
            ELSE
                action := format('created, no %I column: no id DEFAULT', id_column);
            END IF;
            made_rels := made_rels || tab_oid;
            RETURN NEXT;
        END LOOP;

        -- foreign keys between tables of the template join the shard's own tables
        FOR k IN 1 .. coalesce(cardinality(fk_rels), 0) LOOP
            CONTINUE WHEN NOT fk_rels[k] = ANY (made_rels);
            EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', sch, fk_relnames[k], fk_connames[k],
                           replace(fk_defs[k], 'REFERENCES ' || quote_ident(template) || '.',
                                   'REFERENCES ' || quote_ident(sch) || '.'));
        END LOOP;

        IF sch = ANY (made_schemas) THEN
            -- A schema made here holds only copies of the template, whose
            -- id columns were read above; other columns with a next_id()
            -- DEFAULT (its own or its domain's) are those of the template
            -- tables it copies (not its partitioned tables or partitions),
            -- copied with their indexes: read in the template once a
            -- batch, whose tables the copies keep locked.  It is
            -- registered with the others below.
            IF NOT tmpl_read THEN
                PERFORM shardid_internal.check_table_id_columns(tab_oids);
                tmpl_read := true;
            END IF;
            CONTINUE;
        END IF;

        -- an existing schema adopted: read whole, registered, and another
        -- role's objects in it, which doctor() reports, said now
        PERFORM shardid.register_shard(s, sch);
        FOR foreign_object IN SELECT * FROM shardid_internal.shard_foreign_objects(ARRAY[sch]) LOOP
            RAISE WARNING 'schema % of shard % holds %, which belongs to role %', quote_ident(sch), s,
                          foreign_object.object, quote_ident(foreign_object.owner::text)
                USING DETAIL = foreign_object.detail,
                      HINT = foreign_object.fix;
        END LOOP;
    END LOOP;

    -- Each copy's id column, in a schema made here, read as registration
    -- reads it and refused the same way where it cannot be (the
    -- template's was read by check_template(), but an index of it may have
    -- been dropped since), in one query for the batch.  The column is the
    -- one that got the DEFAULT, found by its name in the copy: the
    -- template's columns may have been dropped or renamed since they were
    -- read, so its place there says nothing.
    -- Every schema of such a copy is searched, in the order made: the
    -- search of one may refuse nothing (its column no longer has the
    -- DEFAULT), and the next must still be searched.
    FOR sch IN
        SELECT nsp.nspname
        FROM unnest(made_tables) WITH ORDINALITY t(tab, i)
        JOIN pg_class c ON c.oid = t.tab
        JOIN pg_namespace nsp ON nsp.oid = c.relnamespace
        WHERE NOT coalesce(shardid_internal.id_column_readable(t.tab,
                               (SELECT a.attnum FROM pg_attribute a
                                WHERE a.attrelid = t.tab AND a.attname = id_column
                                  AND a.attnum > 0 AND NOT a.attisdropped)), false)
        GROUP BY nsp.nspname ORDER BY min(t.i) LOOP
        PERFORM shardid_internal.check_id_columns(sch);
    END LOOP;

    -- The schemas made here, registered in one statement (a call of
    -- register_shard() each cost a third of a millisecond a shard): what
    -- it checks was checked for every shard above, before anything was
    -- made, and its search of each schema for unreadable id columns was
    -- the reading of the copies and the template above.  A registration
    -- whose schema was dropped gives way; one whose schema exists is kept.
    -- A registration that the checks above refused, made since (by
    -- another session, by an event trigger), is refused by
    -- register_shard() itself, with its words, for the first such shard
    -- in the order given.  A shard registered to the very schema made
    -- again keeps its row, as register_shard() does.
    IF cardinality(made_shards) > 0 THEN
        SELECT u.s, u.sch INTO s, sch
        FROM unnest(made_shards, made_schemas) WITH ORDINALITY u(s, sch, i)
        WHERE (SELECT true FROM shardid.shard_registry r
               WHERE r.shard = u.s AND r.schema_name <> u.sch
                 AND to_regnamespace(quote_ident(r.schema_name)) IS NOT NULL
               LIMIT 1)
           OR (SELECT true FROM shardid.shard_registry r
               WHERE r.schema_name = u.sch AND r.shard <> u.s
               LIMIT 1)
        ORDER BY u.i LIMIT 1;
        IF FOUND THEN
            PERFORM shardid.register_shard(s, sch);
        END IF;
        DELETE FROM shardid.shard_registry r
        WHERE r.shard = ANY (made_shards)
          AND to_regnamespace(quote_ident(r.schema_name)) IS NULL;
        INSERT INTO shardid.shard_registry (shard, schema_name)
        SELECT u.s, u.sch
        FROM unnest(made_shards, made_schemas) WITH ORDINALITY u(s, sch, i)
        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry r WHERE r.shard = u.s AND r.schema_name = u.sch)
        ORDER BY u.i;
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;


COMMENT ON FUNCTION shardid_internal.make_local_shards(name, integer[], text, integer, name, boolean) IS
'private: create and register a schema per shard with every table of the template and the id DEFAULT naming that shard (next_id(shard) where strict mode holds, else next_id(shard, nextval(...)) with a CACHE 1 sequence per table; use_sequence chooses), never distributed by Citus; existing tables are skipped';


CREATE OR REPLACE FUNCTION shardid_internal.warn_claimed_elsewhere(shards integer[])
RETURNS void
AS $$
DECLARE
    r record;
    outside oid[];
BEGIN
    outside := ARRAY(SELECT n.oid FROM pg_namespace n
                     WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g WHERE g.schema_name = n.nspname)
                       AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema');
    FOR r IN
        SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
               pg_get_userbyid(c.relowner) AS owner, dc.shard,
               (SELECT g.schema_name FROM shardid.shard_registry g WHERE g.shard = dc.shard) AS registered
        FROM pg_depend d
        JOIN pg_class c ON c.oid = d.objid AND c.relkind IN ('r', 'p')
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attrdef ad ON ad.adrelid = c.oid
        JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
        CROSS JOIN LATERAL shardid_internal.default_call(ad.adbin, 'shardid.next_id(integer,bigint)'::regprocedure,
                                                'shardid.next_id(integer)'::regprocedure) dc
        WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = ANY (outside)
          AND d.refobjsubid = 0 AND d.classid = 'pg_class'::regclass
          -- a DEFAULT that calls next_id(), asked of each DEFAULT found
          -- (a join to next_id()'s dependents would read them all)
          AND (SELECT true FROM pg_depend dep
               WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = ad.oid
                 AND dep.refclassid = 'pg_proc'::regclass
                 AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                      'shardid.next_id(integer)'::regprocedure)
               LIMIT 1)
          AND dc.shard = ANY (shards)
        ORDER BY 1, 2, 3 LOOP
        RAISE WARNING 'shard % is registered to schema "%", but the DEFAULT of %.%.% makes its ids too',
                      r.shard, r.registered, quote_ident(r.schema_name), quote_ident(r.table_name), quote_ident(r.column_name)
            USING DETAIL = format('The DEFAULT makes ids of shard %s, which is registered to schema %I: its ids can collide with that shard''s and routing sends them there.',
                                  r.shard, r.registered),
                  HINT = format('Ask the owner of %I.%I (%s) to change the DEFAULT to a shard of its own.',
                                r.schema_name, r.table_name, r.owner);
    END LOOP;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid_internal.warn_claimed_elsewhere(integer[]) IS
'private: a WARNING for each DEFAULT outside the schemas of registered shards that makes ids of one of the given shards (add_shards() asks for the shards it registered)';


CREATE OR REPLACE FUNCTION create_shards(template name,
                              shards integer[],
                              prefix text DEFAULT 'shard_',
                              digits integer DEFAULT 4,
                              id_column name DEFAULT 'id',
                              use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    new_shards integer[];
BEGIN
    PERFORM shardid_internal.warn_deprecated('create_shards');
    PERFORM shardid_internal.warn_sequence_free(use_sequence);
    -- the shards this call registers, whose ids a DEFAULT elsewhere may
    -- make already (said once they are registered, as add_shards() says it)
    new_shards := ARRAY(SELECT u.s FROM unnest(create_shards.shards) u(s)
                        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g WHERE g.shard = u.s));
    RETURN QUERY SELECT * FROM shardid_internal.make_shards(template, shards, NULL, prefix, digits, id_column, use_sequence);
    IF cardinality(new_shards) > 0 THEN
        PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, in_batches => false), with a row per table: shard, schema, table and what was done';


CREATE OR REPLACE FUNCTION create_local_shards(template name,
                                    shards integer[],
                                    prefix text DEFAULT 'shard_',
                                    digits integer DEFAULT 4,
                                    id_column name DEFAULT 'id',
                                    use_sequence boolean DEFAULT NULL)
RETURNS TABLE (shard integer, schema_name name, table_name name, action text)
AS $$
DECLARE
    new_shards integer[];
BEGIN
    PERFORM shardid_internal.warn_deprecated('create_local_shards');
    PERFORM shardid_internal.warn_sequence_free(use_sequence);
    -- the shards this call registers, whose ids a DEFAULT elsewhere may
    -- make already (said once they are registered, as add_shards() says it)
    new_shards := ARRAY(SELECT u.s FROM unnest(create_local_shards.shards) u(s)
                        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g WHERE g.shard = u.s));
    RETURN QUERY SELECT * FROM shardid_internal.make_local_shards(template, shards, prefix, digits, id_column, use_sequence);
    IF cardinality(new_shards) > 0 THEN
        PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_local_shards(name, integer[], text, integer, name, boolean) IS
'deprecated (1.3): CALL add_shards(template, shards, distribute => false, in_batches => false), with a row per table (which, with Citus schema-based sharding on, makes plain schemas where this makes tenant schemas whose tables stay local)';


CREATE OR REPLACE PROCEDURE add_shards(template name,
                            shards integer[] DEFAULT NULL,
                            first_shard integer DEFAULT NULL,
                            last_shard integer DEFAULT NULL,
                            distribute boolean DEFAULT NULL,
                            in_batches boolean DEFAULT true,
                            prefix text DEFAULT 'shard_',
                            digits integer DEFAULT 4,
                            id_column name DEFAULT 'id',
                            use_sequence boolean DEFAULT NULL,
                            INOUT tables_created integer DEFAULT NULL,
                            INOUT tables_existing integer DEFAULT NULL)
AS $$
DECLARE
    r record;
    batch integer;
    part integer[];
    i integer := 1;
    made integer;
    found_existing integer;
    failed_detail text;
    failed_hint text;
    new_shards integer[];
    tmpl_rels oid[];
BEGIN
    IF template IS NULL OR prefix IS NULL OR digits IS NULL OR id_column IS NULL
       OR in_batches IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.add_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = pg_catalog.format('NULL was passed for %s.',
                               pg_catalog.concat_ws(', ', CASE WHEN template IS NULL THEN 'template' END,
                                                    CASE WHEN prefix IS NULL THEN 'prefix' END,
                                                    CASE WHEN digits IS NULL THEN 'digits' END,
                                                    CASE WHEN id_column IS NULL THEN 'id_column' END,
                                                    CASE WHEN in_batches IS NULL THEN 'in_batches' END)),
                  HINT = 'Name the template schema, and leave out what takes its default: prefix => ''shard_'', digits => 4, id_column => ''id'', in_batches => true.';
    END IF;
    -- a list, or a range (CALL takes no subquery to build an array)
    IF shards IS NOT NULL AND (first_shard IS NOT NULL OR last_shard IS NOT NULL) THEN
        RAISE EXCEPTION 'shardid.add_shards() takes shards or first_shard and last_shard, not both'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
    END IF;
    IF shards IS NULL THEN
        IF first_shard IS NULL OR last_shard IS NULL THEN
            RAISE EXCEPTION 'shardid.add_shards() needs shards, or first_shard and last_shard'
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'A list: CALL shardid.add_shards(''app_template'', ''{0, 3, 6, 9}''); a range: CALL shardid.add_shards(''app_template'', first_shard => 0, last_shard => 1999);';
        END IF;
        IF first_shard OPERATOR(pg_catalog.>) last_shard THEN
            RAISE EXCEPTION 'first shard % is after last shard %', first_shard, last_shard
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = pg_catalog.format('A range runs upwards, both ends included: first_shard => %s, last_shard => %s.',
                                               last_shard, first_shard);
        END IF;
        -- both ends checked before the list is built (a range to 2^31
        -- would be a list of 2^31 shards)
        PERFORM shardid_internal.check_shards(ARRAY[first_shard, last_shard]);
        shards := ARRAY(SELECT pg_catalog.generate_series(first_shard, last_shard));
    END IF;
    -- a NULL or a shard out of range is refused before anything is made
    PERFORM shardid_internal.check_shards(shards);
    -- distribute => true is refused before anything is made where it
    -- would not distribute
    IF distribute THEN
        PERFORM shardid_internal.shards_distributed(true);
    END IF;
    -- the shards this call registers, whose ids a DEFAULT elsewhere may
    -- make already (said once they are registered)
    new_shards := ARRAY(SELECT u.s FROM pg_catalog.unnest(shards) u(s)
                        WHERE NOT EXISTS (SELECT FROM shardid.shard_registry g
                                          WHERE g.shard OPERATOR(pg_catalog.=) u.s));
    -- in the caller's transaction: errors as they come, nothing committed
    IF NOT in_batches THEN
        SELECT pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.<>) 'exists')::pg_catalog.int4,
               pg_catalog.count(*) FILTER (WHERE c.action OPERATOR(pg_catalog.=) 'exists')::pg_catalog.int4
        INTO tables_created, tables_existing
        FROM shardid_internal.make_shards(template, shards, distribute, prefix, digits, id_column, use_sequence) c;
        PERFORM shardid_internal.warn_sequence_free(use_sequence);
        IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
            PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
        END IF;
        RETURN;
    END IF;
    -- the template, the names and the right to register, checked before
    -- anything is made (each batch checks them again)
    tmpl_rels := shardid_internal.check_template(template, prefix, digits, id_column);
    IF pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.+)
       GREATEST(digits, pg_catalog.length((SELECT pg_catalog.max(u.s) FROM pg_catalog.unnest(shards) u(s))::pg_catalog.text))
       OPERATOR(pg_catalog.>) 63 THEN
        RAISE EXCEPTION 'schema names of prefix "%" would be longer than 63 bytes', prefix
            USING ERRCODE = 'name_too_long',
                  DETAIL = pg_catalog.format('The prefix takes %s bytes, and PostgreSQL cuts longer names to 63 bytes.', pg_catalog.octet_length(prefix)),
                  HINT = 'Pass a shorter prefix: 59 bytes at most, with 4 digits.';
    END IF;
    PERFORM shardid_internal.check_registry_writer('register');
    -- Batches commit, which a procedure cannot where it was called inside
    -- a transaction block (BEGIN, a migration tool's transaction) or from
    -- a function: refused here, with what to do, before anything is made
    -- (its first COMMIT would fail with "invalid transaction termination").
    IF NOT shardid_internal.can_commit() THEN
        RAISE EXCEPTION 'shardid.add_shards() cannot run inside a transaction block'
            USING ERRCODE = 'active_sql_transaction',
                  DETAIL = 'It commits after each batch of shards, and a procedure called inside a transaction block (BEGIN, a migration tool''s transaction) or from a function cannot commit.',
                  HINT = 'CALL it on its own, outside a transaction block; or, to make every shard in this transaction (a migration''s), CALL shardid.add_shards(..., in_batches => false), which takes about 4 locks per table of each shard (README, Sizing the lock table).';
    END IF;
    -- the id form is chosen (and said) once for every shard of the call
    IF use_sequence IS NULL THEN
        use_sequence := shardid_internal.default_uses_sequence();
    END IF;
    PERFORM shardid_internal.warn_sequence_free(use_sequence);
    tables_created := 0;
    tables_existing := 0;
    -- Shards are made a batch per transaction: a new schema makes the
    -- session plan every statement again (PostgreSQL resets its plan cache
    -- at a change of pg_namespace), once per batch instead of once per
    -- shard.  A batch holds the locks of its new relations until it
    -- commits, about six per table of the template (the table, its
    -- indexes, its TOAST table and index) and one per schema: batches stay
    -- within max_locks_per_transaction, and 64 shards at most.
    batch := pg_catalog.current_setting('max_locks_per_transaction')::pg_catalog.int4
             OPERATOR(pg_catalog./)
             (1 OPERATOR(pg_catalog.+) 6 OPERATOR(pg_catalog.*)
              GREATEST(1, (SELECT pg_catalog.count(*)::pg_catalog.int4 FROM pg_catalog.pg_class c
                           WHERE c.oid OPERATOR(pg_catalog.=) ANY (tmpl_rels)
                             AND c.relkind OPERATOR(pg_catalog.=) 'r')));
    batch := LEAST(GREATEST(batch, 1), 64);
    WHILE i OPERATOR(pg_catalog.<=) pg_catalog.cardinality(shards) LOOP
        part := shards[i : i OPERATOR(pg_catalog.+) batch OPERATOR(pg_catalog.-) 1];
        made := 0;
        found_existing := 0;
        BEGIN
            FOR r IN SELECT c.action FROM shardid_internal.make_shards(template, part, distribute, prefix, digits,
                                                              id_column, use_sequence) c LOOP
                IF r.action OPERATOR(pg_catalog.=) 'exists' THEN
                    found_existing := found_existing OPERATOR(pg_catalog.+) 1;
                ELSE
                    made := made OPERATOR(pg_catalog.+) 1;
                END IF;
            END LOOP;
        EXCEPTION WHEN OTHERS THEN
            IF batch OPERATOR(pg_catalog.>) 1 THEN
                -- the batch is undone: the rest goes a shard at a time, so
                -- that a failure names its shard
                batch := 1;
                CONTINUE;
            END IF;
            -- a failure names its shard, keeps what its error said, and
            -- says that the same CALL resumes
            GET STACKED DIAGNOSTICS failed_detail = PG_EXCEPTION_DETAIL, failed_hint = PG_EXCEPTION_HINT;
            RAISE EXCEPTION 'provisioning shard % failed: %', part[1], SQLERRM
                USING ERRCODE = SQLSTATE,
                      DETAIL = pg_catalog.concat_ws(' ', NULLIF(failed_detail, ''),
                                   pg_catalog.format('The shards before it in the list are made and committed (%s tables made, %s found existing by this call); shard %s and those after it are not.',
                                                     tables_created, tables_existing, part[1])),
                      HINT = pg_catalog.concat_ws(' ', NULLIF(failed_hint, ''),
                                 CASE WHEN failed_hint OPERATOR(pg_catalog.=) '' THEN 'Fix the cause (for "out of shared memory", raise max_locks_per_transaction: README, Logical shards), then run the same CALL again: it resumes, keeping what exists.'
                                      ELSE 'Then run the same CALL again: it resumes, keeping what exists.' END);
        END;
        COMMIT;
        tables_created := tables_created OPERATOR(pg_catalog.+) made;
        tables_existing := tables_existing OPERATOR(pg_catalog.+) found_existing;
        i := i OPERATOR(pg_catalog.+) pg_catalog.cardinality(part);
    END LOOP;
    IF pg_catalog.cardinality(new_shards) OPERATOR(pg_catalog.>) 0 THEN
        PERFORM shardid_internal.warn_claimed_elsewhere(new_shards);
    END IF;
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE add_shards(name, integer[], integer, integer, boolean, boolean, text, integer, name, boolean, integer, integer) IS
'create and register a schema per shard (a list: shards; a range: first_shard, last_shard) with every table of the template and ids naming that shard, a Citus tenant schema where schema-based sharding is on (distribute => false: never; true: refused where it is not); commits after each batch of shards (as many as max_locks_per_transaction allows, 64 at most; a failure names its shard, the same CALL resumes), outside a transaction block; in_batches => false: in the caller''s transaction';


-- Default privileges (ALTER DEFAULT PRIVILEGES) of the role running this
-- script applied to the functions it made in schema shardid_internal:
-- section 9 takes back what they granted in schema shardid, this in
-- shardid_internal (every privilege of roles other than the owner; PUBLIC's
-- EXECUTE stays as granted or revoked above).
DO $internal$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT DISTINCT CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind,
               p.oid::pg_catalog.regprocedure::pg_catalog.text AS object, a.grantee
        FROM pg_catalog.pg_proc p
        CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) a
        WHERE p.pronamespace OPERATOR(pg_catalog.=) 'shardid_internal'::pg_catalog.regnamespace::pg_catalog.oid
          AND a.grantee OPERATOR(pg_catalog.<>) p.proowner AND a.grantee OPERATOR(pg_catalog.<>) 0
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s %s FROM %I CASCADE', g.kind, g.object,
                                  pg_catalog.pg_get_userbyid(g.grantee));
    END LOOP;
END
$internal$;

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
