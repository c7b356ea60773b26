#!/usr/bin/env bash
# test/cluster/move_apply_role.sh: the role that owns an online move's
# subscription on the --to server (its ALTER ROLE ... SET pin the settings
# of the values' text for the apply and the table syncs).
#
# mallory may create roles on b, the --to server (CREATEROLE), and owns a
# table of shard 5.  The role was named after the move's id, which the
# publication on the --from server shows to every role there before the
# subscription is made: mallory made a role of that name first, and the
# move failed ("role ... already exists").  Now:
#   1. mallory makes the role named after the move's id while the move
#      waits before its subscription: the move runs, and leaves her role;
#   2. while the move replicates, its role's name is none the id gives,
#      it has no password and the settings of the values; on PostgreSQL
#      16+ it is no superuser, and no client can log in as it (CONNECTION
#      LIMIT 0), not even where pg_hba.conf trusts every role, as this
#      test's servers do; mallory cannot change its settings;
#   3. the move killed (SIGKILL) while it replicates: --abort drops the
#      role with the subscription.
# (Every signal in every phase, followed by --abort or by --resume, which
# finishes the move and drops it: move_faults.sh; the failures of the
# verification: move_values.sh.)
. "$(dirname "$0")/../lib.sh" cluster
move_servers 620 2 "${LOGICAL[@]}" || exit 1
version=$(on "$b" -c "SHOW server_version_num")
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
done
on "$b" -c "ALTER ROLE mallory CREATEROLE" >/dev/null || exit 1
events_shard "$a" 100 mallory || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.hers (id bigint PRIMARY KEY, n integer);
INSERT INTO shard_0005.hers SELECT g, g FROM generate_series(1, 10) g;
SQL
roles() { on "$1" -c "SELECT count(*) FROM pg_roles WHERE rolname LIKE 'shardid\_move\_%'"; }
synced() { [ "$(on "$1" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] &&
	[ "$(on "$1" -c "SELECT count(*) FROM pg_subscription_rel")" = 2 ]; }

# 1. the name the move's id gives, taken on b before the subscription
move_paused "name taken" subscribe "$SHARDID_TMP/taken.move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online || exit 1
pub=$(on "$a" -c "SELECT pubname FROM pg_publication")
expect "$(echo "$pub" | grep -c '^shardid_move_5_[0-9a-f]\{32\}$')" = 1 "the publication on a, named after the move's id"
as_mallory "$b" -c "CREATE ROLE \"$pub\"" >/dev/null || fail "mallory could not make role $pub on b"
move_go
status=$?
sed 's/^/  | /' "$SHARDID_TMP/taken.move"
expect "$status" = 0 "online move a -> b with the id's name taken on b: exit status"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0005.events") $(on "$b" -c "SELECT count(*) FROM shard_0005.hers")" = "100 10" \
	"the rows on b"
expect "$(on "$b" -c "SELECT rolname FROM pg_roles WHERE rolname LIKE 'shardid\_move\_%'")" = "$pub" \
	"the roles named shardid_move_* on b: mallory's alone"
expect "$(on "$b" -c "SELECT count(*) FROM pg_subscription")" = 0 "the subscription left on b"
on "$b" -c "DROP ROLE \"$pub\"" >/dev/null || exit 1
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null || fail "--drop-source on a"

# 2. the role while the move b -> a replicates
move_paused "replicating" copy "$SHARDID_TMP/role.move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online || exit 1
wait_until "the initial copy on a" synced "$a"
role=$(on "$a" -c "SELECT r.rolname FROM pg_subscription s JOIN pg_roles r ON r.oid = s.subowner")
pub=$(on "$b" -c "SELECT pubname FROM pg_publication")
echo "$role" | grep -q '^shardid_move_5_owner_[0-9a-f]\{32\}$' || fail "the subscription's owner: got '$role'"
case "$role" in *"${pub#shardid_move_5_}"*) fail "the role's name $role holds the move's id ($pub)" ;; esac
expect "$(on "$a" -c "SELECT rolcanlogin, rolpassword IS NULL FROM pg_authid WHERE rolname = '$role'")" = "t|t" \
	"the role: LOGIN, no password"
expect "$(on "$a" -c "SELECT s FROM pg_db_role_setting d, unnest(d.setconfig) s
                      WHERE d.setrole = '$role'::regrole AND d.setdatabase = 0 ORDER BY 1" | tr '\n' ' ')" \
	"array_nulls=on bytea_output=hex datestyle=ISO, MDY extra_float_digits=3 intervalstyle=postgres lc_monetary=C quote_all_identifiers=off standard_conforming_strings=on timezone=UTC xmloption=content " \
	"the role's settings"
if [ "$version" -ge 160000 ]; then
	expect "$(on "$a" -c "SELECT rolsuper, rolconnlimit, (SELECT subpasswordrequired FROM pg_subscription) FROM pg_roles WHERE rolname = '$role'")" \
		"f|0|f" "PostgreSQL 16+: the role is no superuser, takes no session; the subscription asks no password"
	expect "$(on "$a" -c "SELECT string_agg(b.rolname || ':' || m.inherit_option || ':' || m.set_option || ':' || m.admin_option, ' ' ORDER BY b.rolname)
	                      FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = '$role'::regrole")" \
		"mallory:false:true:false postgres:false:true:false" "PostgreSQL 16+: the role may SET ROLE to the tables' owners"
	out=$("$PG_BIN/psql" -X -At -d "host=$SHARDID_TMP port=$a user=$role dbname=app" -c "SELECT 1" 2>&1)
	expect "$?" = 2 "PostgreSQL 16+: a session as the role: exit status"
	echo "$out" | grep -qF "FATAL:  too many connections for role \"$role\"" || fail "PostgreSQL 16+: a session as the role: $out"
	echo "$out" | sed 's/^/  | /'
else
	expect "$(on "$a" -c "SELECT rolsuper FROM pg_roles WHERE rolname = '$role'")" = t \
		"PostgreSQL 15: the role is a superuser, as a subscription's owner must be"
fi
out=$(as_mallory "$a" -c "ALTER ROLE \"$role\" SET array_nulls = off" 2>&1)
expect "$?" = 1 "mallory alters the role's settings: exit status"
echo "$out" | sed 's/^/  | /'
expect "$(on "$a" -c "SELECT count(*) FROM pg_db_role_setting WHERE setrole = '$role'::regrole AND 'array_nulls=off' = ANY (setconfig)")" = 0 \
	"mallory's setting on the role"

# 3. killed: --abort drops the role
move_stop KILL
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --abort >"$SHARDID_TMP/abort.out" 2>&1
expect "$?" = 0 "--abort after SIGKILL: exit status"
expect "$(roles "$a") $(on "$a" -c "SELECT count(*) FROM pg_subscription")" = "0 0" "--abort after SIGKILL: roles and subscriptions left on a"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5), (SELECT count(*) FROM shard_0005.hers)")" = "shard_0005|10" "shard 5 on b"
no_superuser_code "the moves" "$a" "$b"
finish
