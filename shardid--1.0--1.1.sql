/* shardid--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.1'" to load this file. \quit

-- Release 1.1.  A fresh CREATE EXTENSION runs shardid--1.0.sql and then this
-- script, so a new install and an updated one are the same by construction;
-- sql/upgrade.sql checks it.

-- =====================================================================
-- 1. Schema ownership and privileges
-- =====================================================================

-- CREATE EXTENSION creates schema shardid as the role that runs it, which
-- for a trusted extension may be an ordinary database owner (release 1.0
-- left it so).  That role could create functions in it (shardid.min_id(text),
-- say) that a superuser's call with an untyped literal would resolve to.
-- Section 5, at the end of this script, gives the schema to a superuser and
-- checks it; this section defines the check.

-- Every object in schema shardid that is not shardid's own: anything that
-- is not a member of the extension (or part of a member, like a table's
-- row type), and any member that a role which is no superuser owns (the
-- extension's owner can add its own objects with ALTER EXTENSION ... ADD).
CREATE FUNCTION foreign_objects(OUT object text, OUT owner name)
RETURNS SETOF record
AS $$
WITH RECURSIVE ext AS (
    SELECT e.oid AS extoid, e.extnamespace AS ns FROM pg_extension e WHERE e.extname = 'shardid'
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

COMMENT ON FUNCTION foreign_objects() IS
'objects in schema shardid that are not shardid''s own, or that a role which is no superuser owns; doctor() reports them';

CREATE FUNCTION check_no_foreign_objects()
RETURNS void
AS $$
DECLARE
    found_objects text;
BEGIN
    SELECT string_agg(format('%s (owner %s)', f.object, f.owner), ', ')
    INTO found_objects FROM shardid.foreign_objects() f;
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

-- =====================================================================
-- 2. Shard registry, catalog of id DEFAULTs, routing, provisioning, doctor
-- =====================================================================

-- The largest shard number, from the C constant of the layout: SQL code
-- takes the limit from here.
CREATE FUNCTION max_shard()
RETURNS integer
AS 'MODULE_PATHNAME', 'shardid_max_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION max_shard() IS
'largest shard number of the id layout (8191)';

-- Reads a stored DEFAULT expression tree (pg_attrdef.adbin) without
-- evaluating it: whether it calls one of the given next_id() functions, the
-- one-argument form or not, the shard when it is a constant, and the
-- sequence when the seq argument is nextval() of a constant.
CREATE FUNCTION default_call(expr pg_node_tree,
                             next_id_seq regprocedure,
                             next_id_counter regprocedure,
                             OUT calls_next_id boolean,
                             OUT counter boolean,
                             OUT shard integer,
                             OUT sequence regclass)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_default_call'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION default_call(pg_node_tree, regprocedure, regprocedure) IS
'the next_id() call a stored DEFAULT expression makes, read from its tree: form, constant shard, sequence';

-- Counts the rows of a plain table whose bigint id column holds ids of
-- another shard, with a table scan in C: no query is planned, so no index
-- predicate, index expression or statistics expression of the table's
-- owner is evaluated, and no row-level security policy (a table it applies
-- to is refused), whoever calls it.
CREATE FUNCTION rows_of_other_shards(tab regclass, id_column name, shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_rows_of_other_shards'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION rows_of_other_shards(regclass, name, integer) IS
'rows of a table whose bigint id carries another shard than the given one, read with a plain scan that runs no code of the table''s owner';

-- Every column DEFAULT that calls next_id(), read structurally: the call
-- and its constant arguments come from the expression tree, so no object
-- name can pass for a shard.  Columns 1-7 are those of release 1.0.
CREATE OR REPLACE VIEW id_defaults AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       a.attname AS column_name,
       c.oid AS table_oid,
       dc.shard::bigint AS shard,
       pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default_expr,
       dc.sequence AS sequence_name,
       a.atttypid::regtype AS column_type,
       dc.counter AS sequence_free,
       dc.calls_next_id AS plain_call,
       (SELECT i.inhparent::regclass FROM pg_catalog.pg_inherits i
         WHERE c.relispartition AND i.inhrelid = c.oid) AS partition_of
FROM pg_catalog.pg_attrdef d
JOIN pg_catalog.pg_class c ON c.oid = d.adrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
CROSS JOIN LATERAL shardid.default_call(d.adbin, 'shardid.next_id(integer,bigint)'::regprocedure,
                                        'shardid.next_id(integer)'::regprocedure) dc
WHERE c.relkind IN ('r', 'p')
  AND EXISTS (SELECT FROM pg_catalog.pg_depend dep
              WHERE dep.classid = 'pg_catalog.pg_attrdef'::regclass AND dep.objid = d.oid
                AND dep.refclassid = 'pg_catalog.pg_proc'::regclass
                AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                                     'shardid.next_id(integer)'::regprocedure));

COMMENT ON VIEW id_defaults IS
'every column DEFAULT that calls shardid.next_id(), read from its expression tree: shard and sequence when the DEFAULT is a plain call, column type';

-- The shard registry: which schema holds which logical shard here.
-- Routing (shard_schema(), id_schema(), the shards view) reads only this,
-- so a DEFAULT that some role writes into a table of its own cannot make
-- routing fail or answer differently.  create_shards(), provision_shards()
-- and shardid-move keep it; register_shard() and unregister_shard() do it
-- by hand.  Everyone may read it; superusers, the database owner and the
-- roles they grant INSERT and DELETE on it may change it.  pg_dump includes
-- its rows.
CREATE TABLE shard_registry (
    shard integer PRIMARY KEY
        CONSTRAINT shard_registry_shard_check CHECK (shard >= 0 AND shard <= shardid.max_shard()),
    schema_name name NOT NULL UNIQUE,
    registered_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
    registered_by name NOT NULL DEFAULT CURRENT_USER
);

COMMENT ON TABLE shard_registry IS
'the schema of each logical shard in this database; routing reads only this table';

SELECT pg_catalog.pg_extension_config_dump('shard_registry', '');

GRANT SELECT ON shard_registry TO PUBLIC;

DO $$
DECLARE
    owner_name name;
BEGIN
    SELECT r.rolname INTO owner_name
    FROM pg_catalog.pg_database db JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) db.datdba
    WHERE db.datname OPERATOR(pg_catalog.=) pg_catalog.current_database() AND NOT r.rolsuper;
    IF owner_name IS NOT NULL THEN
        EXECUTE pg_catalog.format('GRANT INSERT, DELETE ON shardid.shard_registry TO %I WITH GRANT OPTION',
                                  owner_name);
    END IF;
END
$$;

-- Shards that this database already has (an update from 1.0).  Only
-- schemas of the roles that may write the registry count (superusers and
-- the database owner), temporary schemas never: among those, each shard
-- claimed by exactly one schema, and each schema claiming exactly one shard,
-- is registered.  Anything else is left to doctor(), which reports it and
-- says how to register it.
WITH trusted AS (
    SELECT d.schema_name, d.shard
    FROM shardid.id_defaults d
    JOIN pg_catalog.pg_namespace n ON n.nspname = d.schema_name
    JOIN pg_catalog.pg_roles o ON o.oid = n.nspowner
    WHERE d.shard BETWEEN 0 AND shardid.max_shard() AND d.column_type = 'bigint'::regtype
      AND n.oid <> pg_catalog.pg_my_temp_schema() AND n.nspname !~ '^pg_(toast_)?temp_'
      AND (o.rolsuper OR o.oid = (SELECT db.datdba FROM pg_catalog.pg_database db
                                   WHERE db.datname = pg_catalog.current_database()))
)
INSERT INTO shard_registry (shard, schema_name)
SELECT min(t.shard)::integer, t.schema_name
FROM trusted t
GROUP BY t.schema_name
HAVING count(DISTINCT t.shard) = 1
   AND (SELECT count(DISTINCT t2.schema_name) FROM trusted t2 WHERE t2.shard = min(t.shard)) = 1;

-- Writing the registry takes INSERT and DELETE on it: superusers and the
-- database owner have them and grant them.  what: 'register' or
-- 'unregister', for the message.
CREATE FUNCTION check_registry_writer(what text)
RETURNS void
AS $$
BEGIN
    IF NOT has_table_privilege('shardid.shard_registry', 'INSERT')
       OR NOT has_table_privilege('shardid.shard_registry', 'DELETE') THEN
        RAISE EXCEPTION 'permission denied to % shards', what
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Routing reads shardid.shard_registry, which superusers, the database owner and the roles they grant INSERT and DELETE on it may change.',
                  HINT = format('A superuser or the database owner can run: GRANT INSERT, DELETE ON shardid.shard_registry TO %I;', current_user);
    END IF;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_registry_writer(text) IS
'raise an error unless the current role may write shardid.shard_registry';

CREATE FUNCTION register_shard(shard integer, schema_name name)
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
    -- a registration whose schema was dropped gives way
    DELETE FROM shardid.shard_registry r WHERE r.shard = register_shard.shard;
    INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (shard, schema_name);
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION register_shard(integer, name) IS
'record that a schema holds a logical shard in this database, for routing; refused while another existing schema is registered to it';

CREATE FUNCTION unregister_shard(shard integer)
RETURNS boolean
AS $$
DECLARE
    n integer;
BEGIN
    PERFORM shardid.check_registry_writer('unregister');
    DELETE FROM shardid.shard_registry r WHERE r.shard = unregister_shard.shard;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n > 0;
END
$$ LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION unregister_shard(integer) IS
'forget where a logical shard lives in this database (its schema and tables stay); true if it was registered';

-- the logical shards present in this database: registered, schema present
CREATE OR REPLACE VIEW shards AS
SELECT r.shard,
       r.schema_name,
       ARRAY(SELECT d.table_name::text FROM shardid.id_defaults d
             WHERE d.schema_name = r.schema_name AND d.shard = r.shard
             ORDER BY d.table_name::text) AS tables
FROM shardid.shard_registry r
WHERE EXISTS (SELECT FROM pg_catalog.pg_namespace n WHERE n.nspname = r.schema_name);

COMMENT ON VIEW shards IS
'logical shards in this database: each registered shard whose schema exists, with the tables whose DEFAULTs pass it';

CREATE OR REPLACE FUNCTION shard_schema(shard integer)
RETURNS name
AS $$
SELECT r.schema_name FROM shardid.shard_registry r
WHERE r.shard = $1
  AND EXISTS (SELECT FROM pg_catalog.pg_namespace n WHERE n.nspname = r.schema_name)
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shard_schema(integer) IS
'schema of a logical shard in this database from the shard registry, NULL if the shard does not live here';

-- Whether objects of role owner may be used by the current role without
-- running code it did not choose: its own, a superuser's, or, for a role
-- that is no superuser, those of a role whose privileges it has (a
-- superuser has every role's, which proves nothing).
CREATE FUNCTION owner_trusted(owner oid)
RETURNS boolean
AS $$
SELECT owner = r.oid OR (SELECT o.rolsuper FROM pg_roles o WHERE o.oid = owner)
       OR (NOT r.rolsuper AND pg_has_role(owner, 'USAGE'))
FROM pg_roles r WHERE r.rolname = current_user
$$ LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION owner_trusted(oid) IS
'whether objects of a role are the current role''s own, a superuser''s, or (for a role that is no superuser) of a role whose privileges it has';

-- An existing schema that would hold shard s must be of a trusted owner:
-- its owner could otherwise change or replace the tables made in it.
CREATE FUNCTION check_shard_schema(schema_name name, shard integer)
RETURNS void
AS $$
DECLARE
    owner oid;
BEGIN
    SELECT nsp.nspowner INTO owner FROM pg_namespace nsp WHERE nsp.nspname = schema_name;
    IF owner IS NOT NULL AND NOT shardid.owner_trusted(owner) THEN
        RAISE EXCEPTION 'schema "%" of shard % already exists and belongs to role %', schema_name, shard,
                        quote_ident(pg_get_userbyid(owner)::text)
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A logical shard is created in a schema of its own; its owner could change or replace the tables made in it.',
                  HINT = 'Drop or rename that schema, or choose another prefix.';
    END IF;
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION check_shard_schema(name, integer) IS
'raise an error unless a schema about to hold a logical shard is missing or of a trusted owner';

-- Create logical shards from a template schema, and register them.
CREATE OR REPLACE FUNCTION create_shards(template name,
                                         shards integer[],
                                         prefix text DEFAULT 'shard_',
                                         digits integer DEFAULT 4,
                                         id_column name DEFAULT 'id',
                                         use_sequence boolean DEFAULT true)
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
    owner_names text;
    n integer;
    made name[];
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL OR use_sequence IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.create_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF to_regnamespace(quote_ident(template)) IS NULL THEN
        RAISE EXCEPTION 'template schema "%" does not exist', template
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    IF template IN ('pg_catalog', 'information_schema', 'shardid') OR template LIKE 'pg\_%' THEN
        RAISE EXCEPTION 'template schema "%" is a system schema', template
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Design the tables of a logical shard in a schema of their own.';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_class c
                   WHERE c.relnamespace = to_regnamespace(quote_ident(template))
                     AND c.relkind = 'r' AND NOT c.relispartition) THEN
        RAISE EXCEPTION 'template schema "%" has no tables', template
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Copying a table (LIKE ... INCLUDING ALL) builds its indexes, which
    -- can run functions of the table's owner: the template and its tables
    -- must be the caller's own, a superuser's, or (for a role that is no
    -- superuser) those of a role whose privileges it has.
    SELECT string_agg(DISTINCT quote_ident(pg_get_userbyid(o.owner)::text), ', ') INTO owner_names
    FROM (SELECT nsp.nspowner AS owner FROM pg_namespace nsp WHERE nsp.nspname = template
          UNION ALL
          SELECT c.relowner FROM pg_class c
          WHERE c.relnamespace = to_regnamespace(quote_ident(template)) AND c.relkind IN ('r', 'p')) o
    WHERE NOT shardid.owner_trusted(o.owner);
    IF owner_names IS NOT NULL THEN
        RAISE EXCEPTION 'template schema "%" or its tables belong to role %', template, owner_names
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Copying a template runs expressions of its tables (index expressions and predicates), which would run with your privileges.',
                  HINT = 'Use a template that you own, or run create_shards() as the owner of the template.';
    END IF;
    IF digits < 1 OR digits > 4 OR prefix = '' THEN
        RAISE EXCEPTION 'schema names need a non-empty prefix and 1 to 4 digits'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Got prefix %L and %s digits.', prefix, digits);
    END IF;
    PERFORM shardid.check_registry_writer('register');

    -- check every shard before creating anything
    FOREACH s IN ARRAY shards LOOP
        IF s IS NULL OR s < 0 OR s > shardid.max_shard() THEN
            RAISE EXCEPTION 'shard % is out of range', coalesce(s::text, 'NULL')
                USING ERRCODE = 'numeric_value_out_of_range',
                      DETAIL = format('A shard must be between 0 and %s (13 bits).', shardid.max_shard());
        END IF;
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF sch = template THEN
            RAISE EXCEPTION 'shard % would be the template schema "%" itself', s, template
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        PERFORM shardid.check_shard_schema(sch, s);
        SELECT r.schema_name INTO registered FROM shardid.shard_registry r WHERE r.shard = s;
        IF registered IS DISTINCT FROM sch AND to_regnamespace(quote_ident(registered)) IS NOT NULL THEN
            RAISE EXCEPTION 'shard % is already registered to schema "%"', s, registered
                USING ERRCODE = 'unique_violation',
                      HINT = format('If schema %I no longer holds shard %s, run SELECT shardid.unregister_shard(%s); first.',
                                    registered, s, s);
        END IF;
    END LOOP;

    FOREACH s IN ARRAY shards LOOP
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF to_regnamespace(quote_ident(sch)) IS NULL THEN
            -- fails if another session made it meanwhile
            EXECUTE format('CREATE SCHEMA %I', sch);
        ELSE
            -- checked again where it is used: it may be new since the check
            PERFORM shardid.check_shard_schema(sch, s);
        END IF;
        made := '{}';

        FOR t IN
            SELECT c.oid, c.relname,
                   (SELECT a.attidentity FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = id_column AND NOT a.attisdropped) AS identity
            FROM pg_class c
            WHERE c.relnamespace = to_regnamespace(quote_ident(template))
              AND c.relkind = 'r' AND NOT c.relispartition
            ORDER BY c.relname
        LOOP
            shard := s;
            schema_name := sch;
            table_name := t.relname;
            IF to_regclass(format('%I.%I', sch, t.relname)) IS NOT NULL THEN
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
                                              WHERE c.relnamespace = to_regnamespace(quote_ident(template))
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
            made := made || t.relname;
            RETURN NEXT;
        END LOOP;

        -- foreign keys between tables of the template join the shard's own tables
        FOR fk IN
            SELECT c.relname, con.conname, pg_get_constraintdef(con.oid) AS def
            FROM pg_constraint con
            JOIN pg_class c ON c.oid = con.conrelid
            WHERE con.contype = 'f'
              AND c.relnamespace = to_regnamespace(quote_ident(template))
              AND c.relname = ANY (made)
            ORDER BY c.relname, con.conname
        LOOP
            EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', sch, fk.relname, fk.conname,
                           replace(fk.def, 'REFERENCES ' || quote_ident(template) || '.',
                                   'REFERENCES ' || quote_ident(sch) || '.'));
        END LOOP;

        PERFORM shardid.register_shard(s, sch);
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_shards(name, integer[], text, integer, name, boolean) IS
'create and register a schema per shard with every table of the template, a CACHE 1 sequence per table and the id DEFAULT naming that shard; existing tables are skipped';

-- The same for many shards: one transaction per shard.  A procedure that
-- commits cannot have a SET search_path clause, so every name and operator
-- below is schema-qualified: the caller's search_path chooses nothing.
CREATE OR REPLACE PROCEDURE provision_shards(template name,
                                             shards integer[],
                                             prefix text DEFAULT 'shard_',
                                             digits integer DEFAULT 4,
                                             id_column name DEFAULT 'id',
                                             use_sequence boolean DEFAULT true,
                                             INOUT tables_created integer DEFAULT NULL,
                                             INOUT tables_existing integer DEFAULT NULL)
AS $$
DECLARE
    s integer;
    r record;
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL OR use_sequence IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    tables_created := 0;
    tables_existing := 0;
    FOREACH s IN ARRAY shards LOOP
        FOR r IN SELECT c.action FROM shardid.create_shards(template, ARRAY[s], prefix, digits,
                                                            id_column, use_sequence) c LOOP
            IF r.action OPERATOR(pg_catalog.=) 'exists' THEN
                tables_existing := tables_existing OPERATOR(pg_catalog.+) 1;
            ELSE
                tables_created := tables_created OPERATOR(pg_catalog.+) 1;
            END IF;
        END LOOP;
        COMMIT;
    END LOOP;
END
$$ LANGUAGE plpgsql;

CREATE OR REPLACE PROCEDURE provision_shards(template name,
                                             first_shard integer,
                                             last_shard integer,
                                             prefix text DEFAULT 'shard_',
                                             digits integer DEFAULT 4,
                                             id_column name DEFAULT 'id',
                                             use_sequence boolean DEFAULT true,
                                             INOUT tables_created integer DEFAULT NULL,
                                             INOUT tables_existing integer DEFAULT NULL)
AS $$
DECLARE
    shards integer[];
BEGIN
    IF first_shard IS NULL OR last_shard IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF first_shard OPERATOR(pg_catalog.>) last_shard THEN
        RAISE EXCEPTION 'first shard % is after last shard %', first_shard, last_shard
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    shards := ARRAY(SELECT pg_catalog.generate_series(first_shard, last_shard));
    CALL shardid.provision_shards(template, shards, prefix, digits, id_column, use_sequence,
                                  tables_created, tables_existing);
END
$$ LANGUAGE plpgsql;

-- One row per problem with the logical shards of this database.  It reads
-- the catalogs and the registry, and counts rows with
-- rows_of_other_shards(), only in plain tables whose id column is exactly
-- bigint: nothing it runs is code that the owner of a table chose (a cast,
-- an operator, an index predicate, a policy).
CREATE OR REPLACE FUNCTION doctor(scan_rows boolean DEFAULT true)
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    n bigint;
    max_shard integer := shardid.max_shard();
BEGIN
    -- the epoch must be set on purpose, the same on every server
    IF (SELECT source FROM pg_settings WHERE name = 'shardid.epoch') = 'default' THEN
        problem := 'epoch not set';
        object := 'shardid.epoch';
        detail := format('shardid.epoch is at its built-in default (%s); ids of this server decode right only where the same epoch is in force.',
                         current_setting('shardid.epoch'));
        fix := format('Set it explicitly and identically on every server: ALTER SYSTEM SET shardid.epoch = %L; SELECT pg_reload_conf();',
                      current_setting('shardid.epoch'));
        RETURN NEXT;
    END IF;

    -- the ids of this server were made under another epoch
    FOR r IN SELECT i.epoch, i.ids_epoch FROM shardid.info() i
             WHERE i.ids_epoch IS DISTINCT FROM i.epoch AND i.ids_epoch IS NOT NULL LOOP
        problem := 'epoch differs from the ids'' epoch';
        object := 'shardid.epoch';
        detail := format('shardid.epoch is %s, but the ids of this server were made with epoch %s: next_id() refuses to make ids, and ids decode to other times.',
                         r.epoch, r.ids_epoch);
        fix := format('Set shardid.epoch back to %s, or, to start over with the new epoch on purpose (a migration step), have a superuser run SELECT shardid.adopt_epoch();',
                      r.ids_epoch);
        RETURN NEXT;
    END LOOP;

    FOR r IN SELECT d.*, g.schema_name AS registered_schema
             FROM shardid.id_defaults d
             LEFT JOIN shardid.shard_registry g ON g.shard = d.shard
             ORDER BY d.schema_name, d.table_name, d.column_name LOOP
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        IF r.column_type <> 'bigint'::regtype THEN
            problem := 'id column not bigint';
            detail := format('The column has type %s; next_id() makes bigint ids, and doctor() reads no column of another type.', r.column_type);
            fix := format('ALTER TABLE %I.%I ALTER COLUMN %I TYPE bigint;', r.schema_name, r.table_name, r.column_name);
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF NOT r.plain_call THEN
            problem := 'DEFAULT not a plain next_id() call';
            detail := format('The DEFAULT %s does more than call shardid.next_id(), so the shard of its ids cannot be known.', r.default_expr);
            fix := format('Make the DEFAULT of %I.%I.%I just shardid.next_id(<shard>, nextval(<sequence>)), as shardid.create_shards() does.',
                          r.schema_name, r.table_name, r.column_name);
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF r.shard IS NULL THEN
            problem := 'shard not a constant';
            detail := format('The DEFAULT %s does not pass a constant shard, so the shard of this table cannot be checked.', r.default_expr);
            fix := 'Write the shard number into the DEFAULT, as shardid.create_shards() does.';
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
        IF r.registered_schema IS NULL THEN
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
            SELECT seqcache INTO n FROM pg_sequence WHERE seqrelid = r.sequence_name;
            IF n > 1 THEN
                problem := 'sequence cache above 1';
                detail := format('Sequence %s has CACHE %s: sessions take values from far-apart ranges, which defeats the 1024-per-millisecond window of session mode.', r.sequence_name, n);
                fix := format('ALTER SEQUENCE %s CACHE 1;', r.sequence_name);
                RETURN NEXT;
            END IF;
        ELSIF r.sequence_free AND (SELECT i.mode FROM shardid.info() i) <> 'strict' THEN
            problem := 'sequence-free DEFAULT without strict mode';
            detail := 'shardid.next_id(shard) needs the shared state of strict mode; every insert fails here.';
            fix := 'Add shardid to shared_preload_libraries and restart, or use shardid.next_id(shard, nextval(sequence)).';
            RETURN NEXT;
        END IF;
    END LOOP;

    -- anything in schema shardid that is not shardid's own
    FOR r IN SELECT * FROM shardid.foreign_objects() LOOP
        problem := 'foreign object in schema shardid';
        object := r.object;
        detail := format('%s (owner %s) is in schema shardid but is not shardid''s own; a call that names shardid may run it.',
                         r.object, coalesce(r.owner::text, '-'));
        fix := 'A superuser should find out who created it, remove it from the extension if it was added (ALTER EXTENSION shardid DROP ...) and drop it.';
        RETURN NEXT;
    END LOOP;

    -- registrations whose schema is gone
    FOR r IN SELECT g.* FROM shardid.shard_registry g
             WHERE NOT EXISTS (SELECT FROM pg_namespace n WHERE n.nspname = g.schema_name)
             ORDER BY g.shard LOOP
        problem := 'registered schema missing';
        object := format('shard %s', r.shard);
        detail := format('Shard %s is registered to schema %I, which does not exist: routing answers NULL for it.', r.shard, r.schema_name);
        fix := format('Restore or rename the schema, or SELECT shardid.unregister_shard(%s); if the shard left this database.', r.shard);
        RETURN NEXT;
    END LOOP;

    -- one shard, one schema
    FOR r IN SELECT d.shard, array_agg(DISTINCT d.schema_name ORDER BY d.schema_name) AS schemas
             FROM shardid.id_defaults d
             WHERE d.shard BETWEEN 0 AND max_shard AND d.column_type = 'bigint'::regtype
             GROUP BY d.shard HAVING count(DISTINCT d.schema_name) > 1 ORDER BY d.shard LOOP
        problem := 'shard claimed by several schemas';
        object := format('shard %s', r.shard);
        detail := format('Schemas %s all make ids of shard %s; their ids can collide and no id can tell which schema holds its row.',
                         array_to_string(r.schemas, ', '), r.shard);
        fix := 'Give each schema its own shard: change the DEFAULTs of all but one schema to an unused shard number.';
        RETURN NEXT;
    END LOOP;

    -- one schema, one shard
    FOR r IN
        WITH valid AS (
            SELECT * FROM shardid.id_defaults d
            WHERE d.shard BETWEEN 0 AND max_shard AND d.column_type = 'bigint'::regtype),
        per_schema AS (
            SELECT v.schema_name, coalesce(min(g.shard), mode() WITHIN GROUP (ORDER BY v.shard)) AS schema_shard
            FROM valid v LEFT JOIN shardid.shard_registry g ON g.schema_name = v.schema_name
            GROUP BY v.schema_name)
        SELECT v.schema_name, v.table_name, v.column_name, v.shard, p.schema_shard
        FROM valid v JOIN per_schema p USING (schema_name)
        WHERE v.shard <> p.schema_shard ORDER BY v.schema_name, v.table_name LOOP
        problem := 'DEFAULT of another shard';
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        detail := format('This DEFAULT makes ids of shard %s, the other tables of schema %I make ids of shard %s.',
                         r.shard, r.schema_name, r.schema_shard);
        fix := format('Make the DEFAULT of %I.%I.%I pass shard %s, or move the table to the schema of shard %s.',
                      r.schema_name, r.table_name, r.column_name, r.schema_shard, r.shard);
        RETURN NEXT;
    END LOOP;

    -- rows that carry another shard than their table's DEFAULT: each plain
    -- table once (a partitioned table's rows are in its partitions)
    IF scan_rows THEN
        FOR r IN SELECT * FROM shardid.id_defaults d
                 WHERE d.plain_call AND d.shard BETWEEN 0 AND max_shard AND d.column_type = 'bigint'::regtype
                   AND (SELECT c.relkind FROM pg_class c WHERE c.oid = d.table_oid) = 'r'
                 ORDER BY schema_name, table_name LOOP
            object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
            -- Count in a subtransaction that is rolled back on purpose, the
            -- count riding out in the error: a rolled-back subtransaction
            -- releases its table lock, so thousands of shard tables do not
            -- fill the lock table.
            BEGIN
                n := shardid.rows_of_other_shards(r.table_oid, r.column_name, r.shard::integer);
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
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET row_security = off;

-- =====================================================================
-- 3. Durable high-water mark and the epoch of the ids
-- =====================================================================

-- Two replication origins, cluster-wide (pg_replication_origin is a shared
-- catalog), hold what must survive crashes, restarts and failovers: H, the
-- bound no id's time ever passes, and the epoch the server's ids were made
-- with.  Core WAL-logs their progress, replays it on standbys and after a
-- crash, and checkpoints it.  Another database's install may have made them
-- already; dropping the extension leaves them, as other databases may use
-- them.
SELECT pg_catalog.pg_replication_origin_create(o.name)
FROM (VALUES ('shardid_high_water'), ('shardid_epoch')) o(name)
WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_origin r WHERE r.roname = o.name);

-- info() gains the durable state's columns
DROP FUNCTION info();
CREATE FUNCTION info(OUT epoch timestamptz,
                     OUT epoch_ms bigint,
                     OUT layout text,
                     OUT max_shard integer,
                     OUT ids_per_ms_per_shard integer,
                     OUT sign_bit_at timestamptz,
                     OUT time_field_ends_at timestamptz,
                     OUT mode text,
                     OUT shared_memory text,
                     OUT max_lead_ms integer,
                     OUT clock_waits bigint,
                     OUT clock_behind_calls bigint,
                     OUT max_clock_step_back_ms bigint,
                     OUT seeded_at timestamptz,
                     OUT high_water_mark timestamptz,
                     OUT high_water_writes bigint,
                     OUT ids_epoch timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION info() IS
'the epoch, the id layout, the uniqueness mode in force, counters of how stamping went, and the durable high-water mark and epoch of the ids';

CREATE FUNCTION adopt_epoch()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'shardid_adopt_epoch_sql'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

REVOKE EXECUTE ON FUNCTION adopt_epoch() FROM PUBLIC;

COMMENT ON FUNCTION adopt_epoch() IS
'superusers: make the shardid.epoch in force the epoch of this server''s ids, a deliberate new start (migration step); returns it';

-- =====================================================================
-- 4. Move journal (shardid-move)
-- =====================================================================

-- One row per move and side, written only by shardid-move (a superuser), so
-- that an interrupted move can be seen, undone (--abort) or finished
-- (--resume) by the next run.  A server's journal speaks of that server only:
-- it is not a configuration table and stays out of pg_dump.
CREATE TABLE shardid.move_journal (
    move_id          text NOT NULL,
    side             text NOT NULL CHECK (side IN ('source', 'target')),
    shard            integer NOT NULL,
    schema_name      name NOT NULL,
    method           text NOT NULL CHECK (method IN ('offline', 'online')),
    phase            text NOT NULL,
    peer             text NOT NULL,
    schema_oid       oid,
    subscription_oid oid,
    started_at       timestamptz NOT NULL DEFAULT pg_catalog.now(),
    updated_at       timestamptz NOT NULL DEFAULT pg_catalog.now(),
    started_by       name NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (move_id, side),
    CHECK (side = 'source' AND phase IN ('publishing', 'frozen-for-move', 'handing-over', 'moved-away',
                                        'dropped', 'aborted')
        OR side = 'target' AND phase IN ('checked', 'copying', 'copied', 'replicating', 'caught-up',
                                         'verified', 'cut-over', 'done', 'aborted'))
);

-- at most one unfinished move of a shard per server
CREATE UNIQUE INDEX move_journal_unfinished ON shardid.move_journal (shard)
    WHERE phase NOT IN ('done', 'moved-away', 'dropped', 'aborted');

REVOKE ALL ON shardid.move_journal FROM PUBLIC;
GRANT SELECT ON shardid.move_journal TO PUBLIC;

COMMENT ON TABLE shardid.move_journal IS
'moves of logical shards from or to this server, phase by phase, as shardid-move recorded them';
COMMENT ON COLUMN shardid.move_journal.peer IS
'host, port and database of the other server of the move (never a password)';
COMMENT ON COLUMN shardid.move_journal.schema_oid IS
'target: the schema the move created here, the only one an undo may drop';
COMMENT ON COLUMN shardid.move_journal.subscription_oid IS
'online moves: the subscription on the target, whose table-sync replication slots on the source an undo drops';

-- The statement trigger shardid_moving that shardid-move puts on every table
-- of a shard it moves away: writes are refused, reads go on.
CREATE FUNCTION shardid.move_guard()
RETURNS trigger
AS $$
BEGIN
    IF (SELECT j.phase FROM shardid.move_journal j
        WHERE j.side = 'source' AND j.shard = TG_ARGV[0]::integer
        ORDER BY j.updated_at DESC LIMIT 1) = 'moved-away' THEN
        RAISE EXCEPTION 'shard % has moved to another server', TG_ARGV[0]
            USING ERRCODE = 'read_only_sql_transaction',
                  HINT = 'Route the shard to the server it moved to.';
    END IF;
    RAISE EXCEPTION 'shard % is being moved to another server', TG_ARGV[0]
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry against the server the shard moves to once the move is done.';
END
$$ LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid.move_guard() IS
'trigger of shardid-move: refuses writes to the tables of a shard that is moving or has moved away';

-- =====================================================================
-- 5. Take schema shardid over (last in this script)
-- =====================================================================

-- The schema goes to the role that runs this script (the bootstrap
-- superuser in a trusted install, the installing superuser otherwise),
-- every privilege on it but USAGE is taken from everyone else, and the
-- script stops if the schema holds anything that is not shardid's.
--
-- A role that could create in the schema before (its owner, when that was
-- no superuser) could have an object in the making in a transaction still
-- open, which the check cannot see.  So this waits, up to a minute, until
-- no such role has a transaction that has written something, and checks
-- again; doctor() reports anything that slips in all the same.
DO $$
DECLARE
    ns oid := (SELECT e.extnamespace FROM pg_catalog.pg_extension e
               WHERE e.extname OPERATOR(pg_catalog.=) 'shardid');
    creators oid[];
    g record;
    n integer := 0;
BEGIN
    -- the roles that may create in the schema now, superusers aside
    SELECT pg_catalog.array_agg(DISTINCT r.oid) INTO creators
    FROM pg_catalog.pg_namespace s, pg_catalog.pg_roles r
    WHERE s.oid OPERATOR(pg_catalog.=) ns AND NOT r.rolsuper
      AND (r.oid OPERATOR(pg_catalog.=) s.nspowner
           OR pg_catalog.has_schema_privilege(r.oid, s.oid, 'CREATE'));

    PERFORM shardid.check_no_foreign_objects();

    EXECUTE pg_catalog.format('ALTER SCHEMA shardid OWNER TO %I', CURRENT_USER);
    -- ALTER SCHEMA ... OWNER kept the privileges others held; take them all
    FOR g IN
        SELECT DISTINCT a.grantee, a.grantor
        FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
        WHERE s.oid OPERATOR(pg_catalog.=) ns AND a.grantee OPERATOR(pg_catalog.<>) s.nspowner
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA shardid FROM %s GRANTED BY %I CASCADE',
                                  CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                       ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
                                  pg_catalog.pg_get_userbyid(g.grantor));
    END LOOP;
    EXECUTE 'GRANT USAGE ON SCHEMA shardid TO PUBLIC';

    IF creators IS NOT NULL THEN
        WHILE EXISTS (SELECT FROM pg_catalog.pg_stat_activity a
                      WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                        AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                        AND a.backend_xid IS NOT NULL
                        AND (SELECT pg_catalog.bool_or(pg_catalog.pg_has_role(a.usesysid, c, 'MEMBER'))
                             FROM pg_catalog.unnest(creators) c)) LOOP
            n := n OPERATOR(pg_catalog.+) 1;
            IF n OPERATOR(pg_catalog.>) 600 THEN
                RAISE EXCEPTION 'could not take schema shardid over: a role that could create objects in it has a transaction open'
                    USING ERRCODE = 'lock_not_available',
                          DETAIL = 'Objects that transaction makes in the schema would not be checked.',
                          HINT = 'Run the command again when those sessions are idle (see pg_stat_activity).';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.1);
        END LOOP;
        PERFORM shardid.check_no_foreign_objects();
    END IF;
END
$$;
