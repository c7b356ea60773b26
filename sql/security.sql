-- Attacks of an ordinary role on the administrators who run shardid's
-- functions, each carried out for real; after each, nobody gained a
-- privilege and the answers are right.  See README, Security.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SELECT current_user AS "ROLE_NAME", current_database() AS "DB_NAME" \gset
CREATE ROLE regress_alice LOGIN;
CREATE ROLE regress_bob LOGIN;
CREATE ROLE regress_carol LOGIN;
CREATE ROLE regress_admin LOGIN;
CREATE DATABASE regress_shardid_appdb OWNER regress_alice;
-- who is superuser now
\set superusers 'SELECT rolname, rolsuper FROM pg_roles WHERE rolname LIKE ''regress\\_%'' ORDER BY 1'
:superusers;

-- 1. Planted overloads.  1.0 and 1.1 were trusted: a database owner who
-- installed them owned schema shardid, for good (1.0) or until her
-- transaction ended (1.1).  From 1.2 on only superusers install and update
-- shardid.  Here a superuser installs 1.0 and gives the schema to alice, as
-- her own install did.  She plants overloads that make her superuser when a
-- superuser calls them with an untyped literal, an operator that the
-- update's own comparisons of regtype values would run, adds a function to
-- the extension, and lets bob create there, who lets carol.
\c regress_shardid_appdb regress_alice
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid VERSION '1.0';
CREATE EXTENSION shardid;
\c - :ROLE_NAME
SET client_min_messages = warning;
CREATE EXTENSION shardid VERSION '1.0';
ALTER SCHEMA shardid OWNER TO regress_alice;
-- (there is no ALTER EXTENSION ... OWNER; her install made her the owner)
UPDATE pg_extension SET extowner = 'regress_alice'::regrole WHERE extname = 'shardid';
-- (alice.ran counts the calls of her code: a sequence, which no rollback
-- undoes)
CREATE SCHEMA alice AUTHORIZATION regress_alice;
\c - regress_alice
SET client_min_messages = warning;
\set SHOW_CONTEXT never
SELECT pg_get_userbyid(nspowner) = current_user AS alice_owns_schema FROM pg_namespace WHERE nspname = 'shardid';
CREATE SEQUENCE alice.ran;
GRANT USAGE ON SEQUENCE alice.ran TO PUBLIC;
CREATE FUNCTION alice.escalate() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('alice.ran');
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_alice SUPERUSER';
    END IF;
END $$;
CREATE FUNCTION shardid.min_id(ts text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM alice.escalate(); RETURN 0; END $$;
CREATE FUNCTION shardid.id_shard(id integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN PERFORM alice.escalate(); RETURN 0; END $$;
CREATE FUNCTION alice.regtypeeq(regtype, regtype) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM alice.escalate(); RETURN $1::oid OPERATOR(pg_catalog.=) $2::oid; END $$;
CREATE OPERATOR shardid.= (LEFTARG = regtype, RIGHTARG = regtype, FUNCTION = alice.regtypeeq);
ALTER EXTENSION shardid ADD FUNCTION shardid.id_shard(integer);
GRANT CREATE ON SCHEMA shardid TO regress_bob WITH GRANT OPTION;
\c - regress_bob
SET client_min_messages = warning;
\set SHOW_CONTEXT never
GRANT CREATE ON SCHEMA shardid TO regress_carol;
-- alice may not update it any more
\c - regress_alice
SET client_min_messages = warning;
\set SHOW_CONTEXT never
ALTER EXTENSION shardid UPDATE;
-- the superuser's update refuses a schema another role owns or may create
-- in, before anything else runs: taking it over in the update's own
-- transaction would leave alice the owner for every other session until
-- the update commits.  It says what to run first.
\c - :ROLE_NAME
SET client_min_messages = warning;
\set SHOW_CONTEXT never
ALTER EXTENSION shardid UPDATE;
ALTER SCHEMA shardid OWNER TO :"ROLE_NAME";
ALTER EXTENSION shardid UPDATE;
REVOKE ALL ON SCHEMA shardid FROM regress_bob, regress_carol CASCADE;
-- then it refuses to run over objects it did not make; none of them ran
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT is_called AS alice_code_ran FROM alice.ran;
-- a superuser removes them; then the update goes through
ALTER EXTENSION shardid DROP FUNCTION shardid.id_shard(integer);
DROP FUNCTION shardid.min_id(text), shardid.id_shard(integer);
DROP OPERATOR shardid.= (regtype, regtype);
ALTER EXTENSION shardid UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT is_called AS alice_code_ran FROM alice.ran;
-- the schema belongs to a superuser, only USAGE for others
SELECT pg_get_userbyid(nspowner) = current_user AS updater_owns_schema,
       (SELECT array_agg(format('%s:%s', CASE a.grantee WHEN 0 THEN 'PUBLIC' WHEN nspowner THEN 'owner'
                                         ELSE pg_get_userbyid(a.grantee)::text END, a.privilege_type)
                         ORDER BY 1)
        FROM aclexplode(nspacl) a) AS privileges
FROM pg_namespace WHERE nspname = 'shardid';
-- and so does the extension: alice can no longer drop it with CASCADE
SELECT pg_get_userbyid(extowner) = current_user AS updater_owns_extension
FROM pg_extension WHERE extname = 'shardid';
-- and nobody but a superuser can create, replace or drop anything in it
\c - regress_alice
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE FUNCTION shardid.min_id(ts text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE OR REPLACE FUNCTION shardid.id_shard(id bigint) RETURNS integer LANGUAGE sql AS 'SELECT 0';
CREATE TABLE shardid.t (id int);
CREATE VIEW shardid.v AS SELECT 1 AS one;
DROP FUNCTION shardid.id_time(bigint);
DROP VIEW shardid.shards;
ALTER SCHEMA shardid OWNER TO regress_alice;
ALTER SCHEMA shardid RENAME TO mine;
GRANT CREATE ON SCHEMA shardid TO regress_alice;
DROP EXTENSION shardid CASCADE;
\c - regress_carol
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE FUNCTION shardid.id_shard(id integer) RETURNS integer LANGUAGE sql AS 'SELECT 0';
-- a superuser's calls with untyped literals reach shardid's own functions
\c - :ROLE_NAME
SET client_min_messages = warning;
\set SHOW_CONTEXT never
SELECT shardid.min_id('2026-11-01') = shardid.min_id('2026-11-01'::timestamptz) AS min_id_own,
       shardid.id_shard(5120) AS shard_5, shardid.id_seq('1025') AS seq_1;
:superusers;

-- doctor() reports anything in the schema that is not shardid's own
CREATE FUNCTION shardid.extra() RETURNS integer LANGUAGE sql AS 'SELECT 1';
SELECT problem, object FROM shardid.doctor() WHERE problem = 'foreign object in schema shardid';
DROP FUNCTION shardid.extra();

-- A schema named shardid made before CREATE EXTENSION is refused when it is
-- another role's, holds anything or lets another role create in it; an
-- empty one of a superuser is used.
DROP EXTENSION shardid;
DROP SCHEMA shardid;
\c - regress_alice
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE SCHEMA shardid;
CREATE FUNCTION shardid.min_id(ts text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE OPERATOR shardid.= (LEFTARG = regtype, RIGHTARG = regtype, FUNCTION = alice.regtypeeq);
\c - :ROLE_NAME
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE EXTENSION shardid;
ALTER SCHEMA shardid OWNER TO :"ROLE_NAME";
CREATE EXTENSION shardid;
DROP FUNCTION shardid.min_id(text);
DROP OPERATOR shardid.= (regtype, regtype);
GRANT CREATE ON SCHEMA shardid TO regress_bob;
CREATE EXTENSION shardid;
REVOKE CREATE ON SCHEMA shardid FROM regress_bob;
CREATE EXTENSION shardid;
SELECT extversion FROM pg_extension WHERE extname = 'shardid';
SELECT is_called AS alice_code_ran FROM alice.ran;
:superusers;

-- 2. doctor() runs no code of the tables' owners.  bob has his own schema
-- and builds traps for an administrator who runs the doctor.
\c - :ROLE_NAME
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE SCHEMA bob AUTHORIZATION regress_bob;
GRANT INSERT, DELETE ON shardid.shard_registry TO regress_admin;
SET ROLE regress_bob;
-- a composite id column with implicit casts to and from bigint
CREATE TYPE bob.evil AS (v bigint);
-- (bob.ran counts the calls of his code: a sequence, which no rollback
-- undoes, as a file written or a program run would not be undone)
CREATE SEQUENCE bob.ran;
GRANT USAGE ON SEQUENCE bob.ran TO PUBLIC;
CREATE FUNCTION bob.escalate() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('bob.ran');
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_bob SUPERUSER';
    END IF;
END $$;
CREATE FUNCTION bob.evil_to_bigint(bob.evil) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN ($1).v; END $$;
CREATE FUNCTION bob.bigint_to_evil(bigint) RETURNS bob.evil LANGUAGE sql AS 'SELECT ROW($1)::bob.evil';
CREATE CAST (bob.evil AS bigint) WITH FUNCTION bob.evil_to_bigint(bob.evil) AS IMPLICIT;
CREATE CAST (bigint AS bob.evil) WITH FUNCTION bob.bigint_to_evil(bigint) AS IMPLICIT;
CREATE TABLE bob.t (id bob.evil DEFAULT shardid.next_id(8000, 1), v int);
INSERT INTO bob.t (v) VALUES (1);
-- operators and functions that shadow pg_catalog's for a search_path
-- that lists bob first
CREATE FUNCTION bob.int4ne(integer, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN $1 OPERATOR(pg_catalog.<>) $2; END $$;
CREATE OPERATOR bob.<> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = bob.int4ne);
CREATE FUNCTION bob.texteq(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR bob.= (LEFTARG = text, RIGHTARG = text, FUNCTION = bob.texteq);
CREATE FUNCTION bob.int4pl(integer, integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN $1 OPERATOR(pg_catalog.+) $2; END $$;
CREATE OPERATOR bob.+ (LEFTARG = integer, RIGHTARG = integer, FUNCTION = bob.int4pl);
CREATE FUNCTION bob.count(bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN 0; END $$;
-- a bigint table with a stray row, so that the doctor reads it, and a
-- row-level security policy for whoever reads it without bypassing RLS
CREATE TABLE bob.r (id bigint DEFAULT shardid.next_id(8001, 1), v int);
INSERT INTO bob.r VALUES (shardid.make_id(0, 8002, 0), 1);
CREATE FUNCTION bob.policy() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM bob.escalate(); RETURN true; END $$;
ALTER TABLE bob.r ENABLE ROW LEVEL SECURITY;
CREATE POLICY spy ON bob.r USING (bob.policy());
GRANT USAGE ON SCHEMA bob TO regress_admin;
GRANT SELECT ON bob.r TO regress_admin;
-- an index predicate and a statistics expression that the planner would
-- evaluate, as whoever plans a query over the table
CREATE FUNCTION bob.pred(integer) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM bob.escalate(); RETURN true; END $$;
CREATE FUNCTION bob.k(integer) RETURNS integer LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN PERFORM bob.escalate(); RETURN $1; END $$;
CREATE TABLE bob.p (id bigint DEFAULT shardid.next_id(8005, 1), v int);
INSERT INTO bob.p VALUES (shardid.make_id(0, 8002, 0), 1);
ALTER SEQUENCE bob.ran RESTART;
CREATE INDEX p_trap ON bob.p (v) WHERE bob.pred(1);
CREATE STATISTICS bob.p_stats ON (v + bob.k(1)), v FROM bob.p;
SELECT setval('bob.ran', 1, false);
-- 3. hostile catalog: a sequence named like a next_id() call, a computed
-- shard, a text id column
CREATE SEQUENCE bob."next_id(9,";
CREATE TABLE bob.s (id bigint DEFAULT shardid.next_id(8003 + 0 * nextval('bob."next_id(9,"')::integer, 1));
CREATE TABLE bob.s2 (id bigint DEFAULT shardid.next_id(8003, nextval('bob."next_id(9,"')));
CREATE TABLE bob.x (id text DEFAULT shardid.next_id(8004, 1));
-- a DEFAULT that calls next_id() for one shard and makes ids of another
CREATE TABLE bob.y (id bigint DEFAULT CASE WHEN false THEN shardid.next_id(8006, 1) ELSE shardid.make_id(0, 8007, 0) END);
RESET ROLE;

-- the superuser runs the doctor with bob's schema first on its path
SET search_path = bob, pg_catalog;
SELECT problem, object FROM shardid.doctor() WHERE object LIKE 'bob.%';
RESET search_path;
-- a non-superuser administrator runs it too: RLS is not applied, the table
-- is reported instead
SET ROLE regress_admin;
SET search_path = bob, pg_catalog;
SELECT problem, object, detail FROM shardid.doctor() WHERE object LIKE 'bob.%';
RESET search_path;
RESET ROLE;
:superusers;
SELECT is_called AS bob_code_ran FROM bob.ran;
-- the catalog reads the calls, not the names
SELECT table_name, shard, sequence_name, column_type FROM shardid.id_defaults
WHERE schema_name = 'bob' ORDER BY table_name;

-- 4. A DEFAULT claiming a shard that lives elsewhere changes no routing.
CREATE SCHEMA tpl;
CREATE TABLE tpl.items (id bigint PRIMARY KEY, name text);
SELECT * FROM shardid.create_shards('tpl', ARRAY[5, 6], use_sequence => true);
SET ROLE regress_bob;
CREATE TABLE bob.c (id bigint DEFAULT shardid.next_id(5, 1));
SELECT shardid.register_shard(5, 'bob');
SELECT shardid.unregister_shard(5);
INSERT INTO shardid.shard_registry VALUES (7, 'bob');
UPDATE shardid.shard_registry SET schema_name = 'bob' WHERE shard = 5;
DELETE FROM shardid.shard_registry WHERE shard = 5;
RESET ROLE;
SELECT shardid.shard_schema(5), shardid.id_schema(shardid.make_id(0, 5, 0)), shardid.id_schema(shardid.make_id(0, 6, 0));
SELECT * FROM shardid.shards ORDER BY shard;
SELECT problem, object FROM shardid.doctor() WHERE problem NOT IN ('epoch not set') AND object NOT LIKE 'bob.%'
UNION ALL
SELECT problem, object FROM shardid.doctor() WHERE object = 'bob.c.id'
ORDER BY 1, 2;
-- a DOMAIN over bigint whose DEFAULT makes shard 5's ids, used by a table
-- outside the shard: doctor() sees the ids it makes
SET ROLE regress_bob;
CREATE DOMAIN bob.id5 AS bigint DEFAULT shardid.next_id(5, 1);
CREATE TABLE bob.d (id bob.id5, v int);
INSERT INTO bob.d (v) VALUES (1);
RESET ROLE;
SELECT table_name, column_type, id_type, via_domain, shard FROM shardid.id_defaults WHERE table_name = 'd';
SELECT problem, object FROM shardid.doctor() WHERE object IN ('bob.d.id', 'domain bob.id5') ORDER BY 1, 2;
-- a partition attached to a shard table has no DEFAULT of its own: its
-- rows are read with the DEFAULT of the table above it
CREATE TABLE shard_0005.events (id bigint DEFAULT shardid.next_id(5, 1), at date) PARTITION BY RANGE (at);
CREATE TABLE bob.events_2026 (id bigint, at date);
INSERT INTO bob.events_2026 VALUES (shardid.make_id(0, 9, 0), '2026-06-01');
ALTER TABLE shard_0005.events ATTACH PARTITION bob.events_2026 FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
SELECT problem, object, detail FROM shardid.doctor() WHERE object LIKE '%events%';
DROP TABLE shard_0005.events;
DROP TABLE bob.d;
DROP DOMAIN bob.id5;

-- 5. Provisioning under a hostile search_path runs pg_catalog's operators
SET search_path = bob, pg_catalog;
CALL shardid.provision_shards('tpl', ARRAY[20, 21], use_sequence => true);
CALL shardid.provision_shards('tpl', 20, 22, use_sequence => true);
CALL shardid.add_shards('tpl', '{20, 21}', use_sequence => true);
CALL shardid.add_shards('tpl', first_shard => 20, last_shard => 22, in_batches => false, use_sequence => true);
RESET search_path;
:superusers;
SELECT is_called AS bob_code_ran FROM bob.ran;
-- a schema of another role is not made a shard
GRANT CREATE ON DATABASE regress_shardid_appdb TO regress_bob;
SET ROLE regress_bob;
CREATE SCHEMA shard_0030;
GRANT USAGE, CREATE ON SCHEMA shard_0030 TO PUBLIC;
RESET ROLE;
SELECT * FROM shardid.create_shards('tpl', ARRAY[30], use_sequence => true);
SELECT count(*) FROM pg_class WHERE relnamespace = 'shard_0030'::regnamespace;

-- a template of another role is refused: copying it would build its
-- indexes, and so run its owner's index predicate
SET ROLE regress_bob;
CREATE SCHEMA bob_tpl;
CREATE TABLE bob_tpl.items (id bigint PRIMARY KEY, v int);
CREATE INDEX items_trap ON bob_tpl.items (v) WHERE bob.pred(1);
SELECT setval('bob.ran', 1, false);
RESET ROLE;
SELECT * FROM shardid.create_shards('bob_tpl', ARRAY[31], use_sequence => true);
SELECT * FROM shardid.create_shards('tpl', ARRAY[31], prefix => 'ok_', use_sequence => true);
SELECT is_called AS bob_code_ran FROM bob.ran;
:superusers;

-- 6. An update from 1.0 registers only the shards of schemas of superusers
-- and of the database owner: bob's claim neither registers his schema nor
-- keeps the real shard from being registered.
\c - :ROLE_NAME
SET client_min_messages = warning;
\set SHOW_CONTEXT never
CREATE DATABASE regress_shardid_update;
\c regress_shardid_update
SET client_min_messages = warning;
CREATE EXTENSION shardid VERSION '1.0';
CREATE SCHEMA s12;
CREATE TABLE s12.t (id bigint DEFAULT shardid.next_id(12, 1));
CREATE SCHEMA bob AUTHORIZATION regress_bob;
CREATE TABLE bob.t (id bigint DEFAULT shardid.next_id(12, 1));
CREATE TABLE bob.u (id bigint DEFAULT shardid.next_id(13, 1));
ALTER TABLE bob.t OWNER TO regress_bob;
ALTER TABLE bob.u OWNER TO regress_bob;
-- bob's table in the superuser's schema s14 claims shard 12 as well: it
-- vetoed the registration of both s12 and s14 in 1.1, not any more
CREATE SCHEMA s14;
CREATE TABLE s14.t (id bigint DEFAULT shardid.next_id(14, 1));
GRANT CREATE ON SCHEMA s14 TO regress_bob;
SET ROLE regress_bob;
CREATE TABLE s14.bobs (id bigint DEFAULT shardid.next_id(12, 1));
RESET ROLE;
ALTER EXTENSION shardid UPDATE;
SELECT shard, schema_name FROM shardid.shard_registry ORDER BY shard;
\c regress_shardid_appdb :ROLE_NAME

\c :DB_NAME :ROLE_NAME
SET client_min_messages = warning;
DROP DATABASE regress_shardid_update;
DROP DATABASE regress_shardid_appdb;
DROP ROLE regress_alice, regress_bob, regress_carol, regress_admin;
