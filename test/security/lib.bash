# test/security/lib.bash: the attacker of test/security's scripts.  Source
# it after test/lib_script.sh, in a database where shardid is installed or
# about to be.
#
# attacker_setup ROLE: creates ROLE (no superuser) with a schema of the same
# name, a counter ROLE.ran that no rollback undoes (a sequence), and
# ROLE.hit(), which counts a call and, when it runs as a superuser, makes
# ROLE a superuser.  Every payload calls ROLE.hit().
# attacker_check ROLE WHAT: fails the script if any payload of ROLE ran as
# a superuser (ROLE became one) or ran at all (the counter moved), where
# the caller expects it not to; prints the count.

attacker_setup() {
	local role=$1
	q -d postgres -c "DO \$\$BEGIN CREATE ROLE $role LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
	q <<SQL
CREATE SCHEMA IF NOT EXISTS $role AUTHORIZATION $role;
GRANT USAGE ON SCHEMA $role TO PUBLIC;
SET ROLE $role;
CREATE SEQUENCE $role.ran;
GRANT USAGE, UPDATE ON SEQUENCE $role.ran TO PUBLIC;
CREATE FUNCTION $role.hit() RETURNS boolean LANGUAGE plpgsql AS \$f\$
BEGIN
    PERFORM pg_catalog.nextval('$role.ran');
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user) THEN
        EXECUTE 'ALTER ROLE $role SUPERUSER';
    END IF;
    RETURN true;
END \$f\$;
GRANT EXECUTE ON FUNCTION $role.hit() TO PUBLIC;
RESET ROLE;
SQL
}

attacker_runs() {	# attacker_runs ROLE: how often its payloads ran
	q -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM $1.ran"
}

attacker_check() {	# attacker_check ROLE WHAT
	not_superuser "$1" "$2: $1 is no superuser" -d postgres
	expect "$(attacker_runs "$1")" = 0 "$2: payloads of $1 that ran"
}

# strict_server NAME PORT: start a server of the script's own in strict mode
# (preloaded before PostgreSQL 17, the shared memory registry from 17) with
# database "app", and point libpq at it.  For attacks that spoil the
# server-wide high-water mark when they succeed.
strict_server() {
	local conf="shared_preload_libraries = 'shardid'"
	[ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ] &&
		conf="# strict mode through the shared memory registry"
	cluster_init "$1" "$2" "$conf" || exit 1
	cluster_start "$1" || exit 1
	use_cluster "$2"
	q -c "CREATE DATABASE app" >/dev/null
}
