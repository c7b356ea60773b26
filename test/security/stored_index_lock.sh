#!/usr/bin/env bash
# A table owner cannot make everyone's next_id() wait.
#
# Strict mode reads, at a shard's first stamp in a backend (and again after
# any relation cache invalidation anywhere), the newest id in every table
# whose id column has a next_id() DEFAULT of that shard (stored.c).  It
# locks each table conditionally, but opens each of its indexes with a
# plain, waiting AccessShareLock.  mallory, who may create tables in a
# schema of her own, makes one with a next_id(5) DEFAULT and a primary key
# and runs BEGIN; REINDEX INDEX on it (SHARE on the table, which the
# conditional lock passes, ACCESS EXCLUSIVE on the index).  Every backend's
# next_id(5), the superuser's too, now waits for her transaction; an ANALYZE
# of any table makes every backend look again, so the inserts of shard 5
# everywhere stall as long as she likes (with columns for other shards, all
# of them).  Exit 0: a superuser's next_id(5) answers within 5 s.
SHARDID_TMP=""		# a server of its own, in strict mode
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server lockidx $((SHARDID_PORT_BASE + 62))
q -c "CREATE ROLE mallory LOGIN" >/dev/null
export PGDATABASE=app
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
CREATE SCHEMA mallory AUTHORIZATION mallory;
SET ROLE mallory;
CREATE TABLE mallory.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 1));
SQL

fifo=$SHARDID_TMP/mallory.fifo
rm -f "$fifo"
mkfifo "$fifo"
"$PG_BIN/psql" -X -q -At -U mallory <"$fifo" >"$SHARDID_TMP/mallory.out" 2>&1 &
mallory=$!
exec 7>"$fifo"
echo "BEGIN; REINDEX INDEX mallory.t_pkey; SELECT 'holding';" >&7
wait_until "mallory's REINDEX" grep -q holding "$SHARDID_TMP/mallory.out"

q -c "SET statement_timeout = '5s'" -c "SELECT shardid.next_id(5, 1)" >/dev/null 2>"$SHARDID_TMP/err" ||
	fail "a superuser's next_id(5) while mallory reindexes her table: $(head -1 "$SHARDID_TMP/err")"
echo "ROLLBACK;" >&7
exec 7>&-
wait $mallory
finish
