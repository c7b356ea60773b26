#!/usr/bin/env bash
# test/cluster/move_far_ids.sh: ids that another role stored far ahead do not
# hold a move's cutover.  The cutover waits for the --to server's clock to
# pass the newest id of the shard; in 1.2 that was the newest id of any
# shard in any id column of the shard's tables, so one row inserted by a role
# that may only INSERT into one table, with an id dated 2030, froze the
# shard's writes for the whole --timeout and then failed the move.  Now only
# the shard's own ids count, only up to shardid.max_lead_ms + 1.25 s ahead
# of the --to server's clock, waited for before the freeze: the move ends
# at once, and the shard's id beyond the bound is reported with its table.
#
# Servers a and b; shard 5 on a (app_0005.t, ids from next_id(5, nextval),
# and app_0005.audit, empty); ingest may only INSERT into them.  She stores
# an id of shard 7 dated 2030; then an id of shard 5 dated 2030; then one of
# shard 5 with the sign bit set in the empty table (id_millis() decodes it
# to the end of the time field).  Each time, offline and online, the move
# (--timeout 40) must succeed with writes refused for seconds, not the
# timeout.  Last, the bound is the later of the two servers' clocks: to c,
# whose clock runs 5 s behind a's, the move waits for the ids a made (they
# are no other role's), and c's new ids sort after them.
. "$(dirname "$0")/../lib.sh" cluster
need_faketime

move_servers 120 2 "${LOGICAL[@]}" || exit 1
cport=$((SHARDID_PORT_BASE + 122))
cluster_init c "$cport" "shardid.epoch = '2026-01-01 00:00:00+00'" "${LOGICAL[@]}" || exit 1
# shellcheck disable=SC2046
cluster_start c $(faketime_env -5s) || exit 1
"$PG_BIN/psql" -X -q -d "host=$SHARDID_TMP port=$cport user=postgres dbname=postgres" -c "CREATE DATABASE app" || exit 1
for p in $a $b $cport; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE ROLE ingest" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_0005;
CREATE SEQUENCE app_0005.t_id_seq;
CREATE TABLE app_0005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('app_0005.t_id_seq')), n int);
CREATE TABLE app_0005.audit (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('app_0005.t_id_seq')), n int);
SELECT shardid.register_shard(5, 'app_0005');
INSERT INTO app_0005.t (n) SELECT g FROM generate_series(1, 1000) g;
GRANT USAGE ON SCHEMA app_0005 TO ingest;
GRANT INSERT ON app_0005.t, app_0005.audit TO ingest;
SQL

# far_id SHARD: an id of SHARD dated 2030-01-01
far_id() { echo "shardid.min_id('2030-01-01 00:00:00+00') + ($1 << 10)"; }

# move FROM TO OPTIONS...: shard 5 moved; checks it took seconds, not the timeout
moved_quickly() {
	local from=$1 to=$2 label=$3 t0 t1 status refused
	shift 3
	t0=$(date +%s)
	"$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --timeout 40 "$@" >"$SHARDID_TMP/move.log" 2>&1
	status=$?
	t1=$(date +%s)
	expect "$status" = 0 "$label: the move's exit status"
	[ "$status" = 0 ] || cat "$SHARDID_TMP/move.log"
	expect_le $((t1 - t0)) 30 "$label: seconds the move took (its --timeout is 40)"
	refused=$(sed -n 's/.*writes to shard 5 were refused for \([0-9]*\)\.[0-9] s.*/\1/p' "$SHARDID_TMP/move.log")
	expect_le "${refused:-99}" 20 "$label: seconds writes were refused"
	echo "$label: $((t1 - t0)) s, writes refused for ${refused:-?} s"
	cp "$SHARDID_TMP/move.log" "$SHARDID_TMP/moved.log"
	# the frozen copy left on the --from server goes, so that the shard can move back
	"$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --drop-source --yes >/dev/null 2>&1 ||
		fail "$label: --drop-source failed"
}

# 1. another shard's id dated 2030, written by a role that may only INSERT
on "$a" -c "SET ROLE ingest" -c "INSERT INTO app_0005.t (id, n) VALUES ($(far_id 7), -7)" >/dev/null ||
	fail "ingest could not insert"
moved_quickly "$a" "$b" "another shard's id in 2030, offline"
grep -q "of shard 5, made for" "$SHARDID_TMP/moved.log" && fail "an id of shard 7 was reported as one of shard 5"
moved_quickly "$b" "$a" "another shard's id in 2030, online" --online

# 2. the shard's own id dated 2030: not waited for, reported with its table
on "$a" -c "SET ROLE ingest" -c "INSERT INTO app_0005.t (id, n) VALUES ($(far_id 5), -5)" >/dev/null ||
	fail "ingest could not insert"
moved_quickly "$a" "$b" "the shard's own id in 2030, offline"
grep -q "table \"app_0005\".\"t\" holds id [0-9]* of shard 5, made for 2030-01-01" "$SHARDID_TMP/moved.log" ||
	fail "the shard's id beyond the bound was not reported: $(cat "$SHARDID_TMP/moved.log")"
moved_quickly "$b" "$a" "the shard's own id in 2030, online" --online

# 3. the sign bit, in a table that holds no other id of the shard
on "$a" -c "DELETE FROM app_0005.t WHERE id > shardid.min_id('2029-01-01')" \
	-c "SET ROLE ingest" -c "INSERT INTO app_0005.audit (id, n) VALUES ((-9223372036854775807 - 1) + (5 << 10), -1)" >/dev/null ||
	fail "ingest could not insert a negative id"
moved_quickly "$a" "$b" "an id with the sign bit, offline"
grep -q "table \"app_0005\".\"audit\" holds id -9223372036854770688 of shard 5" "$SHARDID_TMP/moved.log" ||
	fail "the id with the sign bit was not reported: $(cat "$SHARDID_TMP/moved.log")"
moved_quickly "$b" "$a" "an id with the sign bit, online" --online
on "$a" -c "DELETE FROM app_0005.audit" >/dev/null

# the shard takes writes on a, with ids of its own clock
expect "$(on "$a" -c "INSERT INTO app_0005.t (n) VALUES (0) RETURNING shardid.id_shard(id) = 5 AND shardid.id_time(id) < '2029-01-01'")" = t \
	"a new id on a after the moves"

# 4. to c, 5 s behind: the move waits for a's ids, and c's next id sorts after them
on "$a" -c "INSERT INTO app_0005.t (n) SELECT g FROM generate_series(1, 1000) g" >/dev/null
newest=$(on "$a" -c "SELECT max(id) FROM app_0005.t")
moved_quickly "$a" "$cport" "to a server whose clock is 5 s behind, offline"
grep -q "holds id" "$SHARDID_TMP/moved.log" && fail "an id a made was reported as beyond the bound: $(cat "$SHARDID_TMP/moved.log")"
expect "$(on "$cport" -c "INSERT INTO app_0005.t (n) VALUES (0) RETURNING id > $newest")" = t \
	"c's first id after the move sorts after the newest id moved from a"
finish
