#!/usr/bin/env bash
# After ALTER EXTENSION shardid UPDATE to 1.2, the role whose trusted 1.0 or
# 1.1 install made it the extension's owner can no longer drop a
# superuser's data with DROP EXTENSION shardid CASCADE.
#
# A trusted install leaves the extension owned by the installing role (its
# objects, schema shardid included, belong to the bootstrap superuser).
# The update to 1.2 takes schema shardid over, but the extension stays
# alice's: doctor() reports "extension owned by a role that is not a
# superuser", nothing more.  alice's DROP EXTENSION shardid CASCADE then
# drops a superuser's table partitioned by shardid.id_shard(id), rows and
# all (and every column DEFAULT that calls next_id()).  Exit 0: the table
# and its row are still there after her attempt.
#
# The trusted 1.1 install is made as such an install leaves the catalogs:
# installed by a superuser, pg_extension.extowner and its owner dependency
# then given to alice.
. "$(dirname "$0")/../lib.sh" servers
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

q -c "DROP EXTENSION shardid" -c "DROP SCHEMA IF EXISTS shardid" >/dev/null
q -d postgres -c "DO \$\$BEGIN CREATE ROLE alice LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
q >/dev/null <<'SQL'
CREATE EXTENSION shardid VERSION '1.1';
UPDATE pg_catalog.pg_extension SET extowner = 'alice'::regrole WHERE extname = 'shardid';
INSERT INTO pg_catalog.pg_shdepend
SELECT d.oid, 'pg_catalog.pg_extension'::regclass, e.oid, 0, 'pg_catalog.pg_authid'::regclass, 'alice'::regrole, 'o'
FROM pg_catalog.pg_database d, pg_catalog.pg_extension e
WHERE d.datname = current_database() AND e.extname = 'shardid';
CREATE TABLE public.events (id bigint NOT NULL, v text) PARTITION BY RANGE (shardid.id_shard(id));
CREATE TABLE public.events_all PARTITION OF public.events FOR VALUES FROM (0) TO (8192);
INSERT INTO public.events VALUES (shardid.make_id(1, 1, 1), 'precious');
SQL
q -c "ALTER EXTENSION shardid UPDATE TO '1.2'" >/dev/null || fail "update from 1.1"
owner=$(q -c "SELECT extowner::regrole FROM pg_extension WHERE extname = 'shardid'")
echo "after the update the extension belongs to $owner"

out=$(q -U alice -c "DROP EXTENSION shardid CASCADE" 2>&1)
echo "alice's DROP EXTENSION shardid CASCADE: $(echo "$out" | head -1)"
rows=$(q -c "SELECT count(*) FROM public.events" 2>/dev/null)
expect "${rows:-gone}" = 1 "rows of the superuser's table partitioned by shardid.id_shard(id) after alice's DROP EXTENSION"
finish
