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

-- An install or update runs as a superuser (shardid is not trusted from 1.2
-- on) in schema shardid, which may have existed before: made by another role
-- for a trusted install of 1.0 or 1.1, or in advance, on purpose.  Whatever
-- such a role left there (a function, an operator that the comparisons of
-- this script would resolve to, a grant) would run, or stay usable, with the
-- superuser's rights.  So before any other statement, this block, which
-- names nothing outside pg_catalog:
--
--  * on a fresh install (the extension has no members yet) refuses a schema
--    that belongs to a role that is no superuser, that holds anything, or
--    in which a role that is no superuser may create objects;
--  * on an update, takes the schema over for the role running the update,
--    takes every privilege but USAGE from everyone else (revoking the
--    owner's grants with CASCADE, so that grants other roles made go too),
--    waits until no role that could create in the schema before has a
--    writing transaction open (an object in the making would not be seen),
--    and refuses to go on while the schema holds anything that is not a
--    member of shardid owned by a superuser.
DO $section0$
DECLARE
    ext oid;
    ns oid;
    ns_name name;
    ns_owner oid;
    fresh boolean;
    creators oid[];
    g record;
    found_objects text;
    n integer := 0;
BEGIN
    SELECT e.oid, e.extnamespace INTO ext, ns
    FROM pg_catalog.pg_extension e WHERE e.extname OPERATOR(pg_catalog.=) 'shardid';
    SELECT s.nspname, s.nspowner INTO ns_name, ns_owner
    FROM pg_catalog.pg_namespace s WHERE s.oid OPERATOR(pg_catalog.=) ns;
    fresh := NOT EXISTS (SELECT FROM pg_catalog.pg_depend d
                         WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass::pg_catalog.oid
                           AND d.refobjid OPERATOR(pg_catalog.=) ext
                           AND d.deptype OPERATOR(pg_catalog.=) 'e');

    -- the roles that may create in the schema now, superusers aside
    SELECT pg_catalog.array_agg(r.oid) INTO creators
    FROM pg_catalog.pg_roles r
    WHERE NOT r.rolsuper
      AND (r.oid OPERATOR(pg_catalog.=) ns_owner
           OR pg_catalog.has_schema_privilege(r.oid, ns, 'CREATE'));

    IF fresh THEN
        IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) ns_owner) THEN
            RAISE EXCEPTION 'schema "%" belongs to role "%", which is not a superuser', ns_name,
                            pg_catalog.pg_get_userbyid(ns_owner)
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'shardid''s functions are called by superusers; a schema of another role could hold objects that would run in their place.',
                      HINT = pg_catalog.format('Drop the schema (DROP SCHEMA %I), or, if it must stay, have a superuser take it over (ALTER SCHEMA %I OWNER TO %I) and empty it, and run CREATE EXTENSION shardid again.',
                                               ns_name, ns_name, CURRENT_USER);
        END IF;
        SELECT pg_catalog.string_agg(DISTINCT CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                                   ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee)) END, ', ')
        INTO found_objects
        FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
        WHERE s.oid OPERATOR(pg_catalog.=) ns AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
          AND (a.grantee OPERATOR(pg_catalog.=) 0
               OR NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) a.grantee));
        IF found_objects IS NOT NULL THEN
            RAISE EXCEPTION 'roles other than superusers may create objects in schema "%"', ns_name
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = pg_catalog.format('CREATE on it is granted to %s.', found_objects),
                      HINT = pg_catalog.format('Run REVOKE CREATE ON SCHEMA %I FROM %s CASCADE; and CREATE EXTENSION shardid again.',
                                               ns_name, found_objects);
        END IF;
    ELSE
        IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) ns_owner) THEN
            EXECUTE pg_catalog.format('ALTER SCHEMA %I OWNER TO %I', ns_name, CURRENT_USER);
            ns_owner := (SELECT s.nspowner FROM pg_catalog.pg_namespace s WHERE s.oid OPERATOR(pg_catalog.=) ns);
        END IF;
        -- every grant comes from the owner, directly or through the roles it
        -- granted to with GRANT OPTION: revoking the owner's grants with
        -- CASCADE takes the others' too
        FOR g IN
            SELECT DISTINCT a.grantee
            FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
            WHERE s.oid OPERATOR(pg_catalog.=) ns AND a.grantor OPERATOR(pg_catalog.=) s.nspowner
              AND a.grantee OPERATOR(pg_catalog.<>) s.nspowner
        LOOP
            EXECUTE pg_catalog.format('REVOKE ALL ON SCHEMA %I FROM %s CASCADE', ns_name,
                                      CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                           ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
        END LOOP;
        EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA %I TO PUBLIC', ns_name);
        SELECT pg_catalog.string_agg(pg_catalog.format('%s to %s by %s', a.privilege_type,
                                                       CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                                                            ELSE pg_catalog.pg_get_userbyid(a.grantee)::pg_catalog.text END,
                                                       pg_catalog.pg_get_userbyid(a.grantor)), ', ')
        INTO found_objects
        FROM pg_catalog.pg_namespace s, pg_catalog.aclexplode(s.nspacl) a
        WHERE s.oid OPERATOR(pg_catalog.=) ns AND a.grantee OPERATOR(pg_catalog.<>) s.nspowner
          AND NOT (a.grantee OPERATOR(pg_catalog.=) 0 AND a.privilege_type OPERATOR(pg_catalog.=) 'USAGE');
        IF found_objects IS NOT NULL THEN
            RAISE EXCEPTION 'could not take the privileges on schema "%" back', ns_name
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = pg_catalog.format('Still granted: %s.', found_objects),
                      HINT = pg_catalog.format('Revoke them as their grantors (SET ROLE grantor; REVOKE ALL ON SCHEMA %I FROM grantee CASCADE;), and run the update again.', ns_name);
        END IF;

        -- an object another role is making in a transaction still open
        -- would not be seen below: wait for those transactions
        IF creators IS NOT NULL THEN
            WHILE EXISTS (SELECT FROM pg_catalog.pg_stat_activity a
                          WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                            AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()
                            AND a.backend_xid IS NOT NULL
                            AND (SELECT pg_catalog.bool_or(pg_catalog.pg_has_role(a.usesysid, c, 'MEMBER'))
                                 FROM pg_catalog.unnest(creators) c)) LOOP
                n := n OPERATOR(pg_catalog.+) 1;
                IF n OPERATOR(pg_catalog.>) 600 THEN
                    RAISE EXCEPTION 'could not take schema "%" over: a role that could create objects in it has a transaction open', ns_name
                        USING ERRCODE = 'lock_not_available',
                              DETAIL = 'Objects that transaction makes in the schema would not be checked.',
                              HINT = 'Run the command again when those sessions are idle (see pg_stat_activity).';
                END IF;
                PERFORM pg_catalog.pg_sleep(0.1);
            END LOOP;
        END IF;
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
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (owner %s)', pg_catalog.pg_describe_object(p.classid, p.objid, 0),
                                                   COALESCE(pg_catalog.pg_get_userbyid(p.owner)::pg_catalog.text, '-')),
                                 ', ' ORDER BY 1)
    INTO found_objects
    FROM present p
    WHERE NOT EXISTS (SELECT FROM ours o WHERE o.classid OPERATOR(pg_catalog.=) p.classid
                                            AND o.objid OPERATOR(pg_catalog.=) p.objid)
       OR p.owner IS NOT NULL AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r
                                       WHERE r.oid OPERATOR(pg_catalog.=) p.owner);
    IF found_objects IS NOT NULL THEN
        RAISE EXCEPTION 'schema "%" holds objects that are not part of extension shardid', ns_name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('Found: %s.  Another role may have created them to be run in place of shardid''s own functions and operators.', found_objects),
                  HINT = CASE WHEN fresh
                              THEN pg_catalog.format('Drop them, or drop the schema (DROP SCHEMA %I CASCADE) if nothing else is in it, and run CREATE EXTENSION shardid again.', ns_name)
                              ELSE 'A superuser should find out who created them, remove them from the extension (ALTER EXTENSION shardid DROP ...) and drop them, and run the update again.' END;
    END IF;
END
$section0$;

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

-- (section 4: to come)

-- =====================================================================
-- 5. shardid-move
-- =====================================================================

-- (section 5: to come)
