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

-- (section 5: to come)
