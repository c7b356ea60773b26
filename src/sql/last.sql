-- src/sql/last.sql: section 9, the last statements of every install and
-- update script of shardid from 1.3 on (make puts them there, see the
-- Makefile); 1.2's scripts take them from shardid--1.1--1.2.sql.

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
