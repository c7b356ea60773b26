-- Install and update paths, tested the way contrib does it: every released
-- version can be installed, and ALTER EXTENSION ... UPDATE brings it to the
-- default version with the same objects as a fresh install.
SELECT name, version, superuser, trusted, relocatable, schema
FROM pg_available_extension_versions WHERE name = 'shardid' ORDER BY version;

-- the objects of a fresh install
SELECT pg_describe_object(classid, objid, 0) AS object
FROM pg_depend
WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid') AND deptype = 'e'
ORDER BY 1;
CREATE TEMP TABLE fresh AS
SELECT pg_describe_object(classid, objid, 0) AS object
FROM pg_depend
WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid') AND deptype = 'e';

DROP EXTENSION shardid;
CREATE EXTENSION shardid VERSION '1.0';
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
-- the same objects as a fresh install, none missing, none extra
(SELECT object FROM fresh
 EXCEPT
 SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid') AND deptype = 'e')
UNION ALL
(SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
 WHERE refobjid = (SELECT oid FROM pg_extension WHERE extname = 'shardid') AND deptype = 'e'
 EXCEPT
 SELECT object FROM fresh);

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
