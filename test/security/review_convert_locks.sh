#!/usr/bin/env bash
# The operator at 3 a.m. converts a partitioned table, or a table with an
# inheritance child, by mistake.  convert_table() refuses both, but 1.3
# locked the table first with LOCK TABLE, which locks every partition and
# child ACCESS EXCLUSIVE: it waited for a report that read one partition,
# while every query of every partition queued behind it, only to refuse.
# A sequence, an index or a materialized view got LOCK TABLE's own error
# ("cannot lock relation") instead of the refusal.
# Exit 0: with a partition and a child read by an open transaction, each
# conversion is refused at once (no lock_timeout), and other relations get
# the refusal's message.
. "$(dirname "$0")/../lib.sh" servers

q >/dev/null <<'SQL'
CREATE SCHEMA cvl;
CREATE TABLE cvl.parted (id bigserial, v int) PARTITION BY RANGE (id);
CREATE TABLE cvl.parted_1 PARTITION OF cvl.parted FOR VALUES FROM (0) TO (1000);
CREATE TABLE cvl.parent (id bigserial PRIMARY KEY, v int);
CREATE TABLE cvl.child () INHERITS (cvl.parent);
CREATE SEQUENCE cvl.seq;
CREATE INDEX parted_1_v ON cvl.parted_1 (v);
CREATE MATERIALIZED VIEW cvl.mat AS SELECT 1::bigint AS id;
INSERT INTO cvl.parted (v) VALUES (1);
INSERT INTO cvl.child (v) VALUES (1);
SQL

# a report reads the partition and the child, in a transaction left open
mkfifo "$SHARDID_TMP/report.in"
q <"$SHARDID_TMP/report.in" >"$SHARDID_TMP/report.out" 2>&1 &
report=$!
exec 7>"$SHARDID_TMP/report.in"
cat >&7 <<'SQL'
BEGIN;
SELECT count(*) FROM cvl.parted_1;
SELECT count(*) FROM cvl.child;
SELECT 'report reading';
SQL
wait_until "the report's locks" grep -q "report reading" "$SHARDID_TMP/report.out"

# a generous lock_timeout: the refusal needs no lock at all
# (the refusal names the kind of relation)
for kind_tab in "partitioned table cvl.parted" "table cvl.parent" "sequence cvl.seq" "index cvl.parted_1_v" \
	"materialized view cvl.mat"; do
	tab=${kind_tab##* }
	out=$(q -c "SET lock_timeout = '60s'" -c "SELECT legacy_below FROM shardid.convert_table('$tab', 5)" 2>&1)
	echo "$tab: $out"
	expect "$(echo "$out" | grep '^ERROR')" = "ERROR:  $kind_tab cannot be converted" "refusal of $tab"
	echo "$out" | grep -q '^HINT:  ' || fail "the refusal of $tab has no HINT"
done
expect "$(q -c "SELECT count(*) FROM pg_locks l WHERE l.relation = 'cvl.parted_1'::regclass AND l.mode = 'AccessExclusiveLock'")" = 0 \
	"ACCESS EXCLUSIVE locks on the partition left"

echo "COMMIT;" >&7
exec 7>&-
wait "$report"
expect "$(q -c "SELECT count(*) FROM shardid.legacy_ids WHERE tab::text LIKE 'cvl.%'")" = 0 "converted tables"
q -c "DROP SCHEMA cvl CASCADE" >/dev/null
finish
