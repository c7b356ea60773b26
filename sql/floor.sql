-- The floor of a shard (1.3): raised by every registration and by
-- raise_floor(), read from every id column of the shard's schema (an
-- attached partition, a domain column, explicit ids, a non-unique index),
-- dead rows and other shards' ids skipped, never lowered; who may set it;
-- stored_ids(), shard_state and info().runway.  Ids are made by hand with
-- make_id() in the epoch's first hours, so that every floor lies in the
-- past in both modes.
SET client_min_messages = warning;
\set SHOW_CONTEXT never

CREATE SCHEMA fl_7;
-- a partition created alone, then attached (it has no DEFAULT of its own)
CREATE TABLE fl_7.parted (id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 1), c int)
    PARTITION BY RANGE (id);
CREATE TABLE fl_7.part_a (id bigint NOT NULL, c int);
ALTER TABLE fl_7.parted ATTACH PARTITION fl_7.part_a FOR VALUES FROM (0) TO (MAXVALUE);
CREATE DOMAIN fl_7.id_t AS bigint;
CREATE TABLE fl_7.dom (id fl_7.id_t PRIMARY KEY);
CREATE TABLE fl_7.explicit (id bigint PRIMARY KEY);
CREATE TABLE fl_7.nonunique (id bigint);
CREATE INDEX ON fl_7.nonunique (id DESC);
CREATE TABLE fl_7.noindex (id bigint);
INSERT INTO fl_7.parted VALUES (shardid.make_id(1000, 7, 1), 1);
INSERT INTO fl_7.dom VALUES (shardid.make_id(2000, 7, 2));
-- a row of another shard above the shard's ids, and the newest row deleted
INSERT INTO fl_7.explicit VALUES (shardid.make_id(3000, 7, 3)), (shardid.make_id(900000, 8, 0)),
                                 (shardid.make_id(5000, 7, 5));
DELETE FROM fl_7.explicit WHERE id = shardid.make_id(5000, 7, 5);
INSERT INTO fl_7.nonunique VALUES (shardid.make_id(4000, 7, 4)), (shardid.make_id(4000, 7, 4)), (NULL);
-- not read: no index leads with the column
INSERT INTO fl_7.noindex VALUES (shardid.make_id(99999, 7, 9));

SELECT shardid.register_shard(7, 'fl_7');
SELECT shardid.id_millis(floor_id) AS floor_millis, shardid.id_shard(floor_id) AS floor_shard
FROM shardid.shard_registry WHERE shard = 7;
SELECT tab, id_column, shardid.id_millis(newest_id) AS newest_millis, beyond_id, covered
FROM shardid.stored_ids(7) ORDER BY tab::text, id_column;

-- raise_floor() follows a later row; deleting it does not lower the floor
INSERT INTO fl_7.explicit VALUES (shardid.make_id(6000, 7, 0));
SELECT shardid.id_millis(shardid.raise_floor(7)) AS raised;
DELETE FROM fl_7.explicit WHERE id = shardid.make_id(6000, 7, 0);
SELECT shardid.id_millis(shardid.raise_floor(7)) AS kept;

-- errors: a shard that is not registered; an UPDATE that is not a floor
SELECT shardid.raise_floor(9);
UPDATE shardid.shard_registry SET schema_name = 'public' WHERE shard = 7;
UPDATE shardid.shard_registry SET registered_by = 'nobody' WHERE shard = 7;

-- a floor given by a superuser is kept (a restore of the registry's rows),
-- unless it is no id of the shard
CREATE SCHEMA fl_12;
INSERT INTO shardid.shard_registry (shard, schema_name, floor_id)
VALUES (12, 'fl_12', shardid.make_id(7000, 12, 0));
CREATE SCHEMA fl_13;
INSERT INTO shardid.shard_registry (shard, schema_name, floor_id)
VALUES (13, 'fl_13', shardid.make_id(7000, 12, 0));
SELECT shard, shardid.id_millis(floor_id) AS floor_millis FROM shardid.shard_registry
WHERE shard IN (12, 13) ORDER BY 1;

-- a registry writer who is no superuser: its floor is not taken, and
-- raise_floor() and stored_ids() are for superusers
CREATE ROLE regress_shardid_floor;
GRANT INSERT, DELETE ON shardid.shard_registry TO regress_shardid_floor;
CREATE SCHEMA fl_11;
GRANT USAGE ON SCHEMA fl_11 TO regress_shardid_floor;
-- reading ids is reading rows: a table it may not read is refused
CREATE TABLE fl_11.private (card bigint PRIMARY KEY);
SET ROLE regress_shardid_floor;
INSERT INTO shardid.shard_registry (shard, schema_name, floor_id)
VALUES (11, 'fl_11', 9223372036854775807);
RESET ROLE;
GRANT SELECT ON fl_11.private TO regress_shardid_floor;
SET ROLE regress_shardid_floor;
INSERT INTO shardid.shard_registry (shard, schema_name, floor_id)
VALUES (11, 'fl_11', 9223372036854775807);
SELECT shardid.raise_floor(11);
SELECT * FROM shardid.stored_ids(11);
UPDATE shardid.shard_registry SET floor_id = 1 WHERE shard = 11;
RESET ROLE;
SELECT shard, floor_id FROM shardid.shard_registry WHERE shard = 11;

-- shard_state: every registered shard, its floor; info() has the runway
SELECT shard, schema_name, shardid.id_millis(floor_id) AS floor_millis,
       floor_time = shardid.id_time(floor_id) AS floor_time_ok,
       (last_id IS NULL) = ((SELECT mode FROM shardid.info()) = 'session') AS state_by_mode
FROM shardid.shard_state WHERE shard IN (7, 11, 12, 13) ORDER BY 1;
SELECT abs(extract(epoch FROM runway - (sign_bit_at - clock_timestamp()))) < 1 AS runway_ok
FROM shardid.info();

-- an id 30 days ahead (any role that may insert can store one): reported,
-- never followed, and the newest id within the bound is still found
INSERT INTO fl_7.explicit
VALUES (shardid.make_id(shardid.id_millis(shardid.min_id(now() + interval '30 days')), 7, 0));
SET client_min_messages = error;
SELECT shardid.id_millis(shardid.raise_floor(7)) AS not_followed;
SET client_min_messages = warning;
SELECT tab, beyond_id IS NOT NULL AS beyond, shardid.id_millis(newest_id) AS newest_millis
FROM shardid.stored_ids(7) WHERE tab = 'fl_7.explicit'::regclass;
SELECT problem, object FROM shardid.doctor()
WHERE problem = 'stored id beyond the bound';

DELETE FROM shardid.shard_registry WHERE shard IN (7, 11, 12, 13);
DROP SCHEMA fl_7, fl_11, fl_12, fl_13 CASCADE;
REVOKE ALL ON shardid.shard_registry FROM regress_shardid_floor;
DROP ROLE regress_shardid_floor;

-- 1.4: the id column at any key position of a btree index is read.
-- PRIMARY KEY (tenant_id, id), the multi-tenant key: registration reads it
-- (1.3 left the floor NULL), and so does an index built later (event
-- trigger shardid_floor: the moment a restore's post-data section gives)
CREATE SCHEMA fl_20;
CREATE TABLE fl_20.t (tenant_id bigint, id bigint DEFAULT shardid.next_id(20), PRIMARY KEY (tenant_id, id));
INSERT INTO fl_20.t VALUES (1, shardid.make_id(5000, 20, 3)), (9, shardid.make_id(4000, 20, 1)),
                           (2, shardid.make_id(6000, 21, 0));
SELECT shardid.register_shard(20, 'fl_20');
SELECT shard, shardid.id_millis(floor_id) AS floor_millis, shardid.id_seq(floor_id) AS floor_seq
FROM shardid.shard_registry WHERE shard = 20;
CREATE TABLE fl_20.u (id bigint DEFAULT shardid.next_id(20), v int);
INSERT INTO fl_20.u VALUES (shardid.make_id(7000, 20, 5), 1);
SELECT shardid.id_millis(floor_id) AS before_index FROM shardid.shard_registry WHERE shard = 20;
CREATE UNIQUE INDEX ON fl_20.u (v, id);
SELECT shardid.id_millis(floor_id) AS after_index FROM shardid.shard_registry WHERE shard = 20;
INSERT INTO fl_20.u VALUES (shardid.make_id(8000, 20, 0), 2);
ALTER TABLE fl_20.u ADD PRIMARY KEY (id);
SELECT shardid.id_millis(floor_id) AS after_key FROM shardid.shard_registry WHERE shard = 20;
SELECT tab, id_column, shardid.id_millis(newest_id) AS newest_millis FROM shardid.stored_ids(20) ORDER BY 1, 2;
-- a table with rows moved into the shard's schema (ALTER TABLE ... SET SCHEMA)
CREATE TABLE public.fl_20_moved (id bigint PRIMARY KEY);
INSERT INTO public.fl_20_moved VALUES (shardid.make_id(9000, 20, 0));
ALTER TABLE public.fl_20_moved SET SCHEMA fl_20;
SELECT shardid.id_millis(floor_id) AS after_set_schema FROM shardid.shard_registry WHERE shard = 20;

-- shapes the floor cannot read are refused at registration, each with its
-- reason and the statement that fixes it (a table with a primary key gets
-- an index, not a second primary key), and doctor(scan_rows => false)
-- names them
CREATE SCHEMA fl_21;
CREATE TABLE fl_21.hashed (id bigint DEFAULT shardid.next_id(21));
CREATE INDEX ON fl_21.hashed USING hash (id);
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.hashed;
CREATE TABLE fl_21.partial (k int PRIMARY KEY, id bigint DEFAULT shardid.next_id(21));
CREATE UNIQUE INDEX ON fl_21.partial (id) WHERE id > 0;
SELECT shardid.register_shard(21, 'fl_21');
SELECT problem, object, fix FROM shardid.doctor(scan_rows => false)
WHERE object LIKE 'fl_21.%' AND problem = 'id column the floor cannot read';
DROP TABLE fl_21.partial;
CREATE TABLE fl_21.expr (id bigint DEFAULT shardid.next_id(21));
CREATE UNIQUE INDEX ON fl_21.expr ((id + 0));
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.expr;
CREATE TABLE fl_21.brin (id bigint DEFAULT shardid.next_id(21));
CREATE INDEX ON fl_21.brin USING brin (id);
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.brin;
CREATE TABLE fl_21.bare (id bigint DEFAULT shardid.next_id(21));
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.bare;
CREATE TABLE fl_21.num (id numeric(20) PRIMARY KEY DEFAULT shardid.next_id(21));
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.num;
CREATE TABLE fl_21.txt (id text PRIMARY KEY DEFAULT shardid.next_id(21));
SELECT shardid.register_shard(21, 'fl_21');
DROP TABLE fl_21.txt;
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 21;
-- a readable shape registers
CREATE TABLE fl_21.ok (tenant_id int, id bigint DEFAULT shardid.next_id(21), PRIMARY KEY (tenant_id, id));
SELECT shardid.register_shard(21, 'fl_21');
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 21;

DELETE FROM shardid.shard_registry WHERE shard IN (20, 21);
DROP SCHEMA fl_20, fl_21 CASCADE;

-- provisioning reads the template's id columns before it makes anything,
-- and registers a schema it made without searching it again: a template
-- whose id column no index reads is refused, naming the template's table
CREATE SCHEMA fl_tmpl;
CREATE TABLE fl_tmpl.bare (id bigint, v text);
CALL shardid.add_shards('fl_tmpl', '{22}', in_batches => false, prefix => 'fl_p_');
SELECT count(*) AS made FROM pg_namespace WHERE nspname = 'fl_p_0022';
ALTER TABLE fl_tmpl.bare ADD PRIMARY KEY (id);
-- another column of the template with a next_id() DEFAULT is read in the
-- template, whose indexes every copy gets
ALTER TABLE fl_tmpl.bare ADD COLUMN other bigint DEFAULT shardid.next_id(0);
CREATE INDEX ON fl_tmpl.bare USING hash (other);
CALL shardid.add_shards('fl_tmpl', '{22}', in_batches => false, prefix => 'fl_p_');
SELECT count(*) AS made FROM pg_namespace WHERE nspname = 'fl_p_0022';
ALTER TABLE fl_tmpl.bare DROP COLUMN other;
CALL shardid.add_shards('fl_tmpl', '{22}', in_batches => false, prefix => 'fl_p_');
SELECT shard, schema_name FROM shardid.shard_registry WHERE shard = 22;
-- an existing schema is searched whole: a table made in it by hand
CREATE SCHEMA fl_p_0023;
CREATE TABLE fl_p_0023.hand (id bigint DEFAULT shardid.next_id(23));
CALL shardid.add_shards('fl_tmpl', '{23}', in_batches => false, prefix => 'fl_p_');
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 23;
DELETE FROM shardid.shard_registry WHERE shard IN (22, 23);
DROP SCHEMA fl_tmpl, fl_p_0022, fl_p_0023 CASCADE;

-- a template changed while its copies are made (another session can do
-- it between add_shards()'s read of the template and its copy; here an
-- event trigger does it at the first copy): the copy's id column is the
-- one its DEFAULT was given, read by name
CREATE SCHEMA fl_tmpl;
CREATE TABLE fl_tmpl.a (note text);
CREATE TABLE fl_tmpl.t (id bigint PRIMARY KEY, other bigint);
CREATE FUNCTION public.fl_change() RETURNS event_trigger LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
    IF to_regclass('fl_tmpl.t') IS NULL THEN
        RETURN;
    ELSIF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'fl_tmpl.t'::regclass AND attname = 'other') THEN
        ALTER TABLE fl_tmpl.t RENAME id TO x;
        ALTER TABLE fl_tmpl.t RENAME other TO id;
    ELSIF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'fl_tmpl.t'::regclass AND attname = 'pad' AND NOT attisdropped) THEN
        ALTER TABLE fl_tmpl.t DROP COLUMN pad;
        ALTER TABLE fl_tmpl.t DROP CONSTRAINT t_pkey;
    END IF;
END
$$;
CREATE EVENT TRIGGER fl_change ON ddl_command_start WHEN TAG IN ('CREATE TABLE')
    EXECUTE FUNCTION public.fl_change();
-- the id column renamed away, another column renamed id
CALL shardid.add_shards('fl_tmpl', '{24}', in_batches => false, prefix => 'fl_p_');
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 24;
DELETE FROM shardid.shard_registry WHERE shard = 24;
DROP SCHEMA IF EXISTS fl_p_0024 CASCADE;
-- a column before the id column dropped, and the id column's index
DROP TABLE fl_tmpl.t;
CREATE TABLE fl_tmpl.t (pad int, id bigint PRIMARY KEY);
CALL shardid.add_shards('fl_tmpl', '{24}', in_batches => false, prefix => 'fl_p_');
SELECT count(*) AS registered FROM shardid.shard_registry WHERE shard = 24;
DROP EVENT TRIGGER fl_change;
DROP FUNCTION public.fl_change();
DELETE FROM shardid.shard_registry WHERE shard = 24;
DROP SCHEMA IF EXISTS fl_p_0024 CASCADE;
DROP SCHEMA fl_tmpl CASCADE;

-- the next_id() columns read in the template are those of the tables it
-- copies: a partitioned table and its partitions are not copied, and a
-- column of theirs that no index reads is no shard's
CREATE SCHEMA fl_tmpl;
CREATE TABLE fl_tmpl.u (id bigint PRIMARY KEY);
CREATE TABLE fl_tmpl.ev (ref bigint DEFAULT shardid.next_id(0), at date) PARTITION BY RANGE (at);
CREATE TABLE fl_tmpl.ev_2026 PARTITION OF fl_tmpl.ev FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
CALL shardid.add_shards('fl_tmpl', '{25}', in_batches => false, prefix => 'fl_p_');
SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'fl_p_0025'::regnamespace AND c.relkind = 'r';
-- the same column in a table it copies is refused
CREATE TABLE fl_tmpl.w (id bigint PRIMARY KEY, ref bigint DEFAULT shardid.next_id(0));
CALL shardid.add_shards('fl_tmpl', '{26}', in_batches => false, prefix => 'fl_p_');
SELECT shard, schema_name FROM shardid.shard_registry WHERE shard IN (25, 26) ORDER BY shard;
DELETE FROM shardid.shard_registry WHERE shard = 25;
DROP SCHEMA fl_tmpl, fl_p_0025 CASCADE;
