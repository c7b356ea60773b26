#!/usr/bin/env bash
# Registering a shard raises its floor past the ids stored in every shape
# of table that holds them, and the floor outlives a crash.
#
# Server a (its clock 2 to 5 s ahead, some shards' ids borrowed 4 s further
# ahead) fills six tables, one shape each, each in a schema of its own
# shard (so that one shape's newest id cannot hide a shape that was not
# read):
#   range     RANGE-partitioned on id; the partition that takes the rows is
#             created alone with CREATE TABLE and then ATTACH PARTITION'ed
#   list      LIST-partitioned on c, PRIMARY KEY (id, c)
#   domain    the id column of a domain over bigint, DEFAULT on the column
#   next_ids  ids from shardid.next_ids(), no DEFAULT, PRIMARY KEY
#   nonunique no key, a non-unique plain btree index on id
#   deleted   PRIMARY KEY; on b its newest 1,500 rows are deleted after the
#             restore and before the registration (dead index entries)
# with both DEFAULT forms, next_id(shard, nextval(seq)) and next_id(shard).
# pg_dump -n of the six schemas is restored with psql into server b, whose
# clock is 20 s behind the real one (so that the restored ids are still
# ahead of it when a loaded machine took seconds to make, dump and restore
# them; shardid.max_lead_ms = 60000 there, so that they lie within the
# bound, max_lead_ms + 1250 ms ahead of its clock).  Some shards are registered on b with
# shardid.register_shard() and b stops at once (-m immediate, before it
# makes any id) and starts again with its clock 30 s behind: their floor
# must hold through the durable mark H.  Those shards' rows are inserted
# before the others are registered, whose data a borrowed 4 s further ahead
# (past H), and then theirs.
#
# 1.2 read the newest id lazily, at a backend's first id of a shard, only in
# tables whose id column had a next_id() DEFAULT: it missed attached
# partitions, LIST partitions with PRIMARY KEY (id, c), id columns of a
# domain over bigint, tables filled by next_ids(), and tables whose newest
# 1,500 rows were deleted; their new ids sorted before the restored ones.
#
# The seed (FLOOR_SEED, printed; default from $RANDOM) picks the order of
# the shapes, the rows a writes into each, the id form of each, a's clock,
# and which shapes are registered before the crash.  Exit 0: for every
# shape, every id b makes after the registration (20,000 per table) sorts
# after the newest restored (remaining) id of its shard, no insert fails, no
# id is stored twice, and the floor is that newest id.
. "$(dirname "$0")/../lib.sh" failover

seed=${FLOOR_SEED:-$RANDOM}
echo "FLOOR_SEED=$seed"
RANDOM=$seed

shapes=(range list domain next_ids nonunique deleted)
# the order: a shuffle of the six
for ((i = ${#shapes[@]} - 1; i > 0; i--)); do
	j=$((RANDOM % (i + 1)))
	t=${shapes[i]}; shapes[i]=${shapes[j]}; shapes[j]=$t
done
base=$((100 + RANDOM % 8000))		# shards base .. base + 5
a_ahead=$((2 + RANDOM % 4))			# a's clock, seconds ahead
declare -A shard form rows early
seq_forms=0
plain_forms=0
early_count=0
for k in "${!shapes[@]}"; do
	s=${shapes[k]}
	shard[$s]=$((base + k))
	rows[$s]=$((2000 + RANDOM % 18001))
	form[$s]=$((RANDOM % 2))		# 1: next_id(shard, nextval(seq))
	early[$s]=$((RANDOM % 2))		# 1: registered before the crash
	[ "$s" = next_ids ] && form[$s]=-
	[ "${form[$s]}" = 1 ] && seq_forms=$((seq_forms + 1))
	[ "${form[$s]}" = 0 ] && plain_forms=$((plain_forms + 1))
	[ "${early[$s]}" = 1 ] && early_count=$((early_count + 1))
done
# both forms, and both sides of the crash, in every run
mapfile -t with_default < <(for s in "${shapes[@]}"; do [ "$s" != next_ids ] && echo "$s"; done)
[ $seq_forms = 0 ] && form[${with_default[0]}]=1
[ $plain_forms = 0 ] && form[${with_default[4]}]=0
[ $early_count = 0 ] && early[${shapes[0]}]=1
[ $early_count = ${#shapes[@]} ] && early[${shapes[5]}]=0
for s in "${shapes[@]}"; do
	echo "shape $s: shard ${shard[$s]}, schema fs_$s, $(case ${form[$s]} in 1) echo "next_id(shard, nextval(seq))" ;; 0) echo "next_id(shard)" ;; *) echo "next_ids()" ;; esac), ${rows[$s]} rows on a, registered $([ "${early[$s]}" = 1 ] && echo "before the crash" || echo "after it")"
done

a=$((SHARDID_PORT_BASE + 100))
b=$((a + 1))
app_server -c -20s b $b "shardid.max_lead_ms = 60000" || exit 1
app_server -c "+${a_ahead}s" a $a "shardid.max_lead_ms = 10000" || exit 1
echo "a's clock is $a_ahead s ahead, b's 20 s behind"
for port in $a $b; do
	q_at $port -c "CREATE EXTENSION shardid" >/dev/null || { fail "CREATE EXTENSION on port $port"; finish; }
done

# the table of each shape: fs_SHAPE.t (id, c, phase)
cut=$(q_at $a -c "SELECT shardid.min_id(now() - interval '1 day')")
shape_sql() {	# shape_sql SHAPE: its schema and table
	local s=$1 sc="fs_$1" def
	if [ "${form[$s]}" = 1 ]; then
		def="shardid.next_id(${shard[$s]}, nextval('$sc.seq'))"
	else
		def="shardid.next_id(${shard[$s]})"
	fi
	echo "CREATE SCHEMA $sc; CREATE SEQUENCE $sc.seq;"
	case $s in
	range) echo "CREATE TABLE $sc.t (id bigint NOT NULL DEFAULT $def, c int, phase int, PRIMARY KEY (id)) PARTITION BY RANGE (id);
		CREATE TABLE $sc.t_old PARTITION OF $sc.t FOR VALUES FROM (MINVALUE) TO ($cut);
		CREATE TABLE $sc.t_new (id bigint NOT NULL, c int, phase int, PRIMARY KEY (id));
		ALTER TABLE $sc.t ATTACH PARTITION $sc.t_new FOR VALUES FROM ($cut) TO (MAXVALUE);" ;;
	list) echo "CREATE TABLE $sc.t (id bigint DEFAULT $def, c int, phase int, PRIMARY KEY (id, c)) PARTITION BY LIST (c);
		CREATE TABLE $sc.t_0 PARTITION OF $sc.t FOR VALUES IN (0);
		CREATE TABLE $sc.t_1 PARTITION OF $sc.t FOR VALUES IN (1);" ;;
	domain) echo "CREATE DOMAIN $sc.big AS bigint;
		CREATE TABLE $sc.t (id $sc.big PRIMARY KEY DEFAULT $def, c int, phase int);" ;;
	next_ids) echo "CREATE TABLE $sc.t (id bigint PRIMARY KEY, c int, phase int);" ;;
	nonunique) echo "CREATE TABLE $sc.t (id bigint DEFAULT $def, c int, phase int);
		CREATE INDEX ON $sc.t (id);" ;;
	deleted) echo "CREATE TABLE $sc.t (id bigint PRIMARY KEY DEFAULT $def, c int, phase int);" ;;
	esac
}
fill_sql() {	# fill_sql SHAPE PHASE N
	if [ "$1" = next_ids ]; then
		echo "INSERT INTO fs_$1.t (id, c, phase) SELECT id, 0, $2 FROM shardid.next_ids(${shard[$1]}, $3) id;"
	else
		echo "INSERT INTO fs_$1.t (c, phase) SELECT g % 2, $2 FROM generate_series(1, $3) g;"
	fi
}

for s in "${shapes[@]}"; do
	q_at $a -c "$(shape_sql "$s")" >/dev/null || fail "shape $s on a"
done
# the shards registered before the crash: ids at a's clock; the others
# borrowed 4 s further ahead, past the durable mark the first ones raise
for s in "${shapes[@]}"; do
	[ "${early[$s]}" = 1 ] && { q_at $a -c "$(fill_sql "$s" 1 "${rows[$s]}")" || fail "rows of $s on a"; }
done
for s in "${shapes[@]}"; do
	[ "${early[$s]}" = 1 ] && continue
	borrow_ahead "${shard[$s]}" 4000 -p $a -d app >/dev/null || finish
	q_at $a -c "$(fill_sql "$s" 1 "${rows[$s]}")" || fail "rows of $s on a"
done

"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p $a -U postgres -d app -n 'fs_*' >"$SHARDID_TMP/fs.sql" || fail "pg_dump"
q_at $b -f "$SHARDID_TMP/fs.sql" >/dev/null || fail "restore into b"
q_at $b -c "DELETE FROM fs_deleted.t WHERE id IN (SELECT id FROM fs_deleted.t ORDER BY id DESC LIMIT 1500)" >/dev/null ||
	fail "deleting the newest 1,500 rows of fs_deleted.t"

# the newest restored (remaining) id of each shape, and how far ahead of
# b's clock it is: a shape whose ids b's clock has passed proves nothing
declare -A newest
for s in "${shapes[@]}"; do
	read -r newest[$s] lead <<<"$(q_at $b -F' ' -c "
	    SELECT max(id), round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000)
	    FROM fs_$s.t WHERE phase = 1")"
	echo "restored $s: newest id ${newest[$s]}, $lead ms ahead of b's clock"
	expect_ge "${lead:-0}" 1000 "$s: restored ids ahead of b's clock (ms)"
done

register() {	# register SHAPE...: register_shard() on b, its output shown
	local s out
	for s in "$@"; do
		out=$(q_at $b -c "SELECT shardid.register_shard(${shard[$s]}, 'fs_$s')" 2>&1) ||
			fail "register_shard(${shard[$s]}, 'fs_$s'): $out"
		[ -n "$out" ] && echo "register_shard(${shard[$s]}, 'fs_$s'): $out"
	done
	return 0
}
check() {	# check SHAPE...: 20,000 rows on b, every id after the restored ones
	local s out n2 before twice floor covered
	for s in "$@"; do
		out=$(q_at $b -c "$(fill_sql "$s" 2 20000)" 2>&1)
		expect "$out" = "" "$s: 20,000 inserts on b"
		read -r n2 before twice <<<"$(q_at $b -F' ' -c "
		    SELECT count(*) FILTER (WHERE phase = 2),
		           count(*) FILTER (WHERE phase = 2 AND id <= ${newest[$s]}),
		           count(*) - count(DISTINCT id)
		    FROM fs_$s.t")"
		read -r floor covered <<<"$(q_at $b -F' ' -c "
		    SELECT coalesce(r.floor_id::text, 'none'), (SELECT string_agg(coalesce(x.covered::text, 'null'), ',') FROM shardid.stored_ids(r.shard) x)
		    FROM shardid.shard_registry r WHERE r.shard = ${shard[$s]}" 2>/dev/null)"
		echo "$s: $n2 new ids, $before not after the newest restored one, $twice stored twice; floor ${floor:-?} (newest restored ${newest[$s]}), covered: ${covered:-?}"
		expect "$n2 $before $twice" = "20000 0 0" "$s: new ids, those not after the restored ones, ids stored twice"
		expect "${floor:-}" = "${newest[$s]}" "$s: the shard's floor is the newest restored (remaining) id"
	done
	return 0
}

mapfile -t first < <(for s in "${shapes[@]}"; do [ "${early[$s]}" = 1 ] && echo "$s"; done)
mapfile -t second < <(for s in "${shapes[@]}"; do [ "${early[$s]}" = 1 ] || echo "$s"; done)
register "${first[@]}"
cluster_stop b immediate
# shellcheck disable=SC2046
cluster_start b $(faketime_env -30s) || { fail "restart of b with its clock 30 s behind"; finish; }
echo "b stopped at once after registering ${first[*]}, and started again with its clock 30 s behind"
check "${first[@]}"
register "${second[@]}"
check "${second[@]}"
cluster_stop a
cluster_stop b
[ $script_failed = 0 ] || echo "FAILED with FLOOR_SEED=$seed"
finish
