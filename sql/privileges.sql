-- What an ordinary user can and cannot do.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
\set SHOW_CONTEXT never
SELECT current_user AS "ROLE_NAME", current_database() AS "DB_NAME" \gset

CREATE ROLE regress_shardid_app LOGIN;
CREATE SCHEMA app_s1 AUTHORIZATION regress_shardid_app;
SET ROLE regress_shardid_app;

-- tables with the DEFAULT, the decoders, the helpers: all allowed
CREATE SEQUENCE app_s1.t_id_seq;
CREATE TABLE app_s1.t (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(1, nextval('app_s1.t_id_seq')),
    v  int
);
INSERT INTO app_s1.t (v) SELECT g FROM generate_series(1, 3000) g;
SELECT count(DISTINCT id) AS ids, bool_and(shardid.id_shard(id) = 1) AS shard_1,
       bool_and((shardid.decode(id)).seq = shardid.id_seq(id)) AS decode_ok,
       bool_and(id >= shardid.min_id(now() - interval '1 hour')) AS min_id_ok
FROM app_s1.t;
SELECT max_shard FROM shardid.info();
SELECT shardid.make_id(1, 2, 3);
RESET ROLE;

-- with CREATE on the database, an ordinary user makes schemas, but
-- registering logical shards for routing takes a grant on the registry
GRANT CREATE ON DATABASE :"DB_NAME" TO regress_shardid_app;
SET ROLE regress_shardid_app;
CREATE SCHEMA app_tpl;
CREATE TABLE app_tpl.items (id bigint PRIMARY KEY, name text);
SELECT * FROM shardid.create_shards('app_tpl', ARRAY[11, 12], prefix => 'app_');
SELECT shardid.register_shard(1, 'app_s1');
SELECT shardid.unregister_shard(1);
INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (1, 'app_s1');
RESET ROLE;
GRANT INSERT, DELETE ON shardid.shard_registry TO regress_shardid_app;
SET ROLE regress_shardid_app;
-- with it, it provisions logical shards, reads the catalog of shards and
-- runs the doctor
SELECT * FROM shardid.create_shards('app_tpl', ARRAY[11, 12], prefix => 'app_');
SELECT shardid.register_shard(1, 'app_s1');
SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname LIKE 'app\_00%' ORDER BY 1;
SELECT * FROM shardid.shards WHERE schema_name LIKE 'app\_%' ORDER BY shard;
SELECT shardid.shard_schema(12);
SELECT problem, object FROM shardid.doctor() WHERE object LIKE 'app%';

-- nothing that could make ids collide or decode wrongly
SET shardid.epoch = '0';
ALTER SYSTEM SET shardid.max_lead_ms = 0;
ALTER SYSTEM SET shardid.epoch = '0';
ALTER DATABASE postgres SET shardid.epoch = '0';
-- nor change or shadow the extension's functions
CREATE OR REPLACE FUNCTION shardid.next_id(shard integer, seq bigint) RETURNS bigint
    AS 'SELECT 1::bigint' LANGUAGE sql;
CREATE FUNCTION shardid.next_id(shard bigint, seq bigint) RETURNS bigint
    AS 'SELECT 1::bigint' LANGUAGE sql;
DROP FUNCTION shardid.id_time(bigint);
ALTER FUNCTION shardid.next_id(integer, bigint) VOLATILE;
ALTER EXTENSION shardid UPDATE;
DROP EXTENSION shardid;
RESET ROLE;

-- the extension is trusted: the owner of a database installs it without
-- being a superuser, and still cannot set the epoch
CREATE ROLE regress_shardid_owner LOGIN;
CREATE DATABASE regress_shardid_trusted OWNER regress_shardid_owner;
\c regress_shardid_trusted regress_shardid_owner
SET client_min_messages = warning;
CREATE EXTENSION shardid;
SELECT shardid.id_shard(shardid.next_id(7, 1)) AS shard;
SET shardid.epoch = '0';
SELECT pg_get_userbyid(proowner) = pg_get_userbyid(10) AS functions_owned_by_bootstrap_superuser
FROM pg_proc WHERE proname = 'next_id' LIMIT 1;
\c :DB_NAME :ROLE_NAME
SET client_min_messages = warning;
DROP DATABASE regress_shardid_trusted;
DROP ROLE regress_shardid_owner;
DROP SCHEMA app_s1, app_tpl, app_0011, app_0012 CASCADE;
SELECT shardid.unregister_shard(s) FROM (VALUES (1), (11), (12)) v(s);
REVOKE INSERT, DELETE ON shardid.shard_registry FROM regress_shardid_app;
REVOKE CREATE ON DATABASE :"DB_NAME" FROM regress_shardid_app;
DROP ROLE regress_shardid_app;
