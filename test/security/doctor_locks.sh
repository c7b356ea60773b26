#!/usr/bin/env bash
# doctor() and the catalog views wait for no lock.  carol, who may only
# connect and make temporary tables, makes one with a next_id() DEFAULT and
# holds ACCESS EXCLUSIVE on it; an administrator's doctor(), with and
# without reading rows, and id_defaults answer at once, and the doctor
# reports the table it could not read.
. "$(dirname "$0")/../lib_script.sh"

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
finish
