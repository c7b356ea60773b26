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

-- create_shards() adopts only what it would have made: an existing object
-- under a template table's name that is not a table of a trusted owner is
-- refused (a role with CREATE on the shard schema put a view there whose
-- INSTEAD OF trigger then ran as the superuser who wrote to it), and a
-- table that differs from its template is reported (table_drift())
CREATE FUNCTION table_drift(template_table regclass, shard_table regclass, id_column name)
RETURNS text
AS $$
WITH cols AS (
    SELECT a.attrelid AS rel, a.attname,
           pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
           CASE WHEN a.attname OPERATOR(pg_catalog.<>) id_column THEN pg_catalog.pg_get_expr(d.adbin, d.adrelid) END AS def
    FROM pg_catalog.pg_attribute a
    LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
    WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY[template_table, shard_table]::pg_catalog.oid[])
      AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
), t AS (SELECT * FROM cols WHERE rel OPERATOR(pg_catalog.=) template_table::pg_catalog.oid),
   s AS (SELECT * FROM cols WHERE rel OPERATOR(pg_catalog.=) shard_table::pg_catalog.oid),
cons AS (
    SELECT c.conrelid AS rel,
           pg_catalog.format('%s %s', CASE c.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique'
                                      WHEN 'f' THEN 'foreign key' WHEN 'c' THEN 'check' ELSE 'exclusion' END,
                             CASE WHEN c.contype OPERATOR(pg_catalog.=) 'c' THEN pg_catalog.pg_get_constraintdef(c.oid)
                             ELSE pg_catalog.format('(%s)%s',
                                      (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY k.i)
                                       FROM pg_catalog.unnest(c.conkey) WITH ORDINALITY k(n, i)
                                       JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.conrelid
                                        AND a.attnum OPERATOR(pg_catalog.=) k.n),
                                      CASE WHEN c.contype OPERATOR(pg_catalog.=) 'f' THEN
                                          ' references ' OPERATOR(pg_catalog.||)
                                          pg_catalog.quote_ident((SELECT r.relname FROM pg_catalog.pg_class r
                                                                  WHERE r.oid OPERATOR(pg_catalog.=) c.confrelid)::pg_catalog.text)
                                      ELSE '' END) END) AS what
    FROM pg_catalog.pg_constraint c
    WHERE c.conrelid OPERATOR(pg_catalog.=) ANY (ARRAY[template_table, shard_table]::pg_catalog.oid[])
      AND c.contype OPERATOR(pg_catalog.=) ANY ('{p,u,f,c,x}'::pg_catalog."char"[])
    UNION ALL
    SELECT i.indrelid,
           'index ' OPERATOR(pg_catalog.||)
           pg_catalog.regexp_replace(pg_catalog.pg_get_indexdef(i.indexrelid), '^CREATE (UNIQUE )?INDEX \S+ ON \S+ ', '\1')
    FROM pg_catalog.pg_index i
    WHERE i.indrelid OPERATOR(pg_catalog.=) ANY (ARRAY[template_table, shard_table]::pg_catalog.oid[])
      AND NOT EXISTS (SELECT FROM pg_catalog.pg_constraint c WHERE c.conindid OPERATOR(pg_catalog.=) i.indexrelid
                                                              AND c.conrelid OPERATOR(pg_catalog.=) i.indrelid)
)
SELECT pg_catalog.string_agg(d, '; ' ORDER BY d)
FROM (SELECT CASE WHEN s.attname IS NULL THEN pg_catalog.format('column %I is missing', t.attname)
                  WHEN t.attname IS NULL THEN pg_catalog.format('column %I is not in the template', s.attname)
                  WHEN s.type OPERATOR(pg_catalog.<>) t.type THEN pg_catalog.format('column %I is %s, not %s', s.attname, s.type, t.type)
                  WHEN s.attnotnull OPERATOR(pg_catalog.<>) t.attnotnull THEN
                      pg_catalog.format('column %I is %s', s.attname, CASE WHEN s.attnotnull THEN 'NOT NULL' ELSE 'nullable' END)
                  ELSE pg_catalog.format('column %I has DEFAULT %s, not %s', s.attname,
                                         COALESCE(s.def, 'none'), COALESCE(t.def, 'none')) END AS d
      FROM t FULL JOIN s ON s.attname OPERATOR(pg_catalog.=) t.attname
      WHERE s.attname IS NULL OR t.attname IS NULL OR s.type OPERATOR(pg_catalog.<>) t.type
         OR s.attnotnull OPERATOR(pg_catalog.<>) t.attnotnull OR s.def IS DISTINCT FROM t.def
      UNION ALL
      (SELECT pg_catalog.format('%s is missing', what) FROM cons WHERE rel OPERATOR(pg_catalog.=) template_table::pg_catalog.oid
       EXCEPT ALL
       SELECT pg_catalog.format('%s is missing', what) FROM cons WHERE rel OPERATOR(pg_catalog.=) shard_table::pg_catalog.oid)
      UNION ALL
      (SELECT pg_catalog.format('%s is not in the template', what) FROM cons WHERE rel OPERATOR(pg_catalog.=) shard_table::pg_catalog.oid
       EXCEPT ALL
       SELECT pg_catalog.format('%s is not in the template', what) FROM cons WHERE rel OPERATOR(pg_catalog.=) template_table::pg_catalog.oid)) x
$$ LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION table_drift(regclass, regclass, name) IS
'how a shard''s table differs from its template table (columns, keys, foreign keys, checks, indexes), NULL if it does not; create_shards() reports it';

CREATE OR REPLACE FUNCTION create_local_shards(template name,
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
    existing regclass;
    existing_kind "char";
    drift text;
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
                              DETAIL = format('create_shards() adopts only tables that it would have made: tables of your own or of a superuser. %s would run the code its owner attached to it with the privileges of whoever writes to it.', existing),
                              HINT = format('Find out who made it; drop or rename it, then run create_shards() again to make %s from template %I.', existing, template);
                END IF;
                drift := shardid.table_drift(t.oid, existing, id_column);
                IF drift IS NOT NULL THEN
                    RAISE WARNING 'table % of shard % differs from its template %.%: %', existing, s,
                                  quote_ident(template), quote_ident(t.relname), drift
                        USING HINT = 'create_shards() keeps an existing table as it is: align it with the template by hand (ALTER TABLE), or drop it and run create_shards() again.';
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

-- The move lock is a row of a table only superusers write, no longer an
-- advisory lock in the shard's database, which a role with CONNECT alone
-- could take and so keep every move of the shard (and its --abort) out
CREATE TABLE shardid.move_locks (
    shard         integer PRIMARY KEY,
    pid           integer NOT NULL,
    backend_start timestamptz NOT NULL,
    taken_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    taken_by      name NOT NULL DEFAULT CURRENT_USER
);

COMMENT ON TABLE shardid.move_locks IS
'the shards a running shardid-move works on, with its session on this server; written only by shardid-move';

REVOKE ALL ON shardid.move_locks FROM PUBLIC;

