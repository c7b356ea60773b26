#!/usr/bin/env bash
# The doctor's check of template drift takes as a shard table's template
# the only table of that name outside the shard schemas.  mallory, who may
# register no shard but has a schema of her own, makes a table of a shard
# table's name there:
#  - beside the real template, hers made the name ambiguous and hid the
#    drift of a shard's table from an administrator's doctor();
#  - where the template is gone (dropped after provisioning), hers became
#    the template: the doctor reported every shard table of that name as
#    differing from mallory.orders, with a fix whose ADD COLUMN ... DEFAULT
#    calls her function, which ran as the superuser who ran the fix.
# A template is a table of a role that may write the shard registry, as
# create_shards()'s templates are.
. "$(dirname "$0")/../lib.sh" servers

attacker_setup mallory

q <<'SQL' >/dev/null
CREATE SCHEMA rv_template;
CREATE TABLE rv_template.orders (id bigint PRIMARY KEY, v int);
SELECT count(*) FROM shardid.create_shards('rv_template', ARRAY[31, 32], prefix => 'rv_', use_sequence => true);
INSERT INTO rv_0031.orders (v) VALUES (1);
ALTER TABLE rv_0032.orders ADD COLUMN extra int;
SQL

drift() {
	q -c "SELECT object || ': ' || detail FROM shardid.doctor(scan_rows => false)
	      WHERE problem = 'table differs from its template' ORDER BY object"
}

got=$(drift)
case "$got" in
"rv_0032.orders: "*"differs from rv_template.orders"*) ;;
*) fail "the drift of rv_0032.orders before mallory's table: $got" ;;
esac

# a table of mallory's of the same name
q <<'SQL' >/dev/null
SET ROLE mallory;
CREATE TABLE mallory.orders (id bigint PRIMARY KEY, v int, x int DEFAULT mallory.hit()::int);
SQL

got=$(drift)
case "$got" in
"rv_0032.orders: "*"differs from rv_template.orders"*) ;;
*) fail "the drift of rv_0032.orders beside mallory.orders: '$got'" ;;
esac

# the template dropped after provisioning: no template, nothing compared
q -c "DROP SCHEMA rv_template CASCADE" >/dev/null
got=$(drift)
expect "$got" = "" "doctor()'s drift rows with mallory.orders the only other table of the name"

# the superuser does as told by the fix of each row that names mallory's table
fixes=$(q -c "SELECT fix FROM shardid.doctor(scan_rows => false)
              WHERE problem = 'table differs from its template' AND detail LIKE '%mallory.orders%'")
if [ -n "$fixes" ]; then
	q >/dev/null 2>&1 <<'SQL'
SELECT substring(fix FROM 'To align it with the template: (.*) \(a DROP removes') FROM shardid.doctor(scan_rows => false)
WHERE problem = 'table differs from its template' AND detail LIKE '%mallory.orders%' \gexec
SQL
fi
attacker_check mallory "the doctor's fixes run by a superuser"

q -c "DROP SCHEMA rv_0031, rv_0032 CASCADE" -c "SELECT shardid.unregister_shard(31), shardid.unregister_shard(32)" \
	-c "DROP SCHEMA mallory CASCADE" -c "ALTER ROLE mallory NOSUPERUSER" >/dev/null
finish
