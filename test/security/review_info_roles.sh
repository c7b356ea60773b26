#!/usr/bin/env bash
# info() and the deprecated mark_status() for a role that may only connect.
#
# info() is EXECUTE to PUBLIC, and 1.3 gave it the durable mark's keepers
# (origins, origin slots, unconfirmed raises, floors), mark_status()'s
# values, which 1.2 gave PUBLIC too.  On a server where shardid is not
# preloaded (session mode before PostgreSQL 17, the shared memory registry
# from 17) and on a preloaded one (strict mode), after ids were made and
# the mark raised: role reader, LOGIN and nothing else, calls both without
# error, and sees what a superuser sees (every column but the two that
# move with the clock, runway and high_water_ahead_ms), nothing more.
SHARDID_TMP=""
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

check() {	# check LABEL: reader and the superuser see the same
	local label=$1 want got
	q -c "CREATE ROLE reader LOGIN" >/dev/null 2>&1
	q >/dev/null <<'SQL' || { fail "$label: setup"; return; }
CREATE EXTENSION shardid;
SELECT shardid.raise_high_water(clock_timestamp());
SQL
	# an id where the mode makes them (session mode needs a DEFAULT per table)
	[ "$2" = "${2#session}" ] && { q -c "SELECT shardid.next_id(3)" >/dev/null || fail "$label: an id"; }
	for f in info mark_status; do
		want=$(q -c "SELECT to_jsonb(i) - 'runway' - 'high_water_ahead_ms' FROM shardid.$f() i")
		# errors are compared, not mark_status()'s WARNING that it is deprecated
		got=$(PGOPTIONS="-c client_min_messages=error" q -d "$PGDATABASE" -U reader \
			-c "SELECT to_jsonb(i) - 'runway' - 'high_water_ahead_ms' FROM shardid.$f() i" 2>&1)
		expect "$got" = "$want" "$label: $f() as reader"
	done
	echo "  | $label: $(q -U reader -c "SELECT mode, origin_slots_setting, floors_applied FROM shardid.info()")"
	expect "$(q -U reader -c "SELECT mode, high_water_origin, epoch_origin, high_water_mark IS NOT NULL FROM shardid.info()")" \
		= "$2" "$label: info() as reader"
}

cluster_init plain $((SHARDID_PORT_BASE + 106)) || exit 1
cluster_start plain || exit 1
use_cluster $((SHARDID_PORT_BASE + 106))
q -c "CREATE DATABASE app" >/dev/null
export PGDATABASE=app
if [ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ]; then mode=strict; else mode=session; fi
check "not preloaded" "$mode|t|t|t"
cluster_stop plain

cluster_init preloaded $((SHARDID_PORT_BASE + 107)) "shared_preload_libraries = 'shardid'" || exit 1
cluster_start preloaded || exit 1
use_cluster $((SHARDID_PORT_BASE + 107))
q -d postgres -c "CREATE DATABASE app" >/dev/null
check "preloaded" "strict|t|t|t"
finish
