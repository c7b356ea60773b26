/* shardid--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shardid" to load this file. \quit

-- Volatility and parallel labels, in short:
--  * next_id() reads the clock and moves stamping state: VOLATILE.  The
--    two-argument form is PARALLEL UNSAFE because, without shared state, its
--    guard lives in one backend, and a parallel worker is another backend
--    (its nextval() argument is parallel unsafe anyway).  The one-argument
--    form only ever uses shared memory, which every worker sees: SAFE.
--  * make_id(), id_millis(), id_shard(), id_seq() are pure bit arithmetic:
--    IMMUTABLE, usable in indexes, constraints and partition keys.
--  * id_time(), decode(), min_id(), max_id() read the shardid.epoch setting:
--    STABLE, never IMMUTABLE (a different epoch gives a different answer).
--  * Every function is STRICT: NULL in, NULL out.

CREATE FUNCTION next_id(shard integer, seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_next_id'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION next_id(integer, bigint) IS
'new id for a shard: wall clock ms since shardid.epoch, the shard, and seq & 1023; use as a column DEFAULT with nextval()';

CREATE FUNCTION next_id(shard integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_next_id_counter'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION next_id(integer) IS
'new id for a shard with its seq field from a shared counter instead of a sequence; needs shardid in shared_preload_libraries';

CREATE FUNCTION make_id(millis bigint, shard integer, seq bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_make_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION make_id(bigint, integer, bigint) IS
'id packed from explicit ms since shardid.epoch, shard and seq; for backfills and tests';

CREATE FUNCTION id_millis(id bigint)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_id_millis'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_millis(bigint) IS
'time field of an id: ms since shardid.epoch (41 bits, read unsigned)';

CREATE FUNCTION id_shard(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'shardid_id_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_shard(bigint) IS
'shard field of an id (13 bits)';

CREATE FUNCTION id_seq(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'shardid_id_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_seq(bigint) IS
'seq field of an id (10 bits)';

CREATE FUNCTION id_time(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'shardid_id_time'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION id_time(bigint) IS
'moment an id was made: shardid.epoch plus its time field';

CREATE FUNCTION decode(id bigint,
                       OUT created_at timestamptz,
                       OUT shard integer,
                       OUT seq integer,
                       OUT millis bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION decode(bigint) IS
'all fields of an id: SELECT d.* FROM t, shardid.decode(t.id) d';

CREATE FUNCTION min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_min_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION min_id(timestamptz) IS
'smallest id that can carry the millisecond of ts; WHERE id BETWEEN min_id(a) AND max_id(b) scans the primary key';

CREATE FUNCTION max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'shardid_max_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION max_id(timestamptz) IS
'largest id that can carry the millisecond of ts';

CREATE FUNCTION info(OUT epoch timestamptz,
                     OUT epoch_ms bigint,
                     OUT layout text,
                     OUT max_shard integer,
                     OUT ids_per_ms_per_shard integer,
                     OUT sign_bit_at timestamptz,
                     OUT time_field_ends_at timestamptz,
                     OUT mode text,
                     OUT shared_memory text,
                     OUT max_lead_ms integer,
                     OUT clock_waits bigint,
                     OUT clock_behind_calls bigint,
                     OUT max_clock_step_back_ms bigint,
                     OUT seeded_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION info() IS
'the epoch, the id layout, the uniqueness mode in force and counters of how stamping went';
