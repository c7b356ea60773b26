-- Install and update paths, tested the way contrib does it: every released
-- version can be installed, and ALTER EXTENSION ... UPDATE brings it to the
-- default version with exactly the objects, owners, privileges and
-- definitions of a fresh install (for tables and views also their triggers,
-- policies, column comments and column privileges; for the event trigger its
-- event, tags, function and owner; for schema shardid_internal its owner and
-- privileges; a function's schema is in its name).
SELECT name, version, superuser, trusted, relocatable, schema
FROM pg_available_extension_versions WHERE name = 'shardid' ORDER BY version;

-- everything that makes up the installed extension, one row per object
CREATE TEMP VIEW shardid_state AS
WITH ext AS (SELECT oid, extnamespace, extconfig, extcondition FROM pg_extension WHERE extname = 'shardid')
SELECT pg_describe_object(d.classid, d.objid, 0) AS object,
       CASE d.classid
       WHEN 'pg_proc'::regclass THEN
           (SELECT format('owner %s acl %s %s', pg_get_userbyid(p.proowner), p.proacl,
                          pg_get_functiondef(p.oid))
            FROM pg_proc p WHERE p.oid = d.objid)
       WHEN 'pg_class'::regclass THEN
           (SELECT format('owner %s acl %s kind %s rls %s view %s columns %s constraints %s indexes %s triggers %s policies %s column comments %s column acls %s',
                          pg_get_userbyid(c.relowner), c.relacl, c.relkind, c.relrowsecurity,
                          pg_get_viewdef(c.oid),
                          (SELECT string_agg(format('%s %s %s default %s', a.attname, format_type(a.atttypid, a.atttypmod),
                                                    CASE WHEN a.attnotnull THEN 'not null' END,
                                                    pg_get_expr(ad.adbin, ad.adrelid)), ', ' ORDER BY a.attnum)
                           FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                          (SELECT string_agg(format('%s %s', co.conname, pg_get_constraintdef(co.oid)), ', ' ORDER BY co.conname)
                           FROM pg_constraint co WHERE co.conrelid = c.oid AND co.contype <> 'n'),
                          (SELECT string_agg(pg_get_indexdef(i.indexrelid), ', ' ORDER BY 1)
                           FROM pg_index i WHERE i.indrelid = c.oid),
                          (SELECT string_agg(format('%s %s', pg_get_triggerdef(tg.oid), tg.tgenabled), ', ' ORDER BY tg.tgname)
                           FROM pg_trigger tg WHERE tg.tgrelid = c.oid AND NOT tg.tgisinternal),
                          (SELECT string_agg(format('%s %s %s %s %s', po.polname, po.polcmd, po.polroles,
                                                    pg_get_expr(po.polqual, po.polrelid), pg_get_expr(po.polwithcheck, po.polrelid)),
                                             ', ' ORDER BY po.polname)
                           FROM pg_policy po WHERE po.polrelid = c.oid),
                          (SELECT string_agg(format('%s %s', a.attname, col_description(c.oid, a.attnum)), ', ' ORDER BY a.attnum)
                           FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                             AND col_description(c.oid, a.attnum) IS NOT NULL),
                          (SELECT string_agg(format('%s %s', a.attname, a.attacl), ', ' ORDER BY a.attnum)
                           FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                             AND a.attacl IS NOT NULL))
            FROM pg_class c WHERE c.oid = d.objid)
       WHEN 'pg_namespace'::regclass THEN
           (SELECT format('owner %s acl %s', pg_get_userbyid(n.nspowner), n.nspacl)
            FROM pg_namespace n WHERE n.oid = d.objid)
       WHEN 'pg_event_trigger'::regclass THEN
           (SELECT format('owner %s event %s tags %s function %s enabled %s', pg_get_userbyid(e.evtowner),
                          e.evtevent, e.evttags, e.evtfoid::regprocedure, e.evtenabled)
            FROM pg_event_trigger e WHERE e.oid = d.objid)
       ELSE '' END AS definition,
       (SELECT ip.initprivs::text FROM pg_init_privs ip
        WHERE ip.classoid = d.classid AND ip.objoid = d.objid AND ip.objsubid = 0) AS initial_privileges,
       (SELECT obj_description(d.objid, (SELECT relname FROM pg_class WHERE oid = d.classid))) AS comment
FROM pg_depend d, ext
WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
UNION ALL
SELECT 'schema ' || n.nspname, format('owner %s acl %s', pg_get_userbyid(n.nspowner), n.nspacl), NULL, NULL
FROM pg_namespace n, ext WHERE n.oid = ext.extnamespace
UNION ALL
SELECT 'configuration', format('tables %s conditions %s',
                               (SELECT array_agg(x::regclass ORDER BY x::regclass::text) FROM unnest(ext.extconfig) x),
                               ext.extcondition), NULL, NULL
FROM ext;

-- the objects of a fresh install (from PostgreSQL 17 on the row types of its
-- tables and views are members too, and the login event trigger
-- shardid_load exists: left out of this list so that it reads the same on
-- every version; the comparison below includes them)
SELECT object FROM shardid_state
WHERE (object NOT LIKE 'type %'
       OR to_regclass(regexp_replace(object, '^type (.*?)(\[\])?$', '\1')) IS NULL)
  AND object <> 'event trigger shardid_load'
ORDER BY 1;
-- the login trigger: where the server has the event (17+), enabled always
SELECT count(*) = (current_setting('server_version_num')::int >= 170000)::int AS login_trigger_where_login_exists
FROM shardid_state
WHERE object = 'event trigger shardid_load'
  AND definition = 'owner ' || current_user || ' event login tags  function shardid_internal.load_at_login() enabled A';
CREATE TEMP TABLE fresh AS SELECT * FROM shardid_state;
-- what an updated install has that a fresh one has not, and the reverse
CREATE TEMP VIEW differs_from_fresh AS
(SELECT 'only fresh' AS side, * FROM fresh EXCEPT SELECT 'only fresh', * FROM shardid_state)
UNION ALL
(SELECT 'only updated', * FROM shardid_state EXCEPT SELECT 'only updated', * FROM fresh);

DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- exactly what a fresh install gives: no object, owner, privilege,
-- definition or comment missing or extra
SELECT * FROM differs_from_fresh;
ALTER EXTENSION shardid UPDATE;
-- the same from 1.1
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT * FROM differs_from_fresh;
-- the same from 1.2, with a registered shard holding rows: the update
-- raises its floor (1.3's id path reads no table)
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
CREATE SCHEMA up_floor;
CREATE TABLE up_floor.t (id bigint PRIMARY KEY);
INSERT INTO up_floor.t VALUES (shardid.make_id(4242, 77, 7)), (shardid.make_id(99, 77, 0));
SELECT shardid.register_shard(77, 'up_floor');
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT shard, shardid.id_millis(floor_id) AS floor_millis FROM shardid.shard_registry WHERE shard = 77;
-- the update leaves the session's settings as they were
SHOW row_security;
DELETE FROM shardid.shard_registry WHERE shard = 77;
DROP SCHEMA up_floor CASCADE;
SELECT * FROM differs_from_fresh;
-- the same from 1.3 (installed as 1.2 and the released update to 1.3)
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT * FROM differs_from_fresh;
-- and 1.0 through 1.1, 1.2 and 1.3, one release at a time
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.0';
ALTER EXTENSION shardid UPDATE TO '1.1';
ALTER EXTENSION shardid UPDATE TO '1.2';
ALTER EXTENSION shardid UPDATE TO '1.3';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT * FROM differs_from_fresh;

-- the schema is fixed: DEFAULTs name shardid.next_id()
ALTER EXTENSION shardid SET SCHEMA public;
DROP EXTENSION shardid;
CREATE SCHEMA elsewhere;
CREATE EXTENSION shardid SCHEMA elsewhere;
DROP SCHEMA elsewhere;
-- without CASCADE, a table whose DEFAULT uses next_id() keeps it installed
CREATE EXTENSION shardid;
CREATE SEQUENCE up_seq;
CREATE TABLE up_t (id bigint DEFAULT shardid.next_id(1, nextval('up_seq')));
DROP EXTENSION shardid;
DROP TABLE up_t;
DROP SEQUENCE up_seq;
-- an unknown version is refused
ALTER EXTENSION shardid UPDATE TO '9.9';

-- the update from 1.2 runs section 0 first as well: it refuses a schema that
-- holds anything that is not shardid's
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.2';
CREATE FUNCTION shardid.planted() RETURNS integer LANGUAGE sql AS 'SELECT 1';
\set VERBOSITY terse
ALTER EXTENSION shardid UPDATE;
\set VERBOSITY default
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
DROP FUNCTION shardid.planted();
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';

-- schema shardid_internal is made by the install or update (1.4): one that
-- exists already is refused, a superuser's and empty or not (no CONTEXT:
-- from PostgreSQL 17 on it quotes the script)
\set SHOW_CONTEXT never
DROP EXTENSION shardid;
CREATE SCHEMA shardid_internal;
CREATE EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.3';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
DROP SCHEMA shardid_internal;
CREATE ROLE regress_shardid_internal;
CREATE SCHEMA shardid_internal AUTHORIZATION regress_shardid_internal;
CREATE FUNCTION shardid_internal.doctor_mark() RETURNS integer LANGUAGE sql AS 'SELECT 1';
ALTER FUNCTION shardid_internal.doctor_mark() OWNER TO regress_shardid_internal;
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
\set SHOW_CONTEXT errors
DROP SCHEMA shardid_internal CASCADE;
DROP ROLE regress_shardid_internal;
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- nothing but shardid's own in shardid_internal either: doctor() and the
-- end of every install and update (check_no_foreign_objects()) name it
CREATE FUNCTION shardid_internal.planted() RETURNS integer LANGUAGE sql AS 'SELECT 1';
SELECT * FROM shardid_internal.foreign_objects();
SELECT shardid.check_no_foreign_objects();
DROP FUNCTION shardid_internal.planted();

-- a 1.0 database with logical shards: the update registers each shard that
-- exactly one schema claims, and leaves the ambiguous ones to doctor()
DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.0';
CREATE SCHEMA up_a;
CREATE TABLE up_a.t (id bigint DEFAULT shardid.next_id(10, 1));
CREATE TABLE up_a.u (id bigint DEFAULT shardid.next_id(10, 2));
CREATE SCHEMA up_b;
CREATE TABLE up_b.t (id bigint DEFAULT shardid.next_id(11, 1));
CREATE SCHEMA up_c;
CREATE TABLE up_c.t (id bigint DEFAULT shardid.next_id(11, 1));
CREATE SCHEMA up_d;
CREATE TABLE up_d.t (id bigint DEFAULT shardid.next_id(12, 1));
CREATE TABLE up_d.u (id bigint DEFAULT shardid.next_id(13, 1));
ALTER EXTENSION shardid UPDATE;
SELECT shard, schema_name FROM shardid.shard_registry ORDER BY shard;
SELECT shardid.shard_schema(10), shardid.shard_schema(11), shardid.shard_schema(12);
DROP SCHEMA up_a, up_b, up_c, up_d CASCADE;
DROP EXTENSION shardid;
CREATE EXTENSION shardid;
