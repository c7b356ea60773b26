#!/usr/bin/env bash
# The built-in default of shardid.epoch, 2026-01-01 00:00:00+00, and what
# follows from it, on test/run.sh's shared server, which sets no epoch.  The
# pg_regress suite (sql/) states times relative to the epoch in force so that
# `make installcheck` passes on a server that sets its own; the default's
# literal values are checked here: SHOW, info(), decoding, min_id()/max_id()
# at both ends, their errors, and the doctor's "epoch not set" row in full.
. "$(dirname "$0")/../lib.sh" servers

row() { q -F' | ' -c "SET timezone = 'UTC'" -c "SET datestyle = 'ISO, YMD'" -c "$1" 2>&1; }

expect "$(row "SELECT shardid.max_shard(); SHOW shardid.epoch" | tail -1)" = \
	"2026-01-01 00:00:00+00" "SHOW shardid.epoch"
expect "$(row "SELECT shardid.max_shard(); SELECT source FROM pg_settings WHERE name = 'shardid.epoch'" | tail -1)" = \
	"default" "the source of shardid.epoch (this server must set none)"
expect "$(row "SELECT epoch, epoch_ms, sign_bit_at, time_field_ends_at FROM shardid.info()")" = \
	"2026-01-01 00:00:00+00 | 1767225600000 | 2060-11-03 19:53:47.776+00 | 2095-09-07 15:47:35.552+00" "info()"
expect "$(row "SELECT shardid.id_time(0), shardid.id_time(shardid.make_id(1000, 0, 0)),
	shardid.id_time(shardid.make_id(1000::bigint * 86400 * 365, 3, 9))")" = \
	"2026-01-01 00:00:00+00 | 2026-01-01 00:00:01+00 | 2027-01-01 00:00:00+00" "id_time()"
expect "$(row "SELECT * FROM shardid.decode(shardid.make_id(1387263000, 1341, 5001))")" = \
	"2026-01-17 01:21:03+00 | 1341 | 905 | 1387263000" "decode() of the 2011 write-up's example"
expect "$(row "SELECT created_at FROM shardid.decode(-1)")" = "2095-09-07 15:47:35.551+00" "decode(-1)"
expect "$(row "SELECT shardid.min_id('2026-01-01 00:00:00+00'), shardid.max_id('2026-01-01 00:00:00.0019+00'),
	shardid.max_id('2060-11-03 19:53:47.775+00')")" = "0 | 16777215 | 9223372036854775807" "min_id() and max_id()"
expect "$(row "SELECT shardid.min_id('2025-12-31 23:59:59.999+00')")" = "ERROR:  timestamp is before shardid.epoch
DETAIL:  The timestamp is 2025-12-31 23:59:59.999+00; shardid.epoch is 2026-01-01 00:00:00.000+00.
HINT:  Check the system clock and the shardid.epoch setting." "min_id() before the epoch"
expect "$(row "SELECT shardid.max_id('2060-11-03 19:53:47.776+00')")" = "ERROR:  timestamp is past the range of shardid ids
DETAIL:  Ids made at or after 2060-11-03 19:53:47.776+00 (2^40 ms after shardid.epoch 2026-01-01 00:00:00.000+00) would have the sign bit set and sort before all earlier ids.
HINT:  Check the system clock and the shardid.epoch setting." "max_id() at the sign bit"
# a session's first doctor(), before anything loaded the library
expect "$(row "SELECT problem, object, detail, fix FROM shardid.doctor(scan_rows => false) WHERE problem LIKE 'epoch%'")" = \
	"epoch not set | shardid.epoch | shardid.epoch is at its built-in default (2026-01-01 00:00:00+00); ids of this server decode right only where the same epoch is in force. | Set it explicitly and identically on every server: ALTER SYSTEM SET shardid.epoch = '2026-01-01 00:00:00+00'; SELECT pg_reload_conf();" \
	"the doctor's row of the default epoch"
finish
