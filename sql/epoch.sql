-- The shardid.epoch setting: the forms it takes, what it rejects, and who
-- may change it.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the epoch in force: the server's (make installcheck runs on any server),
-- else the built-in default 2026-01-01 00:00:00+00, which test/run.sh's
-- servers keep (test/session/epoch_default.sh checks its values); info()
-- tells the setting SHOW gives, its milliseconds since 1970 too
SELECT current_setting('shardid.epoch') AS epoch, epoch AS epoch_at FROM shardid.info() \gset
SELECT i.epoch = CASE WHEN s.setting ~ '^[0-9]+$' THEN to_timestamp(s.setting::numeric / 1000)
                      ELSE s.setting::timestamptz END AS info_is_setting,
       i.epoch_ms = extract(epoch FROM i.epoch) * 1000 AS ms_are_epoch,
       s.source <> 'default' OR s.setting = '2026-01-01 00:00:00+00' AS default_is_2026
FROM shardid.info() i, pg_settings s WHERE s.name = 'shardid.epoch';

-- milliseconds since the Unix epoch: the 2011 function's epoch
SET shardid.epoch = '1314220021721';
SELECT epoch, epoch_ms FROM shardid.info();
SELECT shardid.id_time(shardid.make_id(1387263000, 1341, 5001));

-- the same moment as a timestamp with time zone
SET shardid.epoch = '2011-08-24 21:07:01.721+00';
SELECT epoch, epoch_ms FROM shardid.info();
SET shardid.epoch = '2011-08-24 23:07:01.721+02';
SELECT epoch_ms FROM shardid.info();
SET shardid.epoch = '2011-08-24T21:07:01.721Z';
SELECT epoch_ms FROM shardid.info();
-- without a time zone it means UTC, whatever the session's TimeZone
SET timezone = 'America/New_York';
SET shardid.epoch = '2011-08-24 21:07:01.721';
SELECT epoch_ms FROM shardid.info();
SET timezone = 'UTC';
-- the Unix epoch itself and the latest accepted moment
SET shardid.epoch = '0';
SELECT epoch, sign_bit_at, time_field_ends_at FROM shardid.info();
SET shardid.epoch = '9999-12-31 23:59:59.999+00';
SELECT epoch_ms FROM shardid.info();

-- rejected
SET shardid.epoch = '';
SET shardid.epoch = 'soon';
SET shardid.epoch = '-1';
SET shardid.epoch = '1e12';
SET shardid.epoch = '99999999999999999999';
SET shardid.epoch = '253402300800000';
SET shardid.epoch = '1969-12-31 23:59:59.999+00';
SET shardid.epoch = '2011-08-24 21:07:01.7215+00';
SET shardid.epoch = '2011-02-30 00:00:00+00';
SET shardid.epoch = 'now';
SET shardid.epoch = '12:00 today';
SET shardid.epoch = 'infinity';
SET shardid.epoch = 'epoch';
-- a rejected value leaves the setting as it was
SHOW shardid.epoch;

-- decoding depends on the epoch: id_time() is STABLE, id_millis() IMMUTABLE
RESET shardid.epoch;
SELECT shardid.id_time(shardid.make_id(1000, 0, 0)) - :'epoch_at' AS after_servers_epoch;
SET shardid.epoch = '1314220021721';
SELECT shardid.id_time(shardid.make_id(1000, 0, 0)) AS epoch_2011;
SELECT provolatile, proname FROM pg_proc
WHERE pronamespace = 'shardid'::regnamespace
  AND proname IN ('decode', 'id_millis', 'id_schema', 'id_seq', 'id_shard', 'id_time',
                  'make_id', 'max_id', 'min_id', 'shard_schema')
ORDER BY proname, pronargs;
RESET shardid.epoch;

-- only superusers may change it: an ordinary user must not mint ids that
-- decode wrongly
SELECT current_user AS "ROLE_NAME" \gset
CREATE ROLE regress_shardid_user LOGIN;
SET ROLE regress_shardid_user;
SET shardid.epoch = '0';
SELECT set_config('shardid.epoch', '0', false);
SELECT current_setting('shardid.epoch') = :'epoch' AS unchanged;
RESET ROLE;
ALTER ROLE regress_shardid_user SET shardid.epoch = '0';
SET ROLE regress_shardid_user;
ALTER ROLE regress_shardid_user SET shardid.epoch = '1';
RESET ROLE;
ALTER ROLE regress_shardid_user RESET shardid.epoch;
-- nor by setting it before the library is loaded in a new session: without
-- preloading the value waits in a placeholder and is dropped with a warning
-- when the library loads, with preloading it is refused at once; either way
-- it never takes effect (the messages differ, so they are not shown)
\c - regress_shardid_user
SET client_min_messages = error;
DO $$
BEGIN
    PERFORM set_config('shardid.epoch', '1314220021721', false);
EXCEPTION WHEN insufficient_privilege THEN
    NULL;
END
$$;
SELECT shardid.id_time(0) = :'epoch_at' AS still_servers_epoch;
RESET client_min_messages;
SELECT current_setting('shardid.epoch') = :'epoch' AS unchanged;
\c - :ROLE_NAME
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';
DROP OWNED BY regress_shardid_user;
DROP ROLE regress_shardid_user;

-- the prefix is reserved: once the library is loaded, a misspelt setting is
-- an error, not a placeholder
SELECT shardid.id_millis(0);
SET shardid.epok = '0';

-- info() tells the layout and the limits (the mode is checked in each
-- mode's own suite)
SELECT layout, max_shard, ids_per_ms_per_shard, sign_bit_at - epoch AS sign_bit_after,
       time_field_ends_at - epoch AS time_field_ends_after,
       mode IN ('session', 'strict') AS known_mode
FROM shardid.info();
