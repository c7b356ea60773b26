#!/usr/bin/env bash
# Rows of other shards cannot make the floor step run away, nor hide the
# shard's newest id silently.
#
# dave may only INSERT into one table of shard 9's schema.  He stores
# 120,000 ids of shard 8191, each in a millisecond of its own, above shard
# 9's newest id, and a few of shard 0 at the top of the index.  Each
# millisecond of other shards costs the floor step one index descent, so
# reading past them all would take as long as he likes to insert; the step
# gives up after 100,000 descents, and says so: the registration ends with
# a WARNING naming the table, shardid.stored_ids() shows the column as not
# read (covered false, no newest id), and doctor() reports it.
SHARDID_TMP=""
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server descents $((SHARDID_PORT_BASE + 81))
q -c "CREATE ROLE dave LOGIN" >/dev/null
q -d app <<'SQL' >/dev/null || fail "setup"
CREATE EXTENSION shardid;
CREATE SCHEMA s9;
CREATE TABLE s9.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9));
INSERT INTO s9.t SELECT shardid.make_id(1000 + g, 9, 0) FROM generate_series(1, 100) g;
GRANT USAGE ON SCHEMA s9 TO dave;
GRANT INSERT ON s9.t TO dave;
SQL
q -d app -U dave -c "INSERT INTO s9.t SELECT shardid.make_id(5000 + g, 8191, 0) FROM generate_series(1, 120000) g" ||
	fail "dave's inserts"
out=$(q -d app -c "SELECT shardid.register_shard(9, 's9')" 2>&1)
echo "registration: $(echo "$out" | head -1)"
case "$out" in *"the newest id of shard 9 in table s9.t was not read"*) ;; *) fail "no WARNING at the registration: $out" ;; esac
read -r newest covered <<<"$(q -d app -F' ' -c "SELECT coalesce(newest_id::text, 'none'), covered FROM shardid.stored_ids(9)")"
echo "stored_ids(9): newest $newest, covered $covered"
expect "$newest $covered" = "none f" "stored_ids() of the column not read"
rows=$(q -d app -c "SELECT count(*) FROM shardid.doctor() WHERE object LIKE 'shard 9: s9.t%'")
expect_ge "$rows" 1 "doctor() rows about s9.t"
cluster_stop descents fast
finish
