/*-------------------------------------------------------------------------
 *
 * checks.c
 *	  Everything checked before anything changes: the connections, what
 *	  both servers must offer, the preflight of a new move, and the
 *	  unfinished moves of the shard that their journals record.
 *
 * src/move/checks.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

static int	check_leftovers(Move *m);

/* --abort: undo what can be undone on the server that answers */
void
connect_for_abort(Move *m)
{
	Server	   *s[] = {&m->from, &m->to};
	int			i,
				up = 0;

	for (i = 0; i < 2; i++)
	{
		if (server_connect(s[i]))
			up++;
		else
			warning_msg("cannot connect to the %s server: %s", s[i]->option, db_error());
	}
	if (up == 0)
	{
		error_msg("neither server answers: nothing can be undone");
		finish(m, EXIT_UNFINISHED, "unfinished");
	}
}

void
connect_both(Move *m)
{
	Server	   *s[] = {&m->from, &m->to};
	int			i;

	for (i = 0; i < 2; i++)
	{
		if (!server_connect(s[i]))
		{
			error_msg("cannot connect to the %s server: %s", s[i]->option, db_error());
			finish(m, EXIT_FAILED, "failed");
		}
	}
}

/* "1.4" as 104; -1 when it is not major.minor */
static int
version_num(const char *v)
{
	int			major,
				minor;
	char		rest;

	if (v == NULL || sscanf(v, "%d.%d%c", &major, &minor, &rest) != 2 || major < 0 || minor < 0 || minor > 99)
		return -1;
	return major * 100 + minor;
}

/* what both servers must offer for any run */
void
check_servers(Move *m)
{
	Server	   *s[] = {&m->from, &m->to};
	char	   *epoch[2] = {NULL, NULL};
	char	   *ident[2] = {NULL, NULL};
	int			i;

	for (i = 0; i < 2; i++)
	{
		char	   *v = NULL;
		const char *su = PQparameterStatus(s[i]->conn, "is_superuser");

		if (!is(su, "on"))
			refuse(m, "shardid-move must connect to the %s server as a superuser (it writes the move journal, "
				   "freezes other roles' tables and manages replication)", s[i]->option);
		if (!get_value(s[i], &v, "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'shardid'", 0))
			refuse(m, "could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse(m, "shardid is not installed in the %s database (%s); run CREATE EXTENSION shardid there",
				   s[i]->option, s[i]->where);
		/*
		 * What the move reads and writes there (the journal, the registry,
		 * the floor) and what the shard's objects need: a shardid this
		 * program knows, from 1.2 to its own
		 */
		if (version_num(v) > version_num(SHARDID_VERSION) && version_num(SHARDID_VERSION) > 0)
			refuse(m, "shardid %s on the %s server is newer than this shardid-move, which knows shardid up to %s: "
				   "use the shardid-move of shardid %s", v, s[i]->option, SHARDID_VERSION, v);
		if (version_num(v) < 102)
			refuse(m, "shardid %s on the %s server is older than 1.2, the oldest this shardid-move moves shards "
				   "with; run ALTER EXTENSION shardid UPDATE there", v, s[i]->option);
		if (!get_value(s[i], &v, "SELECT pg_catalog.to_regclass('shardid.move_journal')::text", 0))
			refuse(m, "could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse(m, "shardid on the %s server has no move journal; run ALTER EXTENSION shardid UPDATE there",
				   s[i]->option);
		if (PQserverVersion(s[i]->conn) / 10000 > PQlibVersion() / 10000)
			refuse(m, "the %s server runs PostgreSQL %d, newer than this shardid-move's pg_dump (%d)",
				   s[i]->option, PQserverVersion(s[i]->conn) / 10000, PQlibVersion() / 10000);
		if (!get_value(s[i], &epoch[i], "SELECT epoch_ms::text FROM shardid.info()", 0))
			refuse(m, "could not read shardid.info() on the %s server: %s", s[i]->option, db_error());
		if (!get_value(s[i], &ident[i],
					   "SELECT system_identifier::text || '/' || pg_catalog.current_database() "
					   "FROM pg_catalog.pg_control_system()", 0))
			refuse(m, "could not identify the %s server: %s", s[i]->option, db_error());
	}
	if (is(ident[0], ident[1]))
		refuse(m, "--from and --to name the same database");
	if (!is(epoch[0], epoch[1]))
		refuse(m, "shardid.epoch differs: %s on the --from server, %s on the --to server; "
			   "ids would decode wrongly on one of them", epoch[0], epoch[1]);
	{
		char	   *v = NULL;

		if (!get_value(&m->from, &v, "SELECT pg_catalog.to_regclass('shardid.shard_registry')::text", 0))
			refuse(m, "could not query the --from server: %s", db_error());
		if (v == NULL)
			refuse(m, "shardid on the --from server has no shard registry; run ALTER EXTENSION shardid UPDATE there");
	}
}

/*
 * What the move cannot run as the owner of the code, one problem per row.
 * Every statement of a move that reads or writes rows of a table runs as
 * its owner: the counts and the newest id (owner_values()), the offline
 * rows (copy_rows_as_owners()), the subscription of PostgreSQL 16+
 * (run_as_owner = false).  What is left is a matter of shape, not of what
 * the code calls, so nothing here follows dependencies:
 *
 *	 kind 0, always: FORCE ROW LEVEL SECURITY, under which the owner's count
 *	   is filtered (row_security = off makes it fail instead); an index
 *	   expression or predicate of a non-superuser's table with a foreign key
 *	   (either end), which pg_restore's check of the key plans as the
 *	   superuser, even over the empty tables of an online move (planning
 *	   evaluates their constant parts); a foreign key to a table of such a
 *	   role outside the schema, whose indexes on the --to server may be
 *	   anything; an expression in the partition key of such a role's table,
 *	   whose constant parts PostgreSQL folds when it builds the key
 *	   (RelationBuildPartitionKey()), as whoever needs it first: on the
 *	   --to server pg_restore's CREATE TABLE ... PARTITION OF, as the
 *	   superuser;
 *	 kind 1, offline: a foreign key of any table whose check converts a
 *	   column of a type not built in (or to one) with a cast: a role that
 *	   owns one of the types makes the casts between them, on the --to server
 *	   as she likes, and that check runs the cast as the superuser;
 *	 kind 2, online into PostgreSQL 15, whose subscriptions apply as their
 *	   owner, a superuser, with no way to apply as the table's owner: every
 *	   table of a non-superuser that carries an evaluated expression (CHECK,
 *	   a domain anywhere in a column's type, DEFAULT, generated column,
 *	   trigger, index expression or predicate, rule, partition expression,
 *	   extended statistics on an expression), whatever it calls; or a type
 *	   in a column's type whose code such a role chooses at any time: her
 *	   composite type (she may add an attribute of her domain), a range type
 *	   whose subtype difference function is hers (a GiST index and ANALYZE
 *	   call it); and a partition of such a role outside the schema, into
 *	   which the apply routes rows, and which the hold does not take from
 *	   her.  The statistics are for the hold (hold_target_tables()): an
 *	   ANALYZE runs as the table's owner, then the superuser.
 */
#define SHAPE_SQL \
	"WITH RECURSIVE tbl AS (" \
	" SELECT c.oid, c.relforcerowsecurity, c.relowner, r.rolname, r.rolsuper FROM pg_catalog.pg_class c" \
	" JOIN pg_catalog.pg_roles r ON r.oid = c.relowner" \
	" WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p'))," \
	"alltypes AS (" /* every type in a column's type: domains, arrays, composites, ranges */ \
	" SELECT tbl.oid AS relid, t.oid AS typ, t.typtype FROM tbl" \
	" JOIN pg_catalog.pg_attribute a ON a.attrelid = tbl.oid AND a.attnum > 0 AND NOT a.attisdropped" \
	" JOIN pg_catalog.pg_type t ON t.oid = a.atttypid" \
	" UNION" \
	" SELECT x.relid, t.oid, t.typtype FROM alltypes x JOIN pg_catalog.pg_type s ON s.oid = x.typ" \
	" JOIN pg_catalog.pg_type t ON t.oid = s.typbasetype OR t.oid = s.typelem" \
	"  OR t.oid IN (SELECT a.atttypid FROM pg_catalog.pg_attribute a WHERE a.attrelid = s.typrelid" \
	"   AND s.typrelid <> 0 AND a.attnum > 0 AND NOT a.attisdropped)" \
	"  OR t.oid IN (SELECT g.rngsubtype FROM pg_catalog.pg_range g WHERE g.rngtypid = s.oid)" \
	"  OR t.oid IN (SELECT g.rngtypid FROM pg_catalog.pg_range g WHERE g.rngmultitypid = s.oid))," \
	"carried AS (" \
	" SELECT tbl.oid, 'a CHECK constraint' AS what FROM tbl" \
	"  WHERE EXISTS (SELECT FROM pg_catalog.pg_constraint k WHERE k.conrelid = tbl.oid AND k.contype = 'c')" \
	" UNION ALL SELECT tbl.oid, 'a domain in a column''s type' FROM tbl WHERE EXISTS (" \
	"  SELECT FROM alltypes t WHERE t.relid = tbl.oid AND t.typtype = 'd')" \
	" UNION ALL SELECT tbl.oid, 'a DEFAULT' FROM tbl WHERE EXISTS (SELECT FROM pg_catalog.pg_attrdef d" \
	"  JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum" \
	"  WHERE d.adrelid = tbl.oid AND a.attgenerated = '')" \
	" UNION ALL SELECT tbl.oid, 'a generated column' FROM tbl WHERE EXISTS (SELECT FROM pg_catalog.pg_attribute a" \
	"  WHERE a.attrelid = tbl.oid AND a.attgenerated <> '' AND NOT a.attisdropped)" \
	" UNION ALL SELECT tbl.oid, 'a trigger' FROM tbl WHERE EXISTS (SELECT FROM pg_catalog.pg_trigger g" \
	"  WHERE g.tgrelid = tbl.oid AND NOT g.tgisinternal)" \
	" UNION ALL SELECT tbl.oid, 'an index expression or predicate' FROM tbl WHERE EXISTS (" \
	"  SELECT FROM pg_catalog.pg_index i WHERE i.indrelid = tbl.oid" \
	"  AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL))" \
	" UNION ALL SELECT tbl.oid, 'a rule' FROM tbl WHERE EXISTS (SELECT FROM pg_catalog.pg_rewrite w" \
	"  WHERE w.ev_class = tbl.oid)" \
	" UNION ALL SELECT tbl.oid, 'a partition key expression' FROM tbl WHERE EXISTS (" \
	"  SELECT FROM pg_catalog.pg_partitioned_table p WHERE p.partrelid = tbl.oid AND p.partexprs IS NOT NULL)" \
	" UNION ALL SELECT tbl.oid, 'a composite type of a role that is no superuser in a column''s type' FROM tbl" \
	"  WHERE EXISTS (SELECT FROM alltypes t JOIN pg_catalog.pg_type y ON y.oid = t.typ" \
	"  JOIN pg_catalog.pg_roles o ON o.oid = y.typowner WHERE t.relid = tbl.oid AND t.typtype = 'c' AND NOT o.rolsuper)" \
	" UNION ALL SELECT tbl.oid, 'a range type in a column''s type whose subtype difference function belongs to " \
	"a role that is no superuser' FROM tbl WHERE EXISTS (SELECT FROM alltypes t" \
	"  JOIN pg_catalog.pg_range g ON g.rngtypid = t.typ JOIN pg_catalog.pg_proc p ON p.oid = g.rngsubdiff" \
	"  JOIN pg_catalog.pg_roles o ON o.oid = p.proowner WHERE t.relid = tbl.oid AND NOT o.rolsuper)" \
	" UNION ALL SELECT tbl.oid, 'extended statistics on an expression' FROM tbl WHERE EXISTS (" \
	"  SELECT FROM pg_catalog.pg_statistic_ext x WHERE x.stxrelid = tbl.oid AND x.stxexprs IS NOT NULL))," \
	"problem AS (" \
	" SELECT 0 AS kind, pg_catalog.format('table %s has FORCE ROW LEVEL SECURITY: the move counts its rows " \
	"as its owner, and its policies would filter that count', tbl.oid::pg_catalog.regclass) AS text" \
	" FROM tbl WHERE tbl.relforcerowsecurity" \
	" UNION ALL" \
	" SELECT 0, pg_catalog.format('table %s of role %s: index %s has an expression or a predicate, and the table " \
	"has a foreign key, whose check pg_restore plans as a superuser', tbl.oid::pg_catalog.regclass, tbl.rolname," \
	"  i.indexrelid::pg_catalog.regclass) FROM tbl" \
	" JOIN pg_catalog.pg_index i ON i.indrelid = tbl.oid AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)" \
	" WHERE NOT tbl.rolsuper AND EXISTS (SELECT FROM pg_catalog.pg_constraint f WHERE f.contype = 'f'" \
	"  AND (f.conrelid = tbl.oid OR f.confrelid = tbl.oid))" \
	" UNION ALL" \
	" SELECT 0, pg_catalog.format('table %s of role %s has an expression in its partition key, whose constant " \
	"parts PostgreSQL evaluates as whoever uses the key (adding a partition, routing rows, pruning): pg_restore " \
	"would run them as a superuser'," \
	"  tbl.oid::pg_catalog.regclass, tbl.rolname) FROM tbl" \
	" JOIN pg_catalog.pg_partitioned_table p ON p.partrelid = tbl.oid" \
	" WHERE NOT tbl.rolsuper AND p.partexprs IS NOT NULL" \
	" UNION ALL" \
	" SELECT 0, pg_catalog.format('table %s: foreign key %I references table %s of role %s outside the schema, " \
	"which pg_restore''s check of the key plans as a superuser', f.conrelid::pg_catalog.regclass, f.conname, " \
	"  f.confrelid::pg_catalog.regclass, er.rolname)" \
	" FROM pg_catalog.pg_constraint f JOIN tbl ON tbl.oid = f.conrelid" \
	" JOIN pg_catalog.pg_class ec ON ec.oid = f.confrelid JOIN pg_catalog.pg_roles er ON er.oid = ec.relowner" \
	" WHERE f.contype = 'f' AND ec.relnamespace <> $1::oid AND NOT er.rolsuper" \
	" UNION ALL" \
	" SELECT 1, pg_catalog.format('table %s: foreign key %I converts column %I from type %s to %s with a cast, " \
	"which a role that is no superuser may have made on the --to server, and pg_restore''s check of the key " \
	"runs it as a superuser', f.conrelid::pg_catalog.regclass, f.conname, a.attname, " \
	"  pg_catalog.format_type(a.atttypid, NULL), pg_catalog.format_type(o.oprright, NULL))" \
	" FROM pg_catalog.pg_constraint f JOIN tbl ON tbl.oid = f.conrelid" \
	" CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(f.conkey), pg_catalog.unnest(f.conpfeqop)) k(attnum, op)" \
	" JOIN pg_catalog.pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.attnum" \
	" JOIN pg_catalog.pg_type t ON t.oid = a.atttypid" \
	" JOIN pg_catalog.pg_operator o ON o.oid = k.op" \
	" WHERE f.contype = 'f' AND o.oprright <> a.atttypid AND o.oprright <> t.typbasetype" \
	"  AND (a.atttypid >= 16384 OR o.oprright >= 16384)" \
	" UNION ALL" \
	" SELECT 2, pg_catalog.format('table %s of role %s carries %s: the --to server runs PostgreSQL 15, whose " \
	"subscriptions apply changes as a superuser, with no way to apply them as the table''s owner'," \
	"  tbl.oid::pg_catalog.regclass, tbl.rolname, pg_catalog.string_agg(c.what, ', ' ORDER BY c.what)) FROM tbl" \
	" JOIN carried c ON c.oid = tbl.oid WHERE NOT tbl.rolsuper GROUP BY tbl.oid, tbl.rolname" \
	" UNION ALL" \
	" SELECT 2, pg_catalog.format('table %s has partition %s of role %s outside the schema: the --to server " \
	"runs PostgreSQL 15, whose subscriptions apply changes as a superuser, and the move cannot keep the " \
	"partition from its owner', tbl.oid::pg_catalog.regclass, pc.oid::pg_catalog.regclass, pr.rolname) FROM tbl" \
	" CROSS JOIN LATERAL pg_catalog.pg_partition_tree(tbl.oid) pt" \
	" JOIN pg_catalog.pg_class pc ON pc.oid = pt.relid JOIN pg_catalog.pg_roles pr ON pr.oid = pc.relowner" \
	" WHERE pc.relnamespace <> $1::oid AND NOT pr.rolsuper)" \
	"SELECT text FROM problem WHERE kind = 0 OR (kind = 1 AND $2) OR (kind = 2 AND $3) ORDER BY kind, 1"

/*
 * Enabled event triggers that would run code of another role on the move's
 * DDL (or on the DROP SCHEMA of --drop-source): those calling a function
 * whose owner is no superuser, and those that belong to a role that is no
 * superuser (any more: only superusers create them).  shardid has none.
 */
#define EVENT_TRIGGER_SQL \
	"SELECT CASE WHEN NOT fr.rolsuper THEN pg_catalog.format('event trigger %I calls function %s of role %s'," \
	"  e.evtname, e.evtfoid::pg_catalog.regprocedure, fr.rolname)" \
	" ELSE pg_catalog.format('event trigger %I belongs to role %s, which is no superuser, and calls function %s'," \
	"  e.evtname, er.rolname, e.evtfoid::pg_catalog.regprocedure) END" \
	" FROM pg_catalog.pg_event_trigger e JOIN pg_catalog.pg_proc p ON p.oid = e.evtfoid" \
	" JOIN pg_catalog.pg_roles fr ON fr.oid = p.proowner" \
	" JOIN pg_catalog.pg_roles er ON er.oid = e.evtowner" \
	" WHERE (NOT fr.rolsuper OR NOT er.rolsuper) AND e.evtenabled <> 'D' ORDER BY 1"

/*
 * One error per event trigger of the server that the DDL of "what" would
 * fire with the superuser's rights; returns how many.
 */
int
check_event_triggers(Move *m, Server *s, const char *what)
{
	PGresult   *res = query(s, EVENT_TRIGGER_SQL, 0);
	int			i,
				n;

	if (res == NULL)
		refuse(m, "could not read the event triggers of the %s server: %s", s->option, db_error());
	n = PQntuples(res);
	for (i = 0; i < n; i++)
		error_msg("%s on the %s server, which %s would fire as a superuser", PQgetvalue(res, i, 0), s->option, what);
	PQclear(res);
	return n;
}

/*
 * Code of other roles that the move would run as a superuser through a
 * table of a superuser (what add_shards() makes): running "as the table's
 * owner" is running as a superuser there.  Writing a row (offline, and the
 * apply of every online move) evaluates the table's CHECK constraints, its
 * generated columns, the types of its columns (a domain's CHECKs, at any
 * depth: a composite's attributes, a range's subtype, an array's element),
 * the partition keys above it; pg_restore builds its indexes and the counts
 * plan them (expressions, predicates); a trigger enabled ALWAYS or REPLICA
 * fires when a subscription applies; the ANALYZE that the rows the move
 * writes bring about evaluates the expressions of its statistics objects.  From each of these the walk follows
 * pg_depend (and a domain's constraints, a composite type's attributes)
 * into types, operators and functions, and reports every function, operator, domain, composite,
 * range or multirange type whose owner is not a superuser on both servers:
 * she may change it at any time (CREATE OR REPLACE FUNCTION, ALTER DOMAIN
 * ... ADD CONSTRAINT), on the --to server too.  A table counts as a
 * superuser's when its owner is one on either server ($2: the superusers
 * of the --to server).  The walk stops at functions: what a superuser's
 * function calls is its owner's choice.
 *
 * Objects outside the schema exist on the --to server under their own
 * definitions, and pg_restore resolves the copy's references to them by
 * name: the first such object on each path (kind, identity), unless it is
 * reported already, is returned, as JSON in one row of kind 'outside', for
 * SU_TARGET_SQL to look up and walk again there (but those of schema shardid, which only superusers
 * make: check_shardid_needs() looks for its functions).
 */
#define SU_EDGE_SQL \
	"edge(classid, objid, refclassid, refobjid) AS (" \
	" SELECT d.classid, d.objid, d.refclassid, d.refobjid FROM pg_catalog.pg_depend d" \
	" WHERE d.refobjid >= 16384 AND d.classid <> 'pg_catalog.pg_proc'::pg_catalog.regclass" \
	"  AND d.refclassid IN ('pg_catalog.pg_proc'::pg_catalog.regclass, 'pg_catalog.pg_type'::pg_catalog.regclass," \
	"   'pg_catalog.pg_operator'::pg_catalog.regclass)" \
	"  AND (d.classid <> 'pg_catalog.pg_operator'::pg_catalog.regclass" \
	"   OR d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass)" \
	" UNION ALL SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, k.contypid," \
	"  'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid FROM pg_catalog.pg_constraint k WHERE k.contypid <> 0" \
	" UNION ALL SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid, 'pg_catalog.pg_class'::pg_catalog.regclass," \
	"  t.typrelid FROM pg_catalog.pg_type t WHERE t.typrelid <> 0 AND t.oid >= 16384)"

/* owner, description, schema, identity, kind and whether it is code, of object f */
#define SU_OBJECT_SQL \
	" CROSS JOIN LATERAL (" \
	"  SELECT p.proowner, 'function ' || p.oid::pg_catalog.regprocedure::pg_catalog.text, p.pronamespace," \
	"   p.oid::pg_catalog.regprocedure::pg_catalog.text, 'function', true" \
	"  FROM pg_catalog.pg_proc p WHERE f.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid = f.objid" \
	"  UNION ALL SELECT o.oprowner, 'operator ' || o.oid::pg_catalog.regoperator::pg_catalog.text, o.oprnamespace," \
	"   o.oid::pg_catalog.regoperator::pg_catalog.text, 'operator', true" \
	"  FROM pg_catalog.pg_operator o WHERE f.classid = 'pg_catalog.pg_operator'::pg_catalog.regclass AND o.oid = f.objid" \
	"  UNION ALL SELECT t.typowner, pg_catalog.format('type %s (%s)', pg_catalog.format_type(t.oid, NULL)," \
	"   CASE t.typtype WHEN 'd' THEN 'a domain' WHEN 'c' THEN 'a composite type' WHEN 'r' THEN 'a range type'" \
	"   WHEN 'm' THEN 'a multirange type' ELSE 'a type' END), t.typnamespace, pg_catalog.format_type(t.oid, NULL)," \
	"   'type', t.typtype IN ('d', 'c', 'r', 'm')" \
	"  FROM pg_catalog.pg_type t WHERE f.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND t.oid = f.objid" \
	" ) x(owner, descr, ns, ident, kind, code)" \
	" JOIN pg_catalog.pg_roles r ON r.oid = x.owner"

/* the schema of an object of the walk w ($1 for those of the schema's tables) */
#define SU_NAMESPACE_SQL \
	"CASE w.classid WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN" \
	" (SELECT p.pronamespace FROM pg_catalog.pg_proc p WHERE p.oid = w.objid)" \
	" WHEN 'pg_catalog.pg_operator'::pg_catalog.regclass THEN" \
	" (SELECT o.oprnamespace FROM pg_catalog.pg_operator o WHERE o.oid = w.objid)" \
	" WHEN 'pg_catalog.pg_type'::pg_catalog.regclass THEN" \
	" (SELECT t.typnamespace FROM pg_catalog.pg_type t WHERE t.oid = w.objid)" \
	" WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN" \
	" (SELECT c.relnamespace FROM pg_catalog.pg_class c WHERE c.oid = w.objid)" \
	" WHEN 'pg_catalog.pg_constraint'::pg_catalog.regclass THEN" \
	" (SELECT COALESCE(c.relnamespace, t.typnamespace) FROM pg_catalog.pg_constraint k" \
	"  LEFT JOIN pg_catalog.pg_class c ON c.oid = k.conrelid LEFT JOIN pg_catalog.pg_type t ON t.oid = k.contypid" \
	"  WHERE k.oid = w.objid) ELSE $1::oid END"

#define SU_CODE_SQL \
	"WITH RECURSIVE tbl AS (" \
	" SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_roles r ON r.oid = c.relowner" \
	" WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p') AND (r.rolsuper OR r.rolname = ANY ($2::name[])))," \
	"root(tab, what, classid, objid) AS (" \
	" SELECT t.oid, pg_catalog.format('its CHECK constraint %I', k.conname)," \
	"  'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid" \
	" FROM tbl t JOIN pg_catalog.pg_constraint k ON k.conrelid = t.oid AND k.contype = 'c'" \
	" UNION ALL SELECT t.oid, pg_catalog.format('its generated column %I', a.attname)," \
	"  'pg_catalog.pg_attrdef'::pg_catalog.regclass, d.oid" \
	" FROM tbl t JOIN pg_catalog.pg_attrdef d ON d.adrelid = t.oid" \
	" JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum AND a.attgenerated <> ''" \
	" UNION ALL SELECT t.oid, pg_catalog.format('its column %I', a.attname), 'pg_catalog.pg_type'::pg_catalog.regclass," \
	"  a.atttypid FROM tbl t JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped" \
	" UNION ALL SELECT t.oid, pg_catalog.format('its index %I', ic.relname), 'pg_catalog.pg_class'::pg_catalog.regclass," \
	"  i.indexrelid FROM tbl t JOIN pg_catalog.pg_index i ON i.indrelid = t.oid" \
	" JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid WHERE i.indexprs IS NOT NULL OR i.indpred IS NOT NULL" \
	" UNION ALL SELECT t.oid, pg_catalog.format('its trigger %I (enabled ALWAYS or REPLICA, so a subscription fires it)'," \
	"  g.tgname), 'pg_catalog.pg_trigger'::pg_catalog.regclass, g.oid" \
	" FROM tbl t JOIN pg_catalog.pg_trigger g ON g.tgrelid = t.oid AND NOT g.tgisinternal AND g.tgenabled IN ('A', 'R')" \
	" UNION ALL SELECT t.oid, pg_catalog.format('its statistics object %I', x.stxname)," \
	"  'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, x.oid" \
	" FROM tbl t JOIN pg_catalog.pg_statistic_ext x ON x.stxrelid = t.oid WHERE x.stxexprs IS NOT NULL" \
	" UNION ALL SELECT t.oid, CASE WHEN x.relid = t.oid THEN 'its partition key'" \
	"  ELSE pg_catalog.format('the partition key of %s', x.relid::pg_catalog.regclass) END, d.refclassid, d.refobjid" \
	" FROM tbl t CROSS JOIN LATERAL pg_catalog.pg_partition_ancestors(t.oid) x" \
	" JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = x.relid" \
	"  AND d.objsubid = 0 AND d.refclassid IN ('pg_catalog.pg_proc'::pg_catalog.regclass," \
	"  'pg_catalog.pg_operator'::pg_catalog.regclass))," \
	SU_EDGE_SQL "," \
	"walk(tab, what, classid, objid, via_outside) AS (" \
	" SELECT r.tab, r.what, r.classid, r.objid, false FROM root r" \
	" UNION" \
	" SELECT w.tab, w.what, e.refclassid, e.refobjid, w.via_outside OR " SU_NAMESPACE_SQL " <> $1::oid" \
	" FROM walk w JOIN edge e ON e.classid = w.classid AND e.objid = w.objid)," \
	"found AS (SELECT DISTINCT f.tab, f.what, f.via_outside, x.descr, x.ns, x.ident, x.kind," \
	"  r.rolname, x.code AND NOT (r.rolsuper AND r.rolname = ANY ($2::name[])) AS bad" \
	" FROM walk f" SU_OBJECT_SQL " WHERE f.objid >= 16384)" \
	"SELECT DISTINCT 'problem', pg_catalog.format('table %s of role %s: %s uses %s of role %s, which this move would " \
	"run as a superuser', f.tab::pg_catalog.regclass, pg_catalog.pg_get_userbyid(c.relowner), f.what, f.descr, f.rolname)" \
	" FROM found f JOIN pg_catalog.pg_class c ON c.oid = f.tab WHERE f.bad" \
	" UNION ALL SELECT 'outside', pg_catalog.json_agg(DISTINCT pg_catalog.jsonb_build_object('tab', f.tab::pg_catalog.regclass," \
	"  'what', f.what, 'kind', f.kind, 'ident', f.ident))::pg_catalog.text" \
	" FROM found f WHERE f.ns <> $1::oid AND NOT f.via_outside AND NOT f.bad" \
	"  AND f.ns IS DISTINCT FROM pg_catalog.to_regnamespace('shardid')::pg_catalog.oid" \
	" HAVING pg_catalog.count(*) > 0 ORDER BY 1, 2"

/*
 * On the --to server: the objects outside the schema that SU_CODE_SQL
 * found on the --from server ($1, JSON), looked up by their identity as
 * pg_restore resolves the copy's references, and walked again there: one
 * row per object that is missing (another role could make it in time for
 * the restore) or is code of a role that is no superuser on both servers
 * ($2: the superusers of the --from server).
 */
#define SU_TARGET_SQL \
	"WITH RECURSIVE given AS (" \
	" SELECT g.tab, g.what, g.kind, g.ident, CASE g.kind WHEN 'function' THEN 'pg_catalog.pg_proc'::pg_catalog.regclass" \
	"  WHEN 'operator' THEN 'pg_catalog.pg_operator'::pg_catalog.regclass" \
	"  ELSE 'pg_catalog.pg_type'::pg_catalog.regclass END AS classid," \
	"  CASE g.kind WHEN 'function' THEN pg_catalog.to_regprocedure(g.ident)::pg_catalog.oid" \
	"  WHEN 'operator' THEN pg_catalog.to_regoperator(g.ident)::pg_catalog.oid" \
	"  ELSE pg_catalog.to_regtype(g.ident)::pg_catalog.oid END AS objid" \
	" FROM pg_catalog.json_to_recordset($1::pg_catalog.json) AS g(tab text, what text, kind text, ident text))," \
	SU_EDGE_SQL "," \
	"walk(tab, what, classid, objid) AS (" \
	" SELECT g.tab, g.what, g.classid, g.objid FROM given g WHERE g.objid IS NOT NULL" \
	" UNION" \
	" SELECT w.tab, w.what, e.refclassid, e.refobjid FROM walk w JOIN edge e ON e.classid = w.classid AND e.objid = w.objid)" \
	"SELECT 'missing', pg_catalog.format('table %s: %s uses %s %s, which does not exist on the --to server', g.tab," \
	" g.what, g.kind, g.ident) FROM given g WHERE g.objid IS NULL" \
	" UNION SELECT 'code', pg_catalog.format('table %s: %s uses %s, which is of role %s on the --to server, and this " \
	"move would run it as a superuser there', f.tab, f.what, x.descr, r.rolname)" \
	" FROM walk f" SU_OBJECT_SQL " WHERE f.objid >= 16384 AND x.code AND NOT (r.rolsuper AND r.rolname = ANY ($2::name[]))" \
	" ORDER BY 1, 2"

/* the superusers of server s, as the text of a name[] */
static char *
superusers_of(Move *m, Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT COALESCE(pg_catalog.array_agg(rolname ORDER BY rolname), '{}')::pg_catalog.text "
				   "FROM pg_catalog.pg_roles WHERE rolsuper", 0) || v == NULL)
		refuse(m, "could not read the roles of the %s server: %s", s->option, db_error());
	return v;
}

/*
 * SU_CODE_SQL on the --from server, SU_TARGET_SQL on the --to server: one
 * error each; *missing counts those of objects missing on the --to server
 */
static int
check_superuser_code(Move *m, int *missing)
{
	char	   *su_from = superusers_of(m, &m->from);
	char	   *su_to = superusers_of(m, &m->to);
	char	   *outside = NULL;
	PGresult   *res;
	int			i,
				problems = 0;

	res = query(&m->from, SU_CODE_SQL, 2, m->src_schema_oid, su_to);
	if (res == NULL)
		refuse(m, "could not read the code of the tables of schema \"%s\": %s", m->schema, db_error());
	for (i = 0; i < PQntuples(res); i++)
	{
		if (is(PQgetvalue(res, i, 0), "outside"))
			outside = xstrdup(PQgetvalue(res, i, 1));
		else
		{
			error_msg("%s", PQgetvalue(res, i, 1));
			problems++;
		}
	}
	PQclear(res);
	if (outside != NULL)
	{
		res = query(&m->to, SU_TARGET_SQL, 2, outside, su_from);
		if (res == NULL)
			refuse(m, "could not look up on the --to server what the tables of schema \"%s\" use: %s", m->schema,
				   db_error());
		for (i = 0; i < PQntuples(res); i++, problems++)
		{
			error_msg("%s", PQgetvalue(res, i, 1));
			if (is(PQgetvalue(res, i, 0), "missing"))
				(*missing)++;
		}
		PQclear(res);
		free(outside);
	}
	free(su_from);
	free(su_to);
	return problems;
}

/* what the move could not run as its owner (SHAPE_SQL), and event triggers */
static int
check_shapes(Move *m)
{
	bool		old_apply = m->online && PQserverVersion(m->to.conn) < 160000;
	PGresult   *res;
	int			problems = 0,
				missing = 0,
				i,
				k;
	Server	   *s[] = {&m->from, &m->to};

	res = query(&m->from, SHAPE_SQL, 3, m->src_schema_oid, m->online ? "false" : "true",
				old_apply ? "true" : "false");
	if (res == NULL)
		refuse(m, "could not read the definitions of schema \"%s\": %s", m->schema, db_error());
	for (i = 0; i < PQntuples(res); i++, problems++)
		error_msg("%s", PQgetvalue(res, i, 0));
	PQclear(res);
	problems += check_superuser_code(m, &missing);
	for (k = 0; k < 2; k++)
		problems += check_event_triggers(m, s[k], "the move's DDL");
	if (problems > missing)
	{
		detail_msg("shardid-move runs code of other roles only with their rights.");
		hint_msg(old_apply ? "Move the shard offline, or into a PostgreSQL 16+ server; or drop these objects "
				 "(or ALTER EVENT TRIGGER ... DISABLE) for the move." :
				 "Drop these objects (or ALTER EVENT TRIGGER ... DISABLE) for the move, or have a superuser own the "
				 "functions and types they use.");
	}
	return problems;
}

/*
 * An online move, in the transaction that creates the subscription on s
 * (the --to server): while the subscription exists, the copy's schema
 * belongs to the move's superuser (its owner keeps USAGE), so that nobody
 * can swap a table of it for one of her own (the owner of a schema may drop
 * any table in it) and have the subscription fill hers.  pg_restore gave
 * the schema and the tables to their owners, who could change them since:
 * every table is locked, and the schema must hold exactly the tables of
 * the --from server, each of its kind and owner there.
 *
 * Into PostgreSQL 15 (apply_as_superuser), whose subscription applies
 * every change as a superuser, also the tables of roles that are no
 * superuser become the move's superuser's, after the check of their code
 * again as check_shapes() checked it on the --from server, so that nobody
 * gives them code the apply would run (a trigger enabled ALWAYS, a CHECK,
 * an index expression).
 *
 * The verification gives them back once the subscription is gone
 * (give_back_owners()).  Returns false on a database error; *changed says
 * that a check found something (each reported).
 */
bool
hold_target_tables(Move *m, Server *s, bool apply_as_superuser, bool *changed)
{
	PGresult   *res;
	int			i;
	bool		ok = true;

	*changed = false;
	if (!lock_tables(m, s, "SHARE ROW EXCLUSIVE"))
		return false;
	/*
	 * Only the tables of the --from server, of their kind and owner: any
	 * other would stay the superuser's after the move (give_back_owners()
	 * knows the owners of these only), and the owner of the schema may have
	 * made her own in place of a superuser's, with her privileges, into
	 * which the subscription would copy the superuser's rows
	 */
	res = query(s,
				"SELECT c.relname, c.relkind, c.oid::pg_catalog.regclass, pg_catalog.pg_get_userbyid(c.relowner) "
				"FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p') ORDER BY 1",
				1, m->dst_schema_oid);
	if (res == NULL)
		return false;
	for (i = 0; i < PQntuples(res); i++)
	{
		int			k;

		for (k = 0; k < m->ntables; k++)
			if (is(m->tables[k].name, PQgetvalue(res, i, 0)) && m->tables[k].kind == PQgetvalue(res, i, 1)[0])
				break;
		if (k == m->ntables)
			error_msg("table %s is not on the --from server as it is on the --to server "
					  "(made on the --to server after the copy of the definitions)", PQgetvalue(res, i, 2));
		else if (!is(m->tables[k].owner, PQgetvalue(res, i, 3)))
			error_msg("table %s belongs to role %s on the --to server, to role %s on the --from server "
					  "(changed on the --to server after the copy of the definitions)", PQgetvalue(res, i, 2),
					  PQgetvalue(res, i, 3), m->tables[k].owner);
		else
			continue;
		*changed = true;
	}
	PQclear(res);
	if (*changed)
		return false;
	if (apply_as_superuser)
	{
		res = query(s, SHAPE_SQL, 3, m->dst_schema_oid, "false", "true");
		if (res == NULL)
			return false;
		for (i = 0; i < PQntuples(res); i++)
			error_msg("%s (changed on the --to server after the copy of the definitions)", PQgetvalue(res, i, 0));
		*changed = PQntuples(res) > 0;
		PQclear(res);
		if (*changed)
			return false;
	}
	res = query(s,
				"SELECT pg_catalog.format('ALTER SCHEMA %I OWNER TO CURRENT_USER', n.nspname) "
				"FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid = n.nspowner "
				"WHERE n.oid = $1::oid AND NOT r.rolsuper "
				"UNION ALL "
				"SELECT pg_catalog.format('GRANT USAGE ON SCHEMA %I TO %I', n.nspname, r.rolname) "
				"FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid = n.nspowner "
				"WHERE n.oid = $1::oid AND NOT r.rolsuper "
				"UNION ALL "
				"SELECT pg_catalog.format('ALTER TABLE %s OWNER TO CURRENT_USER', c.oid::pg_catalog.regclass) "
				"FROM pg_catalog.pg_class c JOIN pg_catalog.pg_roles r ON r.oid = c.relowner "
				"WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p') AND NOT r.rolsuper AND $2",
				2, m->dst_schema_oid, apply_as_superuser ? "true" : "false");
	if (res == NULL)
		return false;
	for (i = 0; i < PQntuples(res) && ok; i++)
		ok = exec_sql(s, PQgetvalue(res, i, 0), 0);
	PQclear(res);
	return ok;
}

/*
 * What pg_restore and the subscription will need on the --to server, read
 * on the --from server as (kind, name, what needs it) rows and looked up on
 * the --to server: roles that own or were granted anything in the schema,
 * tables outside the schema that its foreign keys reference, extensions
 * whose types or functions it uses; and, for --online, its unlogged tables,
 * which logical replication does not carry.  One message per problem.
 */
#define NEEDS_SQL \
	"WITH obj AS (" \
	" SELECT nspowner AS owner, nspacl AS acl, 'schema ' || pg_catalog.quote_ident(nspname) AS what" \
	" FROM pg_catalog.pg_namespace WHERE oid = $1::oid" \
	" UNION ALL SELECT relowner, relacl, pg_catalog.format('%s %s', CASE relkind WHEN 'S' THEN 'sequence' " \
	"  WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'table' END, oid::pg_catalog.regclass)" \
	" FROM pg_catalog.pg_class WHERE relnamespace = $1::oid AND relkind IN ('r', 'p', 'S', 'v', 'm', 'f')" \
	" UNION ALL SELECT c.relowner, a.attacl, pg_catalog.format('column %I of %s', a.attname, c.oid::pg_catalog.regclass)" \
	" FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid" \
	" WHERE c.relnamespace = $1::oid AND a.attacl IS NOT NULL" \
	" UNION ALL SELECT proowner, proacl, 'function ' || oid::pg_catalog.regprocedure::pg_catalog.text" \
	" FROM pg_catalog.pg_proc WHERE pronamespace = $1::oid" \
	" UNION ALL SELECT typowner, typacl, 'type ' || oid::pg_catalog.regtype::pg_catalog.text" \
	" FROM pg_catalog.pg_type WHERE typnamespace = $1::oid AND typtype IN ('d', 'e', 'r', 'm'))" \
	"SELECT 'role', pg_catalog.pg_get_userbyid(owner), pg_catalog.min(what) || ' is owned by it' FROM obj " \
	" GROUP BY owner" \
	" UNION ALL SELECT 'role', pg_catalog.pg_get_userbyid(x.grantee), pg_catalog.min(obj.what) || ' grants it privileges'" \
	" FROM obj, pg_catalog.aclexplode(obj.acl) x WHERE x.grantee <> 0 GROUP BY x.grantee" \
	" UNION ALL SELECT 'table', pg_catalog.format('%I.%I', n.nspname, r.relname)," \
	"  pg_catalog.format('foreign key %I of %s references it', con.conname, con.conrelid::pg_catalog.regclass)" \
	" FROM pg_catalog.pg_constraint con JOIN pg_catalog.pg_class c ON c.oid = con.conrelid" \
	" JOIN pg_catalog.pg_class r ON r.oid = con.confrelid JOIN pg_catalog.pg_namespace n ON n.oid = r.relnamespace" \
	" WHERE con.contype = 'f' AND c.relnamespace = $1::oid AND r.relnamespace <> $1::oid" \
	" UNION ALL SELECT DISTINCT 'extension', e.extname::pg_catalog.text, 'schema ' || pg_catalog.quote_ident(s.nspname) || ' uses it'" \
	" FROM pg_catalog.pg_depend d" \
	" JOIN pg_catalog.pg_depend m ON m.classid = d.refclassid AND m.objid = d.refobjid AND m.deptype = 'e'" \
	" JOIN pg_catalog.pg_extension e ON e.oid = m.refobjid" \
	" JOIN pg_catalog.pg_namespace s ON s.oid = $1::oid" \
	" WHERE d.refclassid IN ('pg_catalog.pg_type'::pg_catalog.regclass, 'pg_catalog.pg_proc'::pg_catalog.regclass," \
	"  'pg_catalog.pg_operator'::pg_catalog.regclass) AND e.extname <> 'shardid' AND (" \
	"  (d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid IN" \
	"   (SELECT oid FROM pg_catalog.pg_class WHERE relnamespace = $1::oid))" \
	"  OR (d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid IN (SELECT ad.oid FROM pg_catalog.pg_attrdef ad" \
	"   JOIN pg_catalog.pg_class c ON c.oid = ad.adrelid WHERE c.relnamespace = $1::oid))" \
	"  OR (d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid IN (SELECT con.oid FROM" \
	"   pg_catalog.pg_constraint con JOIN pg_catalog.pg_class c ON c.oid = con.conrelid WHERE c.relnamespace = $1::oid))" \
	"  OR (d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid IN" \
	"   (SELECT oid FROM pg_catalog.pg_proc WHERE pronamespace = $1::oid)))" \
	" UNION ALL SELECT 'unlogged', c.oid::pg_catalog.regclass::pg_catalog.text, ''" \
	" FROM pg_catalog.pg_class c WHERE $2 AND c.relnamespace = $1::oid AND c.relpersistence = 'u' AND c.relkind = 'r'" \
	" ORDER BY 1, 2"

/*
 * What the shard's objects need of shardid on the --to server, read on the
 * --from server as (kind, function, user) rows: every function of the
 * extension that the schema's objects call (DEFAULTs, constraints,
 * triggers, indexes, its types and functions; pg_depend), which must exist
 * there with the same arguments; and, kind 'strict', the DEFAULTs,
 * triggers and domains that make ids without a sequence
 * (shardid.next_id(shard), next_ids(), the set_id() trigger), which fail on
 * a server in session mode (PostgreSQL before 17 without shardid in
 * shared_preload_libraries): the shard would take writes nowhere.
 */
#define NEEDS_SHARDID_SQL \
	"WITH objs(classid, objid) AS (" \
	" SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass, d.oid FROM pg_catalog.pg_attrdef d" \
	" JOIN pg_catalog.pg_class c ON c.oid = d.adrelid WHERE c.relnamespace = $1::oid" \
	" UNION ALL SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid FROM pg_catalog.pg_constraint k" \
	" LEFT JOIN pg_catalog.pg_class c ON c.oid = k.conrelid LEFT JOIN pg_catalog.pg_type t ON t.oid = k.contypid" \
	" WHERE c.relnamespace = $1::oid OR t.typnamespace = $1::oid" \
	" UNION ALL SELECT 'pg_catalog.pg_trigger'::pg_catalog.regclass, g.oid FROM pg_catalog.pg_trigger g" \
	" JOIN pg_catalog.pg_class c ON c.oid = g.tgrelid WHERE c.relnamespace = $1::oid AND NOT g.tgisinternal" \
	" UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid FROM pg_catalog.pg_class c" \
	" WHERE c.relnamespace = $1::oid" \
	" UNION ALL SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid FROM pg_catalog.pg_type t" \
	" WHERE t.typnamespace = $1::oid" \
	" UNION ALL SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, p.oid FROM pg_catalog.pg_proc p" \
	" WHERE p.pronamespace = $1::oid" \
	" UNION ALL SELECT 'pg_catalog.pg_rewrite'::pg_catalog.regclass, w.oid FROM pg_catalog.pg_rewrite w" \
	" JOIN pg_catalog.pg_class c ON c.oid = w.ev_class WHERE c.relnamespace = $1::oid)," \
	"uses AS (" \
	" SELECT d.classid, d.objid, d.objsubid, d.refobjid AS fn FROM pg_catalog.pg_depend d" \
	" JOIN objs o ON o.classid = d.classid AND o.objid = d.objid" \
	" JOIN pg_catalog.pg_depend m ON m.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND m.objid = d.refobjid" \
	"  AND m.deptype = 'e' JOIN pg_catalog.pg_extension e ON e.oid = m.refobjid AND e.extname = 'shardid'" \
	" WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass)," \
	"named AS (" \
	" SELECT u.fn, u.fn::pg_catalog.regprocedure::pg_catalog.text AS ident, CASE u.classid" \
	"  WHEN 'pg_catalog.pg_attrdef'::pg_catalog.regclass THEN (SELECT pg_catalog.format('table %s: the DEFAULT of " \
	"column %I', d.adrelid::pg_catalog.regclass, a.attname) FROM pg_catalog.pg_attrdef d JOIN pg_catalog.pg_attribute a" \
	"   ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.oid = u.objid)" \
	"  WHEN 'pg_catalog.pg_trigger'::pg_catalog.regclass THEN (SELECT pg_catalog.format('table %s: trigger %I', " \
	"g.tgrelid::pg_catalog.regclass, g.tgname) FROM pg_catalog.pg_trigger g WHERE g.oid = u.objid)" \
	"  ELSE pg_catalog.pg_describe_object(u.classid, u.objid, u.objsubid) END AS what FROM uses u)" \
	"SELECT 'strict', n.ident, n.what FROM named n WHERE n.fn IN (" \
	" pg_catalog.to_regprocedure('shardid.next_id(integer)'), pg_catalog.to_regprocedure('shardid.next_ids(integer, integer)')," \
	" pg_catalog.to_regprocedure('shardid.set_id()'))" \
	" UNION ALL SELECT 'function', n.ident, pg_catalog.min(n.what) FROM named n GROUP BY n.ident" \
	" ORDER BY 1 DESC, 3, 2"

/*
 * What the shard's ids need on the --to server (NEEDS_SHARDID_SQL), and its
 * converted tables' legacy boundaries (shardid.legacy_ids, from 1.3 on,
 * which the cutover records there): one error per problem.
 */
static int
check_shardid_needs(Move *m)
{
	PGresult   *res = query(&m->from, NEEDS_SHARDID_SQL, 1, m->src_schema_oid);
	char	   *mode = NULL;
	char	   *version = NULL;
	int			i,
				problems = 0,
				strict = 0;
	bool		keeps_from,
				keeps_to;

	if (res == NULL)
		refuse(m, "could not read what schema \"%s\" needs of shardid: %s", m->schema, db_error());
	if (!get_value(&m->to, &mode, "SELECT mode FROM shardid.info()", 0) ||
		!get_value(&m->to, &version, "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'shardid'", 0))
		refuse(m, "could not read shardid.info() on the --to server: %s", db_error());
	for (i = 0; i < PQntuples(res); i++)
	{
		const char *kind = PQgetvalue(res, i, 0);
		const char *fn = PQgetvalue(res, i, 1);
		const char *what = PQgetvalue(res, i, 2);
		char	   *found = NULL;

		if (is(kind, "strict"))
		{
			if (is(mode, "strict"))
				continue;
			error_msg("%s calls %s, which makes ids without a sequence and needs strict mode, but shardid on the "
					  "--to server runs in %s mode (not in shared_preload_libraries): every INSERT into the table "
					  "would fail there", what, fn, mode ? mode : "no");
			problems++;
			strict++;
			continue;
		}
		if (!get_value(&m->to, &found, "SELECT pg_catalog.to_regprocedure($1)::pg_catalog.text", 1, fn))
			refuse(m, "could not query the --to server: %s", db_error());
		if (found == NULL)
		{
			error_msg("function %s does not exist on the --to server, whose shardid is %s: %s calls it; run ALTER "
					  "EXTENSION shardid UPDATE there", fn, version ? version : "unknown", what);
			problems++;
		}
		free(found);
	}
	PQclear(res);
	if (strict > 0)
		hint_msg("Add shardid to shared_preload_libraries on the --to server and restart it (strict mode; from "
				 "PostgreSQL 17 on it needs no preloading), or give these tables a sequence (DEFAULT "
				 "shardid.next_id(shard, nextval(...))) before the move.");

	/* the converted tables' boundaries, which only a --to server on 1.3 or later keeps */
	if (!keeps_legacy_ids(&m->from, &keeps_from) || !keeps_legacy_ids(&m->to, &keeps_to))
		refuse(m, "could not query the servers: %s", db_error());
	if (keeps_from && !keeps_to)
	{
		char	   *v = NULL;

		if (!get_value(&m->from, &v,
					   "SELECT pg_catalog.string_agg(c.oid::pg_catalog.regclass::pg_catalog.text, ', ' ORDER BY 1) "
					   "FROM shardid.legacy_ids l JOIN pg_catalog.pg_class c ON c.oid = l.tab::pg_catalog.oid "
					   "WHERE c.relnamespace = $1::oid", 1, m->src_schema_oid))
			refuse(m, "could not read shardid.legacy_ids on the --from server: %s", db_error());
		if (v != NULL)
		{
			error_msg("schema \"%s\" holds tables converted by shardid.convert_table() (%s), whose legacy "
					  "boundaries the --to server's shardid %s cannot keep (it needs 1.3 or later): run ALTER "
					  "EXTENSION shardid UPDATE there first", m->schema, v, version ? version : "");
			problems++;
			free(v);
		}
	}
	free(mode);
	free(version);
	return problems;
}

/*
 * The room the copy needs on the --to server, by estimate (see
 * ROOM_MARGIN_PERCENT): an error when --to-free says it is not there.
 * PostgreSQL has no SQL that reports the free space of a file system; the
 * only way a superuser has, COPY FROM PROGRAM 'df ...', runs a shell command
 * on the database host, which shardid-move does not do.  So the operator
 * gives the free space, or the estimate is only reported (say_room()).
 */
static int
check_room(Move *m)
{
	char	   *size = NULL;
	char	   *wal = NULL;
	long long	s,
				w;
	char		b1[32],
				b2[32],
				b3[32],
				b4[32];

	if (!get_value(&m->from, &size,
				   "SELECT COALESCE(pg_catalog.sum(pg_catalog.pg_total_relation_size(c.oid)), 0)::text "
				   "FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'm', 'S')",
				   1, m->src_schema_oid))
		refuse(m, "could not read the size of schema \"%s\" on the --from server: %s", m->schema, db_error());
	if (!get_value(&m->to, &wal, "SELECT pg_catalog.pg_size_bytes(pg_catalog.current_setting('max_wal_size'))::text", 0))
		refuse(m, "could not read max_wal_size on the --to server: %s", db_error());
	s = atoll(size);
	w = atoll(wal);
	free(size);
	free(wal);
	m->size_bytes = s;
	m->room_needed = s + s * ROOM_MARGIN_PERCENT / 100 + (s < w ? s : w);
	if (m->to_free < 0 || m->room_needed <= m->to_free)
		return 0;
	error_msg("the --to server has %s free (--to-free), but the copy of shard %d needs about %s: %s of tables, "
			  "indexes and sequences on the --from server, %d%% more, and as much again for the WAL it writes "
			  "(at most the --to server's max_wal_size, %s)",
			  fmt_bytes(b1, sizeof(b1), (double) m->to_free), m->shard, fmt_bytes(b2, sizeof(b2), (double) m->room_needed),
			  fmt_bytes(b3, sizeof(b3), (double) s), ROOM_MARGIN_PERCENT, fmt_bytes(b4, sizeof(b4), (double) w));
	return 1;
}

/* the estimate, in the report of a move that passed the checks */
void
say_room(Move *m)
{
	char		b1[32],
				b2[32],
				b3[32];

	if (m->size_bytes < 0)
		return;
	if (m->to_free >= 0)
		say("shard %d takes %s on the --from server; the copy needs about %s on the --to server, which has %s "
			"free (--to-free)", m->shard, fmt_bytes(b1, sizeof(b1), (double) m->size_bytes),
			fmt_bytes(b2, sizeof(b2), (double) m->room_needed), fmt_bytes(b3, sizeof(b3), (double) m->to_free));
	else
		say("shard %d takes %s on the --from server; the copy needs about %s on the --to server (not checked: "
			"give --to-free)", m->shard, fmt_bytes(b1, sizeof(b1), (double) m->size_bytes),
			fmt_bytes(b2, sizeof(b2), (double) m->room_needed));
}

/*
 * The --to server's registration reads every id column of the schema (1.4
 * on) and refuses one it cannot read (no btree index holds it, or its type
 * is not bigint): asked of the --from server first where it can answer
 * (shardid 1.4 there too), so that such a shard is refused before anything
 * changes rather than undone at its cutover.
 */
static int
check_floor_readable(Move *m)
{
	char	   *has = NULL;

	if (!get_value(&m->from, &has,
				   "SELECT pg_catalog.to_regprocedure('shardid_internal.check_id_columns(name)')::pg_catalog.text", 0))
		refuse(m, "could not query the --from server: %s", db_error());
	if (has == NULL)
		return 0;
	free(has);
	if (exec_sql(&m->from, "SELECT shardid_internal.check_id_columns($1::pg_catalog.name)", 1, m->schema))
		return 0;
	error_msg("the --to server would refuse to register shard %d: %s", m->shard, db_error());
	hint_msg("Give the column a btree index (or the bigint type) on the --from server first: "
			 "SELECT problem, object, fix FROM shardid.doctor(scan_rows => false) there names the statement.");
	return 1;
}

/* an error of check_large_objects(): before anything changed, or in the move */
static NORETURN void
lo_stop(Move *m, bool moving, char *why)
{
	if (moving)
		fail(m, "%s", why);
	refuse(m, "%s", why);
}

/*
 * Large objects live outside any schema: pg_dump --schema leaves them out,
 * so a move copies an oid column that points at one as a number, which on
 * the --to server points at nothing (or at another large object).  A
 * column of type oid, or of a domain over it (contrib's lo), that holds the
 * oid of a large object the --to server lacks is refused, with the step:
 * copy them there under the same oids first.  Only such columns are read,
 * each as its table's owner (owner_values(): planning the query runs the
 * constant parts of her partial-index predicates), once check_shapes() has
 * passed (no code of another role reached from a superuser's table).
 * Read again in the verification (moving), once the copy holds every row
 * and the shard takes no writes: a row written after the checks may point
 * at a large object made since; an error there ends the move undone.
 */
int
check_large_objects(Move *m, bool moving)
{
	PGresult   *cols = query(&m->from,
							 "WITH RECURSIVE oid_types(t) AS ("
							 " SELECT 'pg_catalog.oid'::pg_catalog.regtype::pg_catalog.oid"
							 " UNION SELECT ty.oid FROM pg_catalog.pg_type ty JOIN oid_types o"
							 " ON ty.typbasetype OPERATOR(pg_catalog.=) o.t WHERE ty.typtype OPERATOR(pg_catalog.=) 'd') "
							 "SELECT pg_catalog.format('%I.%I', n.nspname, c.relname), pg_catalog.quote_ident(a.attname::pg_catalog.text), "
							 "pg_catalog.pg_get_userbyid(c.relowner)::pg_catalog.text "
							 "FROM pg_catalog.pg_attribute a "
							 "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid "
							 "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
							 "WHERE c.relnamespace OPERATOR(pg_catalog.=) $1::pg_catalog.oid "
							 "AND c.relkind OPERATOR(pg_catalog.=) 'r' AND a.attnum OPERATOR(pg_catalog.>) 0 "
							 "AND NOT a.attisdropped AND a.atttypid OPERATOR(pg_catalog.=) ANY (SELECT t FROM oid_types) "
							 "ORDER BY 1, 2",
							 1, m->src_schema_oid);
	int			n,
				problems = 0;
	char	  **owners;
	char	  **sqls;
	char	  **oids;

	if (cols == NULL)
		lo_stop(m, moving, xprintf("could not read the oid columns of schema \"%s\": %s", m->schema, db_error()));
	n = PQntuples(cols);
	owners = xcalloc(n + 1, sizeof(char *));
	sqls = xcalloc(n + 1, sizeof(char *));
	oids = xcalloc(n + 1, sizeof(char *));
	for (int i = 0; i < n; i++)
	{
		const char *column = PQgetvalue(cols, i, 1);

		owners[i] = PQgetvalue(cols, i, 2);
		sqls[i] = xprintf("SELECT pg_catalog.array_agg(DISTINCT x.%s ORDER BY x.%s)::pg_catalog.text FROM ONLY %s x "
						  "WHERE x.%s OPERATOR(pg_catalog.=) ANY (SELECT l.oid FROM pg_catalog.pg_largeobject_metadata l)",
						  column, column, PQgetvalue(cols, i, 0), column);
	}
	if (!owner_values(&m->from, n, owners, sqls, oids))
		lo_stop(m, moving, xprintf("could not read the oid columns of schema \"%s\" on the --from server: %s",
								   m->schema, db_error()));
	for (int i = 0; i < n; i++)
	{
		char	   *missing = NULL;

		if (oids[i] != NULL &&
			!get_value(&m->to, &missing,
					   "SELECT pg_catalog.count(*)::pg_catalog.text || CASE WHEN pg_catalog.count(*) OPERATOR(pg_catalog.>) 1 "
					   "THEN ', the first oid ' ELSE ', oid ' END || pg_catalog.min(o)::pg_catalog.text "
					   "FROM pg_catalog.unnest($1::pg_catalog.oid[]) o WHERE NOT EXISTS "
					   "(SELECT FROM pg_catalog.pg_largeobject_metadata l WHERE l.oid OPERATOR(pg_catalog.=) o) "
					   "HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) 0",
					   1, oids[i]))
			lo_stop(m, moving, xprintf("could not query the --to server: %s", db_error()));
		if (missing != NULL)
		{
			error_msg("column %s of table %s points at large objects that the --to server lacks (%s): "
					  "a move carries no large object (pg_dump --schema leaves them out), and the copied "
					  "oids would point at nothing", PQgetvalue(cols, i, 1), PQgetvalue(cols, i, 0), missing);
			hint_msg("Copy them to the --to server under the same oids first (there, SELECT pg_catalog.lo_from_bytea(oid, data) "
					 "for each, with data from SELECT pg_catalog.lo_get(oid) on the --from server), or keep their contents "
					 "in a bytea column; then move the shard again.");
			problems++;
		}
		free(missing);
		free(oids[i]);
		free(sqls[i]);
	}
	free(owners);
	free(sqls);
	free(oids);
	PQclear(cols);
	return problems;
}

static int
preflight(Move *m)
{
	PGresult   *res = query(&m->from, NEEDS_SQL, 2, m->src_schema_oid, m->online ? "true" : "false");
	int			i,
				problems = 0;

	if (res == NULL)
		refuse(m, "could not read what schema \"%s\" needs: %s", m->schema, db_error());
	for (i = 0; i < PQntuples(res); i++)
	{
		const char *kind = PQgetvalue(res, i, 0);
		const char *name = PQgetvalue(res, i, 1);
		const char *why = PQgetvalue(res, i, 2);
		char	   *found = NULL;
		bool		ok;

		if (is(kind, "unlogged"))
		{
			error_msg("table %s is unlogged: --online cannot carry it (logical replication publishes no "
					  "unlogged table); move the shard offline, or ALTER TABLE %s SET LOGGED first", name, name);
			problems++;
			continue;
		}
		if (is(kind, "role"))
			ok = get_value(&m->to, &found, "SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1::name", 1, name);
		else if (is(kind, "table"))
			ok = get_value(&m->to, &found, "SELECT pg_catalog.to_regclass($1)::pg_catalog.text", 1, name);
		else
			ok = get_value(&m->to, &found, "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = $1::name", 1, name);
		if (!ok)
			refuse(m, "could not query the --to server: %s", db_error());
		if (found == NULL)
		{
			error_msg("%s %s does not exist on the --to server: %s", kind, name, why);
			problems++;
		}
		free(found);
	}
	PQclear(res);
	problems += check_shardid_needs(m);
	problems += check_floor_readable(m);
	problems += check_room(m);
	problems += check_shapes(m);
	/* reads tables of other roles: only once no code of theirs reaches a superuser */
	if (problems == 0)
		problems += check_large_objects(m, false);
	return problems;
}

/*
 * Citus places the tables of its tenant schemas (and of any schema with
 * distributed tables) on its workers and moves them itself; a copy made
 * behind its back would leave its metadata pointing at the old placement.
 */
static void
check_not_citus(Move *m, Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_partition')::text", 0))
		refuse(m, "could not query the %s server: %s", s->option, db_error());
	if (v == NULL)
		return;
	if (!get_value(s, &v,
				   "SELECT pg_catalog.string_agg(c.relname::pg_catalog.text, ', ') FROM pg_catalog.pg_dist_partition p "
				   "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) p.logicalrelid "
				   "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
				   "WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name", 1, m->schema))
		refuse(m, "could not query the %s server: %s", s->option, db_error());
	if (v != NULL)
		refuse(m, "schema \"%s\" holds Citus tables on the %s server (%s): Citus places and moves them; "
			   "run SELECT citus_schema_move('%s', '<worker host>', <worker port>); on the coordinator instead; "
			   "nothing was changed", m->schema, s->option, v, m->schema);
}

/*
 * The columns of the schema's ($1) tables of REPLICA IDENTITY FULL whose
 * type has no equality operator, "table.column (type)": the apply of an
 * UPDATE or DELETE looks the old row up by comparing every column but
 * generated ones with its type's default btree or hash equality
 * (tuples_equal(), lookup_type_cache()), and fails on such a column
 * ("could not identify an equality operator for type json"), again at each
 * retry, so the --to server never catches up and the shard stays frozen
 * until --timeout.  The types are walked as the type cache does: a domain
 * by its base type, an array by its element, a composite by its
 * attributes; ranges, multiranges and enums have one; a base type has one
 * when a default btree or hash operator class takes it, or a type it
 * converts to implicitly without a function (varchar: text_ops).
 */
#define NO_EQUALITY_SQL \
	"WITH RECURSIVE need(rel, col, top, t) AS (SELECT c.relname, a.attname, a.atttypid, a.atttypid FROM pg_catalog.pg_class c " \
	"JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid " \
	"WHERE c.relnamespace OPERATOR(pg_catalog.=) $1::pg_catalog.oid AND c.relkind OPERATOR(pg_catalog.=) 'r' " \
	"AND c.relreplident OPERATOR(pg_catalog.=) 'f' AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped " \
	"AND a.attgenerated OPERATOR(pg_catalog.=) '' " \
	"UNION SELECT n.rel, n.col, n.top, x.t FROM need n JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) n.t, " \
	"LATERAL (SELECT y.typbasetype WHERE y.typtype OPERATOR(pg_catalog.=) 'd' " \
	"UNION ALL SELECT y.typelem WHERE y.typsubscript OPERATOR(pg_catalog.=) 'pg_catalog.array_subscript_handler'::pg_catalog.regproc " \
	"UNION ALL SELECT k.atttypid FROM pg_catalog.pg_attribute k WHERE y.typtype OPERATOR(pg_catalog.=) 'c' " \
	"AND k.attrelid OPERATOR(pg_catalog.=) y.typrelid AND k.attnum OPERATOR(pg_catalog.>) 0 AND NOT k.attisdropped) x(t)) " \
	"SELECT pg_catalog.string_agg(DISTINCT pg_catalog.format('%I.%I (%s)', n.rel, n.col, pg_catalog.format_type(n.top, NULL) " \
	"OPERATOR(pg_catalog.||) CASE WHEN n.top OPERATOR(pg_catalog.<>) n.t THEN ', of ' OPERATOR(pg_catalog.||) " \
	"pg_catalog.format_type(n.t, NULL) ELSE '' END), ', ') " \
	"FROM need n JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) n.t " \
	"WHERE y.typtype OPERATOR(pg_catalog.=) 'b' " \
	"AND y.typsubscript OPERATOR(pg_catalog.<>) 'pg_catalog.array_subscript_handler'::pg_catalog.regproc " \
	"AND NOT EXISTS (SELECT FROM pg_catalog.pg_opclass o JOIN pg_catalog.pg_am m ON m.oid OPERATOR(pg_catalog.=) o.opcmethod " \
	"WHERE m.amname OPERATOR(pg_catalog.=) ANY ('{btree,hash}'::pg_catalog.name[]) AND o.opcdefault " \
	"AND (o.opcintype OPERATOR(pg_catalog.=) n.t OR EXISTS (SELECT FROM pg_catalog.pg_cast k " \
	"WHERE k.castsource OPERATOR(pg_catalog.=) n.t AND k.casttarget OPERATOR(pg_catalog.=) o.opcintype " \
	"AND k.castmethod OPERATOR(pg_catalog.=) 'b' AND k.castcontext OPERATOR(pg_catalog.=) 'i')))"

/* a new move: everything is checked before anything changes */
void
check_new_move(Move *m)
{
	char	   *v = NULL;
	char	   *max_shard = NULL;

	if (!get_value(&m->from, &max_shard, "SELECT max_shard::text FROM shardid.info()", 0))
		refuse(m, "could not read shardid.info(): %s", db_error());
	if (m->shard > atoi(max_shard))
		refuse(m, "shard %d is out of range: a shard must be between 0 and %s", m->shard, max_shard);

	if (!registered_schema(&m->from, m->shard_s, &m->schema))
		refuse(m, "could not read the shard registry of the --from server: %s", db_error());
	if (m->schema == NULL)
		refuse(m, "shard %d does not live in the --from database (see SELECT * FROM shardid.shards there)", m->shard);
	check_not_citus(m, &m->from);
	check_not_citus(m, &m->to);

	if (!registered_schema(&m->to, m->shard_s, &v))
		refuse(m, "could not read the shard registry of the --to server: %s", db_error());
	if (v != NULL)
		refuse(m, "shard %d already lives on the --to server (schema \"%s\"); nothing was changed", m->shard, v);
	if (!get_value(&m->to, &v, "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = $1::name", 1, m->schema))
		refuse(m, "could not query the --to server: %s", db_error());
	if (v != NULL)
		refuse(m, "schema \"%s\" already exists on the --to server; nothing was changed", m->schema);

	inspect_source(m);

	if (preflight(m) > 0)
		refuse(m, "shard %d cannot move as it is (see above); nothing was changed", m->shard);

	/*
	 * A move copies the schema: a partition or inheritance child of one of
	 * its tables in another schema, whose rows the parent's queries read,
	 * would stay behind (the cutover's comparison would end the move after
	 * the whole copy; say it before anything changes).
	 */
	if (!get_value(&m->from, &v,
				   "SELECT pg_catalog.string_agg(pg_catalog.format('%s (of %s)', ch.oid::pg_catalog.regclass, "
				   "par.oid::pg_catalog.regclass), ', ' ORDER BY ch.oid::pg_catalog.regclass::pg_catalog.text) "
				   "FROM pg_catalog.pg_inherits i "
				   "JOIN pg_catalog.pg_class par ON par.oid OPERATOR(pg_catalog.=) i.inhparent "
				   "JOIN pg_catalog.pg_class ch ON ch.oid OPERATOR(pg_catalog.=) i.inhrelid "
				   "WHERE par.relnamespace OPERATOR(pg_catalog.=) $1::pg_catalog.oid "
				   "AND ch.relnamespace OPERATOR(pg_catalog.<>) par.relnamespace "
				   "AND ch.relkind OPERATOR(pg_catalog.<>) ALL ('{i,I}'::pg_catalog.\"char\"[])",
				   1, m->src_schema_oid))
		refuse(m, "could not query the --from server: %s", db_error());
	if (v != NULL)
		refuse(m, "tables of schema \"%s\" have partitions or inheritance children in other schemas: %s; "
			   "a move copies the schema only, and their rows would stay behind: attach them to the schema "
			   "(ALTER TABLE ... SET SCHEMA) or detach them first; nothing was changed", m->schema, v);

	if (m->online)
	{
		char	   *bad = NULL;
		char	   *free_slots = NULL;

		if (!get_value(&m->from, &v, "SELECT pg_catalog.current_setting('wal_level')", 0))
			refuse(m, "could not query the --from server: %s", db_error());
		if (!is(v, "logical"))
			refuse(m, "--online needs wal_level = logical on the --from server (it is %s); nothing was changed", v);
		if (!get_value(&m->from, &bad,
					   "SELECT pg_catalog.string_agg(pg_catalog.quote_ident(c.relname), ', ') FROM pg_catalog.pg_class c "
					   "WHERE c.relnamespace = $1::oid AND c.relkind = 'r' AND (c.relreplident = 'n' OR "
					   "(c.relreplident = 'd' AND NOT EXISTS (SELECT FROM pg_catalog.pg_index i "
					   " WHERE i.indrelid = c.oid AND i.indisprimary)))",
					   1, m->src_schema_oid))
			refuse(m, "could not query the --from server: %s", db_error());
		if (bad)
			refuse(m, "--online cannot carry updates and deletes of tables without a primary key or replica identity: %s",
				   bad);
		if (!get_value(&m->from, &bad, NO_EQUALITY_SQL, 1, m->src_schema_oid))
			refuse(m, "could not query the --from server: %s", db_error());
		if (bad)
			refuse(m, "--online cannot carry updates and deletes of tables of REPLICA IDENTITY FULL with a column "
				   "whose type has no equality operator, by which the subscription's apply finds the old row: %s; "
				   "give them a primary key or a replica identity index, or move the shard offline", bad);
		if (!get_value(&m->from, &free_slots,
					   "SELECT (pg_catalog.current_setting('max_replication_slots')::integer - "
					   "(SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots))::text", 0))
			refuse(m, "could not query the --from server: %s", db_error());
		if (atoi(free_slots) < 1 + (m->ntables > 2 ? 2 : m->ntables))
			refuse(m, "--online needs %d free replication slots on the --from server, it has %s (max_replication_slots)",
				   1 + (m->ntables > 2 ? 2 : m->ntables), free_slots);
	}
	if (check_leftovers(m) > 0)
		refuse(m, "replication objects of an earlier move of shard %d are left; nothing was changed", m->shard);
	if (!get_value(&m->from, &m->move_id, "SELECT pg_catalog.gen_random_uuid()::text", 0))
		refuse(m, "could not make a move id: %s", db_error());
	name_move(m, false);
	m->method = m->online ? "online" : "offline";
}

/*
 * Did shardid-move 1.1 begin this move?  Its publication, slot and
 * subscription are named shardid_move_<shard>, without the move id.
 */
static bool
legacy_names(Move *m)
{
	char	   *v = NULL;

	name_move(m, true);
	if (m->from.conn &&
		get_value(&m->from, &v,
				  "SELECT 1 WHERE EXISTS (SELECT FROM pg_catalog.pg_publication WHERE pubname = $1::name) "
				  "OR EXISTS (SELECT FROM pg_catalog.pg_replication_slots WHERE slot_name = $1::name)",
				  1, m->name) && v)
		return true;
	if (m->to.conn && subscription_oid(&m->to, m->name, &v) && v)
		return true;
	return false;
}

/*
 * What earlier moves of the shard left on both servers: publications,
 * replication slots and subscriptions named shardid_move_<shard> or
 * shardid_move_<shard>_*.  Each is an error with the SQL that drops it.
 */
static int
check_leftovers(Move *m)
{
	Server	   *s[] = {&m->from, &m->to};
	char		prefix[OBJECT_NAME_LEN];
	int			k,
				i,
				problems = 0;

	snprintf(prefix, sizeof(prefix), "shardid_move_%d", m->shard);
	for (k = 0; k < 2; k++)
	{
		PGresult   *res = query(s[k],
								"SELECT 'publication', pubname::pg_catalog.text, NULL::integer "
								"FROM pg_catalog.pg_publication "
								"WHERE pubname = $1::name OR pubname::pg_catalog.text LIKE $2 "
								"UNION ALL SELECT 'replication slot', slot_name::pg_catalog.text, active_pid "
								"FROM pg_catalog.pg_replication_slots "
								"WHERE slot_name = $1::name OR slot_name::pg_catalog.text LIKE $2 "
								"UNION ALL SELECT 'subscription', subname::pg_catalog.text, NULL "
								"FROM pg_catalog.pg_subscription WHERE (subname = $1::name OR subname::pg_catalog.text LIKE $2) "
								"AND subdbid = (SELECT oid FROM pg_catalog.pg_database "
								"WHERE datname = pg_catalog.current_database()) ORDER BY 1, 2",
								2, prefix, xprintf("%s\\_%%", prefix));

		if (res == NULL)
			refuse(m, "could not look for what earlier moves left on the %s server: %s", s[k]->option, db_error());
		for (i = 0; i < PQntuples(res); i++, problems++)
		{
			const char *kind = PQgetvalue(res, i, 0);
			const char *name = PQgetvalue(res, i, 1);

			error_msg("the %s server holds %s \"%s\", left by an earlier move of shard %d", s[k]->option,
					  kind, name, m->shard);
			if (kind[0] == 'p')
				hint_msg("If no move of shard %d is running, drop it there: DROP PUBLICATION \"%s\";",
						 m->shard, name);
			else if (kind[0] == 'r')
			{
				char	   *stop = PQgetisnull(res, i, 2) ? xstrdup("") :
					xprintf("SELECT pg_catalog.pg_terminate_backend(%s); ", PQgetvalue(res, i, 2));

				hint_msg("If no move of shard %d is running, drop it there: %sSELECT "
						 "pg_catalog.pg_drop_replication_slot('%s');", m->shard, stop, name);
				free(stop);
			}
			else
				hint_msg("If no move of shard %d is running, drop it there: ALTER SUBSCRIPTION \"%s\" DISABLE; "
						 "ALTER SUBSCRIPTION \"%s\" SET (slot_name = NONE); DROP SUBSCRIPTION \"%s\";",
						 m->shard, name, name, name);
		}
		PQclear(res);
	}
	return problems;
}

/* read both journals; true when an unfinished move of the shard exists */
bool
load_unfinished(Move *m)
{
	JournalRow	a,
				b;

	journal_clear(&a);
	journal_clear(&b);
	if ((m->from.conn && !journal_unfinished(&m->from, m->shard_s, &a)) ||
		(m->to.conn && !journal_unfinished(&m->to, m->shard_s, &b)))
		refuse(m, "could not read the move journal: %s", db_error());
	if (a.found && !is(a.side, "source"))
		refuse(m, "the --from server records an unfinished move of shard %d to it, started %s: "
			   "give the servers the other way round", m->shard, a.started_at);
	if (b.found && !is(b.side, "target"))
		refuse(m, "the --to server records an unfinished move of shard %d away from it, started %s: "
			   "give the servers the other way round", m->shard, b.started_at);
	if (a.found && b.found && !is(a.move_id, b.move_id))
		refuse(m, "the two servers record different unfinished moves of shard %d (%s on the --from server, "
			   "%s on the --to server); finish or abort each with the server it names (column peer of "
			   "shardid.move_journal)", m->shard, a.move_id, b.move_id);
	if (!a.found && !b.found)
		return false;
	/* the other side's row of the same move, whatever its phase */
	if (!a.found && m->from.conn)
		journal_by_id(&m->from, b.move_id, "source", &a);
	if (!b.found && m->to.conn)
		journal_by_id(&m->to, a.move_id, "target", &b);
	m->jsrc = a;
	m->jdst = b;
	{
		const JournalRow *j = b.found ? &b : &a;

		m->move_id = xstrdup(j->move_id);
		m->schema = xstrdup(j->schema);
		m->method = xstrdup(j->method);
		m->online = is(m->method, "online");
	}
	/* "?": the server did not answer, its phase is unknown */
	set_phase(m->src_phase, a.found ? a.phase : m->from.conn ? "" : "?");
	set_phase(m->dst_phase, b.found ? b.phase : m->to.conn ? "" : "?");
	m->dst_schema_oid = b.found ? b.schema_oid : NULL;
	m->sub_oid = b.found && b.sub_oid ? b.sub_oid : (a.found ? a.sub_oid : NULL);
	name_move(m, legacy_names(m));
	return true;
}

void
describe_unfinished(Move *m)
{
	const JournalRow *j = m->jdst.found ? &m->jdst : &m->jsrc;
	char	   *slots;

	error_msg("shard %d has an unfinished %s move (schema \"%s\", started %s by %s)",
			  m->shard, m->method, m->schema, j->started_at, j->started_by);
	if (m->jsrc.found)
		detail_msg("The --from server records phase \"%s\": %s.", m->jsrc.phase, source_phase_meaning(m->jsrc.phase));
	else
		detail_msg("The --from server records nothing of this move.");
	if (m->jdst.found)
		detail_msg("The --to server records phase \"%s\": %s.", m->jdst.phase, target_phase_meaning(m->jdst.phase));
	else
		detail_msg("The --to server records nothing of this move.");
	slots = slots_of_move(&m->from, m->name, m->sub_oid);
	hint_drop_slots(&m->from, slots);
	if (target_rank(m->dst_phase) >= RANK_CUT_OVER)
		hint_msg("Run the same command with --resume to finish the move (it is past the point of no return).");
	else
		hint_msg("Run the same command with --resume to finish the move, or with --abort to undo it.");
}

/* does the --from server hold a finished move of the shard, not dropped yet? */
bool
moved_away_pending(Move *m)
{
	char	   *v = NULL;

	if (!get_value(&m->from, &v,
				   "SELECT move_id FROM shardid.move_journal WHERE shard = $1::integer AND side = 'source' "
				   "AND phase = 'moved-away' LIMIT 1", 1, m->shard_s))
		refuse(m, "could not read the move journal of the --from server: %s", db_error());
	return v != NULL;
}
