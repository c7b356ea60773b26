/* shardid--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shardid" to load this file. \quit

-- CREATE EXTENSION creates schema shardid; every role may call into it
-- (functions are executable by PUBLIC by default, views need a grant below)
GRANT USAGE ON SCHEMA @extschema@ TO PUBLIC;

-- Volatility and parallel labels, in short:
--  * next_id() reads the clock and moves stamping state: VOLATILE.  The
--    two-argument form is PARALLEL UNSAFE because, without shared state, its
--    guard lives in one backend, and a parallel worker is another backend
--    (its nextval() argument is parallel unsafe anyway).  The one-argument
--    form only ever uses shared memory, which every worker sees: SAFE.
--  * make_id(), id_millis(), id_shard(), id_seq() are pure bit arithmetic:
--    IMMUTABLE, usable in indexes, constraints and partition keys.
--  * id_time(), decode(), min_id(), max_id() read the shardid.epoch setting:
--    STABLE, never IMMUTABLE (a different epoch gives a different answer).
--  * Every function is STRICT: NULL in, NULL out.

CREATE FUNCTION next_id(shard integer, seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_next_id'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION next_id(integer, bigint) IS
'new id for a shard: wall clock ms since shardid.epoch, the shard, and seq & 1023; use as a column DEFAULT with nextval()';

CREATE FUNCTION next_id(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_next_id_counter'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION next_id(integer) IS
'new id for a shard with its seq field from a shared counter instead of a sequence; needs shardid in shared_preload_libraries';

CREATE FUNCTION make_id(millis bigint, shard integer, seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_make_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION make_id(bigint, integer, bigint) IS
'id packed from explicit ms since shardid.epoch, shard and seq; for backfills and tests';

CREATE FUNCTION id_millis(id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_id_millis'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_millis(bigint) IS
'time field of an id: ms since shardid.epoch (41 bits, read unsigned)';

CREATE FUNCTION id_shard(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'shardid_id_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_shard(bigint) IS
'shard field of an id (13 bits)';

CREATE FUNCTION id_seq(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'shardid_id_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_seq(bigint) IS
'seq field of an id (10 bits)';

CREATE FUNCTION id_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'shardid_id_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_time(bigint) IS
'moment an id was made: shardid.epoch plus its time field';

CREATE FUNCTION decode(id bigint,
                       OUT created_at timestamptz,
                       OUT shard integer,
                       OUT seq integer,
                       OUT millis bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION decode(bigint) IS
'all fields of an id: SELECT d.* FROM t, shardid.decode(t.id) d';

CREATE FUNCTION min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION min_id(timestamptz) IS
'smallest id that can carry the millisecond of ts; WHERE id BETWEEN min_id(a) AND max_id(b) scans the primary key';

CREATE FUNCTION max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION max_id(timestamptz) IS
'largest id that can carry the millisecond of ts';

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
                     OUT seeded_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION info() IS
'the epoch, the id layout, the uniqueness mode in force and counters of how stamping went';

-- ---------------------------------------------------------------------
-- Logical shards: one schema per shard, the same tables in each.
--
-- What this database holds is read from the catalogs (every column DEFAULT
-- that calls shardid.next_id() and the shard constant it passes), so it
-- stays true after a schema was restored from another server.  These
-- functions run with the caller's rights and a fixed search_path.
-- ---------------------------------------------------------------------

-- every column DEFAULT that calls next_id(), with its shard and sequence
CREATE VIEW id_defaults AS
SELECT n.nspname AS schema_name,
       c.relname AS table_name,
       a.attname AS column_name,
       c.oid AS table_oid,
       (regexp_match(pg_catalog.pg_get_expr(d.adbin, d.adrelid),
                     'next_id\(\(?(-?[0-9]+)\)?\s*(,|\))'))[1]::bigint AS shard,
       pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default_expr,
       (SELECT s.oid::regclass
          FROM pg_catalog.pg_depend sd
          JOIN pg_catalog.pg_class s ON s.oid = sd.refobjid AND s.relkind = 'S'
         WHERE sd.classid = 'pg_catalog.pg_attrdef'::regclass AND sd.objid = d.oid
           AND sd.refclassid = 'pg_catalog.pg_class'::regclass
         LIMIT 1) AS sequence_name
FROM pg_catalog.pg_attrdef d
JOIN pg_catalog.pg_depend dep
  ON dep.classid = 'pg_catalog.pg_attrdef'::regclass AND dep.objid = d.oid
 AND dep.refclassid = 'pg_catalog.pg_proc'::regclass
 AND dep.refobjid IN ('shardid.next_id(integer,bigint)'::regprocedure,
                      'shardid.next_id(integer)'::regprocedure)
JOIN pg_catalog.pg_class c ON c.oid = d.adrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
WHERE c.relkind IN ('r', 'p');

COMMENT ON VIEW id_defaults IS
'every column DEFAULT that calls shardid.next_id(), with the shard it passes and its sequence';

-- the logical shards present in this database
CREATE VIEW shards AS
SELECT shard::integer AS shard,
       schema_name,
       array_agg(table_name::text ORDER BY table_name) AS tables
FROM id_defaults
WHERE shard BETWEEN 0 AND 8191
GROUP BY shard, schema_name;

GRANT SELECT ON id_defaults, shards TO PUBLIC;

COMMENT ON VIEW shards IS
'logical shards in this database: a shard number, the schema whose id DEFAULTs pass it, and those tables';

CREATE FUNCTION shard_schema(shard integer)
RETURNS name
AS $$
DECLARE
    found name[];
BEGIN
    SELECT array_agg(s.schema_name ORDER BY s.schema_name) INTO found
    FROM shardid.shards s WHERE s.shard = shard_schema.shard;
    IF cardinality(found) > 1 THEN
        RAISE EXCEPTION 'shard % is claimed by several schemas: %', shard,
              array_to_string(found, ', ')
            USING ERRCODE = 'cardinality_violation',
                  HINT = 'Run SELECT * FROM shardid.doctor() and give each shard one schema.';
    END IF;
    RETURN found[1];
END
$$ LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shard_schema(integer) IS
'schema of a logical shard in this database, NULL if the shard does not live here';

CREATE FUNCTION id_schema(id bigint)
RETURNS name
AS $$ SELECT shardid.shard_schema(shardid.id_shard(id)) $$
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION id_schema(bigint) IS
'schema of the logical shard an id belongs to, NULL if that shard does not live in this database';

-- Create logical shards from a template schema.
CREATE FUNCTION create_shards(template name,
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
    t record;
    fk record;
    seq name;
    made name[];
BEGIN
    IF template IS NULL OR shards IS NULL OR prefix IS NULL OR digits IS NULL
       OR id_column IS NULL OR use_sequence IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.create_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF pg_catalog.to_regnamespace(quote_ident(template)) IS NULL THEN
        RAISE EXCEPTION 'template schema "%" does not exist', template
            USING ERRCODE = 'invalid_schema_name';
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_class c
                   WHERE c.relnamespace = pg_catalog.to_regnamespace(quote_ident(template))
                     AND c.relkind = 'r' AND NOT c.relispartition) THEN
        RAISE EXCEPTION 'template schema "%" has no tables', template
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF digits < 1 OR digits > 4 OR prefix = '' THEN
        RAISE EXCEPTION 'schema names need a non-empty prefix and 1 to 4 digits'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Got prefix %L and %s digits.', prefix, digits);
    END IF;

    FOREACH s IN ARRAY shards LOOP
        IF s IS NULL OR s < 0 OR s > 8191 THEN
            RAISE EXCEPTION 'shard % is out of range', coalesce(s::text, 'NULL')
                USING ERRCODE = 'numeric_value_out_of_range',
                      DETAIL = 'A shard must be between 0 and 8191 (13 bits).';
        END IF;
        sch := prefix || lpad(s::text, greatest(digits, length(s::text)), '0');
        IF sch = template THEN
            RAISE EXCEPTION 'shard % would be the template schema "%" itself', s, template
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF pg_catalog.to_regnamespace(quote_ident(sch)) IS NULL THEN
            EXECUTE format('CREATE SCHEMA %I', sch);
        END IF;
        made := '{}';

        FOR t IN
            SELECT c.oid, c.relname,
                   (SELECT a.attidentity FROM pg_catalog.pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attname = id_column AND NOT a.attisdropped) AS identity
            FROM pg_catalog.pg_class c
            WHERE c.relnamespace = pg_catalog.to_regnamespace(quote_ident(template))
              AND c.relkind = 'r' AND NOT c.relispartition
            ORDER BY c.relname
        LOOP
            shard := s;
            schema_name := sch;
            table_name := t.relname;
            IF pg_catalog.to_regclass(format('%I.%I', sch, t.relname)) IS NOT NULL THEN
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
                    seq := left(t.relname || '_' || id_column, 59) || '_seq';
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
            SELECT c.relname, con.conname, pg_catalog.pg_get_constraintdef(con.oid) AS def
            FROM pg_catalog.pg_constraint con
            JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
            WHERE con.contype = 'f'
              AND c.relnamespace = pg_catalog.to_regnamespace(quote_ident(template))
              AND c.relname = ANY (made)
            ORDER BY c.relname, con.conname
        LOOP
            EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', sch, fk.relname, fk.conname,
                           replace(fk.def, 'REFERENCES ' || quote_ident(template) || '.',
                                   'REFERENCES ' || quote_ident(sch) || '.'));
        END LOOP;
    END LOOP;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION create_shards(name, integer[], text, integer, name, boolean) IS
'create a schema per shard with every table of the template, a CACHE 1 sequence per table and the id DEFAULT naming that shard; existing tables are skipped';

-- The same for many shards: one transaction per shard, so that thousands of
-- shards do not need thousands of locks at once (one transaction creating
-- 2000 shards of 3 tables takes ~24,000 locks, past the default lock table).
-- No SET search_path here: a procedure with one cannot COMMIT; every name
-- inside is schema-qualified instead.
CREATE PROCEDURE provision_shards(template name,
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
    IF shards IS NULL THEN
        RAISE EXCEPTION 'arguments of shardid.provision_shards() must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    tables_created := 0;
    tables_existing := 0;
    FOREACH s IN ARRAY shards LOOP
        FOR r IN SELECT c.action FROM shardid.create_shards(template, ARRAY[s], prefix, digits,
                                                            id_column, use_sequence) c LOOP
            IF r.action = 'exists' THEN
                tables_existing := tables_existing + 1;
            ELSE
                tables_created := tables_created + 1;
            END IF;
        END LOOP;
        COMMIT;
    END LOOP;
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE provision_shards(name, integer[], text, integer, name, boolean, integer, integer) IS
'create_shards() for many shards, committing after each shard; CALL it outside a transaction block';

-- the same for a range of shards (CALL takes no subquery to build an array)
CREATE PROCEDURE provision_shards(template name,
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
    shards integer[] := ARRAY(SELECT pg_catalog.generate_series(first_shard, last_shard));
BEGIN
    CALL shardid.provision_shards(template, shards, prefix, digits, id_column, use_sequence,
                                  tables_created, tables_existing);
END
$$ LANGUAGE plpgsql;

COMMENT ON PROCEDURE provision_shards(name, integer, integer, text, integer, name, boolean, integer, integer) IS
'create_shards() for shards first_shard to last_shard, committing after each shard';

-- One row per problem with the logical shards of this database.
CREATE FUNCTION doctor(scan_rows boolean DEFAULT true)
RETURNS TABLE (problem text, object text, detail text, fix text)
AS $$
DECLARE
    r record;
    n bigint;
BEGIN
    -- the epoch must be set on purpose, the same on every server
    IF (SELECT source FROM pg_catalog.pg_settings WHERE name = 'shardid.epoch') = 'default' THEN
        problem := 'epoch not set';
        object := 'shardid.epoch';
        detail := format('shardid.epoch is at its built-in default (%s); ids of this server decode right only where the same epoch is in force.',
                         pg_catalog.current_setting('shardid.epoch'));
        fix := format('Set it explicitly and identically on every server: ALTER SYSTEM SET shardid.epoch = %L; SELECT pg_reload_conf();',
                      pg_catalog.current_setting('shardid.epoch'));
        RETURN NEXT;
    END IF;

    FOR r IN SELECT * FROM shardid.id_defaults ORDER BY schema_name, table_name, column_name LOOP
        object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
        IF r.shard IS NULL THEN
            problem := 'shard not a constant';
            detail := format('The DEFAULT %s does not pass a constant shard, so the shard of this table cannot be checked.', r.default_expr);
            fix := 'Write the shard number into the DEFAULT, as shardid.create_shards() does.';
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF r.shard < 0 OR r.shard > 8191 THEN
            problem := 'shard out of range';
            detail := format('The DEFAULT passes shard %s; shards are 0 to 8191, so every insert fails.', r.shard);
            fix := format('Give %I.%I.%I a DEFAULT that passes a shard between 0 and 8191.',
                          r.schema_name, r.table_name, r.column_name);
            RETURN NEXT;
            CONTINUE;
        END IF;
        IF r.sequence_name IS NOT NULL THEN
            SELECT seqcache INTO n FROM pg_catalog.pg_sequence WHERE seqrelid = r.sequence_name;
            IF n > 1 THEN
                problem := 'sequence cache above 1';
                detail := format('Sequence %s has CACHE %s: sessions take values from far-apart ranges, which defeats the 1024-per-millisecond window of session mode.', r.sequence_name, n);
                fix := format('ALTER SEQUENCE %s CACHE 1;', r.sequence_name);
                RETURN NEXT;
            END IF;
        ELSIF r.default_expr !~ 'next_id\(\(?-?[0-9]+\)?\)' THEN
            NULL;	-- a seq from something else than a sequence: nothing to check
        ELSIF (SELECT mode FROM shardid.info()) <> 'strict' THEN
            problem := 'sequence-free DEFAULT without strict mode';
            detail := 'shardid.next_id(shard) needs the shared state of strict mode; every insert fails here.';
            fix := 'Add shardid to shared_preload_libraries and restart, or use shardid.next_id(shard, nextval(sequence)).';
            RETURN NEXT;
        END IF;
    END LOOP;

    -- one shard, one schema
    FOR r IN SELECT s.shard, array_agg(s.schema_name ORDER BY s.schema_name) AS schemas
             FROM shardid.shards s GROUP BY s.shard HAVING count(*) > 1 ORDER BY s.shard LOOP
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
            SELECT * FROM shardid.id_defaults d WHERE d.shard BETWEEN 0 AND 8191),
        per_schema AS (
            SELECT v.schema_name, mode() WITHIN GROUP (ORDER BY v.shard) AS schema_shard
            FROM valid v GROUP BY v.schema_name)
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

    -- rows that carry another shard than their table's DEFAULT
    IF scan_rows THEN
        FOR r IN SELECT * FROM shardid.id_defaults d WHERE d.shard BETWEEN 0 AND 8191
                 ORDER BY schema_name, table_name LOOP
            -- Count in a subtransaction that is rolled back on purpose, the
            -- count riding out in the error: a rolled-back subtransaction
            -- releases its table lock, so thousands of shard tables do not
            -- fill the lock table.
            BEGIN
                EXECUTE format('SELECT count(*) FROM %I.%I WHERE shardid.id_shard(%I) <> %s',
                               r.schema_name, r.table_name, r.column_name, r.shard) INTO n;
                RAISE EXCEPTION USING ERRCODE = 'SIDCN', MESSAGE = n::text;
            EXCEPTION WHEN SQLSTATE 'SIDCN' THEN
                n := SQLERRM::bigint;
            END;
            IF n > 0 THEN
                problem := 'rows of another shard';
                object := format('%I.%I.%I', r.schema_name, r.table_name, r.column_name);
                detail := format('Rows with ids of another shard than %s, the shard of this table: %s.', r.shard, n);
                fix := format('Find them with SELECT * FROM %I.%I WHERE shardid.id_shard(%I) <> %s; and move them to the schema of their shard.',
                              r.schema_name, r.table_name, r.column_name, r.shard);
                RETURN NEXT;
            END IF;
        END LOOP;
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION doctor(boolean) IS
'one row per problem with the logical shards of this database, each with how to fix it; scan_rows => false skips reading table rows';
