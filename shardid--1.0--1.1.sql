/* shardid--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.1'" to load this file. \quit

-- Release 1.1.  A fresh CREATE EXTENSION runs shardid--1.0.sql and then this
-- script, so a new install and an updated one are the same by construction;
-- sql/upgrade.sql checks it.

-- =====================================================================
-- 1. Schema ownership and privileges
-- =====================================================================

-- =====================================================================
-- 2. Shard registry, catalog of id DEFAULTs, routing, provisioning, doctor
-- =====================================================================

-- =====================================================================
-- 3. Durable high-water mark and the epoch of the ids
-- =====================================================================

-- =====================================================================
-- 4. Move journal (shardid-move)
-- =====================================================================
