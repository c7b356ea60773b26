#!/usr/bin/env bash
# doctor() and the catalog views wait for no lock.  carol, who may only
# connect and make temporary tables, makes one with a next_id() DEFAULT and
# holds ACCESS EXCLUSIVE on it; an administrator's doctor(), with and
# without reading rows, and id_defaults answer at once, and the doctor
# reports the table it could not read.  Then a shard's table that differs
# from its template is held the same way (an ALTER TABLE that aligns it,
# say): the check of template drift, which deparses it, reports it as not
# compared instead of waiting.
. "$(dirname "$0")/../lib.sh" servers

# a wait becomes a failure of this test, not a hang
export PGOPTIONS="-c statement_timeout=20s"

q -d postgres -c "DO \$\$BEGIN CREATE ROLE carol LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
q -c "GRANT CONNECT, TEMP ON DATABASE $PGDATABASE TO carol" >/dev/null
fifo=$SHARDID_TMP/carol.fifo
rm -f "$fifo"
mkfifo "$fifo"
"$PG_BIN/psql" -X -q -U carol <"$fifo" >"$SHARDID_TMP/carol.out" 2>&1 &
carol=$!
exec 7>"$fifo"
echo "CREATE TEMP TABLE hold (id bigint DEFAULT shardid.next_id(5, 1)); BEGIN; LOCK TABLE hold IN ACCESS EXCLUSIVE MODE; SELECT 'locked';" >&7
for i in $(seq 1 300); do
	grep -q locked "$SHARDID_TMP/carol.out" && break
	sleep 0.1
done
grep -q locked "$SHARDID_TMP/carol.out" || fail "carol's session did not take its lock: $(cat "$SHARDID_TMP/carol.out")"

for sql in "SELECT count(*) FROM shardid.id_defaults" \
	"SELECT count(*) FROM shardid.doctor(scan_rows => false)" \
	"SELECT count(*) FROM shardid.doctor()" \
	"SELECT count(*) FROM shardid.shards"; do
	q -c "$sql" >/dev/null 2>"$SHARDID_TMP/err" ||
		fail "$sql: $(cat "$SHARDID_TMP/err")"
done
got=$(q -c "SELECT problem || ': ' || detail FROM shardid.doctor() WHERE object LIKE 'pg_temp%hold.id'" 2>&1)
case "$got" in
*"rows not checked"*"locked by another session"*) ;;
*) fail "doctor() on carol's locked table: $got" ;;
esac
default=$(q -c "SELECT coalesce(default_expr, 'NULL') FROM shardid.id_defaults WHERE table_name = 'hold'")
expect "$default" = NULL "DEFAULT of a locked table"

echo "COMMIT; SELECT 'done';" >&7
exec 7>&-
wait $carol
default=$(q -c "SELECT default_expr FROM shardid.id_defaults WHERE table_name = 'hold'")
expect "$default" = "" "DEFAULT of carol's table once her session ended (the table went with it)"
q -c "REVOKE CONNECT, TEMP ON DATABASE $PGDATABASE FROM carol" >/dev/null

q -c "CREATE SCHEMA lock_template" -c "CREATE TABLE lock_template.t (id bigint PRIMARY KEY, v int DEFAULT 0 CHECK (v >= 0))" -c "CREATE INDEX ON lock_template.t (v)" >/dev/null
q -c "SELECT count(*) FROM shardid.create_shards('lock_template', ARRAY[7], prefix => 'lock_')" >/dev/null
q -c "ALTER TABLE lock_0007.t ADD COLUMN w int" >/dev/null
got=$(q -c "SELECT problem FROM shardid.doctor(scan_rows => false) WHERE object = 'lock_0007.t'")
expect "$got" = "table differs from its template" "doctor() on the drifted table, unlocked"
fifo2=$SHARDID_TMP/admin.fifo
rm -f "$fifo2"
mkfifo "$fifo2"
"$PG_BIN/psql" -X -q <"$fifo2" >"$SHARDID_TMP/admin.out" 2>&1 &
admin=$!
exec 8>"$fifo2"
echo "BEGIN; LOCK TABLE lock_0007.t IN ACCESS EXCLUSIVE MODE; SELECT 'locked';" >&8
for i in $(seq 1 300); do
	grep -q locked "$SHARDID_TMP/admin.out" && break
	sleep 0.1
done
grep -q locked "$SHARDID_TMP/admin.out" || fail "the admin session did not take its lock: $(cat "$SHARDID_TMP/admin.out")"
got=$(q -c "SELECT problem FROM shardid.doctor(scan_rows => false) WHERE object = 'lock_0007.t'" 2>&1)
expect "$got" = "table not compared with its template" "doctor() on the drifted table held locked"
echo "COMMIT; SELECT 'done';" >&8
exec 8>&-
wait $admin
q -c "DROP SCHEMA lock_0007, lock_template CASCADE" -c "SELECT shardid.unregister_shard(7)" >/dev/null
finish
