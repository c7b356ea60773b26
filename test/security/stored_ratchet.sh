#!/usr/bin/env bash
# A role that may only connect and make temporary tables must not move the
# ids of the server into the future.
#
# Strict mode starts a shard, at its first stamp in a backend (and again
# after any relation cache invalidation), past the newest id stored in the
# tables whose id column has a next_id() DEFAULT of that shard (stored.c),
# and follows an id up to a day ahead of max(clock, H); following it raises
# the durable, server-wide high-water mark H.  carol (CONNECT and TEMP, as
# PUBLIC has by default) makes a temporary table of her own with a
# next_id(5) DEFAULT, stores an id of shard 5 a little less than a day
# ahead of H, and calls next_id(5): H moves a day on.  Again and again: each
# step takes a few milliseconds, and in about a minute H is at the sign bit
# (2060 with the default epoch).  After the next restart or failover (H is
# WAL-logged, standbys replay it) every shard of every database starts past
# H: every next_id() fails with "id time is past the range of shardid ids",
# for good (the way out is dropping the replication origin and restarting).
#
# This script does three steps (three days) on a server of its own and
# fails when H, or the ids of another shard after a restart, end up more
# than an hour ahead of the clock.  Exit 0: the attack failed.
SHARDID_TMP=""		# a server of its own: a successful attack spoils H
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server ratchet $((SHARDID_PORT_BASE + 61))
q -c "CREATE ROLE carol LOGIN" >/dev/null
q -d app -c "CREATE EXTENSION shardid" >/dev/null

q -d app -U carol <<'SQL' 2>&1 | grep -v '^$'
CREATE TEMP TABLE t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 1));
DO $$
DECLARE
    h timestamptz;
    e bigint := (SELECT i.epoch_ms FROM shardid.info() i);
BEGIN
    FOR i IN 1 .. 3 LOOP
        h := greatest((SELECT m.high_water_mark FROM shardid.info() m), clock_timestamp());
        INSERT INTO t VALUES (shardid.make_id(
            (extract(epoch FROM h + interval '23 hours 50 minutes') * 1000)::bigint - e, 5, 0));
        ANALYZE t;              -- a relation cache invalidation: look again
        PERFORM shardid.next_id(5, 1);
    END LOOP;
END $$;
SQL
ahead=$(q -d app -c "SELECT round(extract(epoch FROM high_water_mark - clock_timestamp()) / 3600) FROM shardid.info()")
echo "after carol's three steps, H is $ahead hours ahead of the clock"
expect_le "${ahead:-999}" 1 "hours H is ahead of the clock after carol's steps"

cluster_stop ratchet fast
cluster_start ratchet || exit 1
ahead=$(q -d app -c "SELECT round(extract(epoch FROM shardid.id_time(shardid.next_id(7, 1)) - clock_timestamp()) / 3600)")
echo "after a restart, shard 7's next id is $ahead hours ahead of the clock"
expect_le "${ahead:-999}" 1 "hours a superuser's id of shard 7 is ahead of the clock after a restart"
finish
