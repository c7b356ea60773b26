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

-- (section 0: to come)

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

-- The refusal of shardid-move's guard trigger says where the shard goes or
-- went: the peer (host, port and database, never a password) recorded by
-- the journal row of this server.  SECURITY DEFINER, owned by the
-- installing superuser, with a fixed search_path: a writer that hits the
-- refusal need not be able to read the journal, and nothing in it resolves
-- through a schema another role can create in.
CREATE OR REPLACE FUNCTION shardid.move_guard()
RETURNS trigger
AS $$
DECLARE
    j record;
BEGIN
    SELECT m.side, m.phase, m.peer INTO j
    FROM shardid.move_journal m
    WHERE m.shard OPERATOR(pg_catalog.=) TG_ARGV[0]::integer
    ORDER BY m.updated_at DESC
    LIMIT 1;
    IF j.side OPERATOR(pg_catalog.=) 'source' AND j.phase OPERATOR(pg_catalog.=) 'moved-away' THEN
        RAISE EXCEPTION 'shard % has moved to another server', TG_ARGV[0]
            USING ERRCODE = 'read_only_sql_transaction',
                  DETAIL = pg_catalog.format('Shard %s lives on %s now.', TG_ARGV[0], j.peer),
                  HINT = 'Route the shard to the server it moved to.';
    ELSIF j.side OPERATOR(pg_catalog.=) 'source' AND j.phase OPERATOR(pg_catalog.<>) 'aborted' THEN
        RAISE EXCEPTION 'shard % is being moved to another server', TG_ARGV[0]
            USING ERRCODE = 'read_only_sql_transaction',
                  DETAIL = pg_catalog.format('Shard %s moves to %s.', TG_ARGV[0], j.peer),
                  HINT = 'Retry against the server the shard moves to once the move is done.';
    ELSIF j.side OPERATOR(pg_catalog.=) 'target' AND j.phase OPERATOR(pg_catalog.<>) 'aborted' THEN
        RAISE EXCEPTION 'shard % is being moved to another server', TG_ARGV[0]
            USING ERRCODE = 'read_only_sql_transaction',
                  DETAIL = pg_catalog.format('This server receives shard %s from %s; it takes writes once the move is done.',
                                             TG_ARGV[0], j.peer),
                  HINT = 'Retry against the server the shard moves to once the move is done.';
    END IF;
    RAISE EXCEPTION 'shard % is being moved to another server', TG_ARGV[0]
        USING ERRCODE = 'read_only_sql_transaction',
              HINT = 'Retry against the server the shard moves to once the move is done.';
END
$$ LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid.move_guard() IS
'trigger of shardid-move: refuses writes to the tables of a shard that is moving or has moved away, naming the other server';
