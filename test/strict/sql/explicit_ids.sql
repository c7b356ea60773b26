-- Writes of explicit ids raise the shard's floor at their end (strict
-- mode): COPY FROM, INSERT, UPDATE and MERGE that give a column whose
-- DEFAULT calls next_id() values of their own, such as a data-only restore
-- into the existing tables.  Each write below stores an id 1.5 to 2 s ahead
-- of the clock (within what strict mode follows), and the next id of the
-- shard must sort after it.  A write whose ids all come from the DEFAULT
-- reads nothing (the DEBUG1 line shows which writes read the table).
CREATE SCHEMA explicit_731;
CREATE TABLE explicit_731.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(731), v int);
CREATE SEQUENCE explicit_731.k_seq;
CREATE TABLE explicit_731.k (tenant_id bigint, id bigint DEFAULT shardid.next_id(731, nextval('explicit_731.k_seq')),
                             v int, PRIMARY KEY (tenant_id, id));
CREATE DOMAIN explicit_731.dom AS bigint DEFAULT shardid.next_id(731);
CREATE TABLE explicit_731.d (id explicit_731.dom PRIMARY KEY, v int);
CREATE TABLE explicit_731.p (id bigint DEFAULT shardid.next_id(731), v int, PRIMARY KEY (id, v)) PARTITION BY RANGE (v);
CREATE TABLE explicit_731.p1 PARTITION OF explicit_731.p FOR VALUES FROM (0) TO (1000);
SELECT shardid.register_shard(731, 'explicit_731');

-- an id of shard 731, ms milliseconds ahead of the clock
CREATE FUNCTION pg_temp.ahead(ms int) RETURNS bigint LANGUAGE sql AS
$$ SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp())) + ms, 731, 0) $$;
-- whether the next id of the shard sorts after every id of a table
CREATE FUNCTION pg_temp.after(t regclass) RETURNS boolean LANGUAGE plpgsql AS
$$ DECLARE newest bigint; BEGIN
   EXECUTE format('SELECT max(id) FROM %s', t) INTO newest;
   RETURN shardid.next_id(731) > newest; END $$;

SET client_min_messages = debug1;
-- ids from the DEFAULT: nothing is read
INSERT INTO explicit_731.t (v) VALUES (1);
INSERT INTO explicit_731.t (v) VALUES (2), (3);
INSERT INTO explicit_731.t VALUES (DEFAULT, 4), (DEFAULT, 5);
INSERT INTO explicit_731.t (v) SELECT g FROM generate_series(6, 9) g;
INSERT INTO explicit_731.d (v) VALUES (1);
INSERT INTO explicit_731.k (tenant_id, v) VALUES (1, 1);
UPDATE explicit_731.t SET v = v + 100 WHERE v = 9;
COPY explicit_731.t (v) FROM stdin;
10
\.
-- ids of their own known before the write to sort before the shard's new
-- ids: one this server made (a parameter), one of a millisecond long over
SELECT shardid.next_id(731) AS made \gset
PREPARE put_known(bigint, int) AS INSERT INTO explicit_731.t VALUES ($1, $2);
EXECUTE put_known(:made, 23);
INSERT INTO explicit_731.t VALUES (shardid.make_id(1000, 731, 0), 24), (shardid.make_id(1001, 731, 0), 25);
-- explicit ids
INSERT INTO explicit_731.t VALUES (pg_temp.ahead(1500), 11);
RESET client_min_messages;
SELECT pg_temp.after('explicit_731.t') AS after_insert;
SET client_min_messages = debug1;
INSERT INTO explicit_731.t VALUES (DEFAULT, 12), (pg_temp.ahead(1600), 13);
RESET client_min_messages;
SELECT pg_temp.after('explicit_731.t') AS after_values;
PREPARE put(bigint, int) AS INSERT INTO explicit_731.t VALUES ($1, $2);
EXECUTE put(pg_temp.ahead(1700), 14);
SELECT pg_temp.after('explicit_731.t') AS after_prepared;
INSERT INTO explicit_731.t SELECT pg_temp.ahead(1750), 15;
SELECT pg_temp.after('explicit_731.t') AS after_select;
UPDATE explicit_731.t SET id = pg_temp.ahead(1800) WHERE v = 1;
SELECT pg_temp.after('explicit_731.t') AS after_update;
INSERT INTO explicit_731.t VALUES (pg_temp.ahead(1), 2) ON CONFLICT (id) DO NOTHING;
INSERT INTO explicit_731.t VALUES ((SELECT max(id) FROM explicit_731.t), 16)
    ON CONFLICT (id) DO UPDATE SET id = pg_temp.ahead(1850);
SELECT pg_temp.after('explicit_731.t') AS after_on_conflict;
MERGE INTO explicit_731.t t USING (SELECT pg_temp.ahead(1900) AS id, 17 AS v) s ON t.id = s.id
    WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v);
SELECT pg_temp.after('explicit_731.t') AS after_merge;
INSERT INTO explicit_731.k VALUES (2, pg_temp.ahead(1500), 1);
SELECT pg_temp.after('explicit_731.k') AS after_second_key_column;
INSERT INTO explicit_731.d VALUES (pg_temp.ahead(1500), 2);
SELECT pg_temp.after('explicit_731.d') AS after_domain;
INSERT INTO explicit_731.p VALUES (pg_temp.ahead(1500), 1);
SELECT pg_temp.after('explicit_731.p') AS after_partitioned;
-- COPY FROM with the id column, in every form (a DO block's too)
DO $$ BEGIN
  EXECUTE format('COPY explicit_731.t FROM PROGRAM %L (FORMAT csv)', 'echo ' || pg_temp.ahead(1950) || ',19');
END $$;
SELECT pg_temp.after('explicit_731.t') AS after_copy;
DO $$ BEGIN
  EXECUTE format('COPY explicit_731.t (v, id) FROM PROGRAM %L (FORMAT csv)', 'echo 20,' || pg_temp.ahead(1980));
END $$;
SELECT pg_temp.after('explicit_731.t') AS after_copy_columns;
-- a data-modifying WITH
WITH s AS (SELECT pg_temp.ahead(2000) AS id, 21 AS v) INSERT INTO explicit_731.t SELECT id, v FROM s;
SELECT pg_temp.after('explicit_731.t') AS after_cte;
WITH w AS (INSERT INTO explicit_731.t VALUES (pg_temp.ahead(2050), 22) RETURNING id) SELECT count(*) FROM w;
SELECT pg_temp.after('explicit_731.t') AS after_cte_insert;

-- a BEFORE ROW trigger that sets the id, in a table keyed (tenant_id, id):
-- the write is read (the column second in its key by a skip scan)
CREATE FUNCTION explicit_731.set_id() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.id := pg_temp.ahead(2100); RETURN NEW; END $$;
CREATE TRIGGER set_id BEFORE INSERT ON explicit_731.k FOR EACH ROW EXECUTE FUNCTION explicit_731.set_id();
SET client_min_messages = debug1;
INSERT INTO explicit_731.k (tenant_id, v) VALUES (3, 2);
RESET client_min_messages;
SELECT pg_temp.after('explicit_731.k') AS after_trigger_second_key_column;

-- in another table of no registered shard, nothing is read
CREATE TABLE public.explicit_other (id bigint PRIMARY KEY DEFAULT shardid.next_id(731), v int);
INSERT INTO public.explicit_other VALUES (pg_temp.ahead(100), 1);
DROP TABLE public.explicit_other;
DROP SCHEMA explicit_731 CASCADE;
SELECT shardid.unregister_shard(731);
