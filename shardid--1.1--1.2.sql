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

-- The durable high-water mark H: raised by hand (superusers, for tools and
-- after pg_upgrade, which does not carry replication origins), and watched
-- by doctor() through mark_status() and stored_newest().

CREATE FUNCTION shardid.raise_high_water(at timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'shardid_raise_high_water_sql'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

REVOKE EXECUTE ON FUNCTION shardid.raise_high_water(timestamptz) FROM PUBLIC;

COMMENT ON FUNCTION shardid.raise_high_water(timestamptz) IS
'superusers: raise the durable high-water mark to at least the given moment (confirmed by the synchronous standbys), so that every id this server makes from now on is later; returns the mark';

CREATE FUNCTION shardid.mark_status(
    OUT high_water_origin boolean,
    OUT epoch_origin boolean,
    OUT high_water_mark timestamptz,
    OUT high_water_ahead_ms bigint,
    OUT origin_slots_setting text,
    OUT origin_slots integer,
    OUT unconfirmed_raises bigint,
    OUT stored_checks bigint,
    OUT stored_moves bigint,
    OUT stored_unindexed bigint,
    OUT stored_too_far bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_mark_status'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION shardid.mark_status() IS
'the durable high-water mark and its origins, the origin slots setting, raises whose confirmation was cut short, and the checks of stored ids since the server started (strict mode)';

CREATE FUNCTION shardid.stored_newest(shard integer,
    OUT newest_id bigint, OUT tables integer, OUT unindexed integer)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_stored_newest_sql'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;

REVOKE EXECUTE ON FUNCTION shardid.stored_newest(integer) FROM PUBLIC;

COMMENT ON FUNCTION shardid.stored_newest(integer) IS
'superusers: the newest id of the shard stored in the tables whose id column has a next_id() DEFAULT of it, read through a plain btree index on the id column; tables read, and tables skipped (no such index, or locked)';

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
