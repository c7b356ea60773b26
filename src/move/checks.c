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

/* the journal rows of an unfinished move: source, target */
JournalRow	jsrc,
			jdst;

/* --abort: undo what can be undone on the server that answers */
void
connect_for_abort(void)
{
	Server	   *s[] = {&M.from, &M.to};
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
		finish(EXIT_UNFINISHED, "unfinished");
	}
}

void
connect_both(void)
{
	Server	   *s[] = {&M.from, &M.to};
	int			i;

	for (i = 0; i < 2; i++)
	{
		if (!server_connect(s[i]))
		{
			error_msg("cannot connect to the %s server: %s", s[i]->option, db_error());
			finish(EXIT_FAILED, "failed");
		}
	}
}

/* what both servers must offer for any run */
void
check_servers(void)
{
	Server	   *s[] = {&M.from, &M.to};
	char	   *epoch[2] = {NULL, NULL};
	char	   *ident[2] = {NULL, NULL};
	int			i;

	for (i = 0; i < 2; i++)
	{
		char	   *v = NULL;
		const char *su = PQparameterStatus(s[i]->conn, "is_superuser");

		if (!is(su, "on"))
			refuse("shardid-move must connect to the %s server as a superuser (it writes the move journal, "
				   "freezes other roles' tables and manages replication)", s[i]->option);
		if (!get_value(s[i], &v, "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'shardid'", 0))
			refuse("could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse("shardid is not installed in the %s database (%s); run CREATE EXTENSION shardid there",
				   s[i]->option, s[i]->where);
		if (!get_value(s[i], &v, "SELECT pg_catalog.to_regclass('shardid.move_journal')::text", 0))
			refuse("could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse("shardid on the %s server has no move journal; run ALTER EXTENSION shardid UPDATE there",
				   s[i]->option);
		if (PQserverVersion(s[i]->conn) / 10000 > PQlibVersion() / 10000)
			refuse("the %s server runs PostgreSQL %d, newer than this shardid-move's pg_dump (%d)",
				   s[i]->option, PQserverVersion(s[i]->conn) / 10000, PQlibVersion() / 10000);
		if (!get_value(s[i], &epoch[i], "SELECT epoch_ms::text FROM shardid.info()", 0))
			refuse("could not read shardid.info() on the %s server: %s", s[i]->option, db_error());
		if (!get_value(s[i], &ident[i],
					   "SELECT system_identifier::text || '/' || pg_catalog.current_database() "
					   "FROM pg_catalog.pg_control_system()", 0))
			refuse("could not identify the %s server: %s", s[i]->option, db_error());
	}
	if (is(ident[0], ident[1]))
		refuse("--from and --to name the same database");
	if (!is(epoch[0], epoch[1]))
		refuse("shardid.epoch differs: %s on the --from server, %s on the --to server; "
			   "ids would decode wrongly on one of them", epoch[0], epoch[1]);
	{
		char	   *v = NULL;

		if (!get_value(&M.from, &v, "SELECT pg_catalog.to_regclass('shardid.shard_registry')::text", 0))
			refuse("could not query the --from server: %s", db_error());
		if (v == NULL)
			refuse("shardid on the --from server has no shard registry; run ALTER EXTENSION shardid UPDATE there");
	}
}

/* a new move: everything is checked before anything changes */
void
check_new_move(void)
{
	char	   *v = NULL;
	char	   *max_shard = NULL;

	if (!get_value(&M.from, &max_shard, "SELECT max_shard::text FROM shardid.info()", 0))
		refuse("could not read shardid.info(): %s", db_error());
	if (M.shard > atoi(max_shard))
		refuse("shard %d is out of range: a shard must be between 0 and %s", M.shard, max_shard);

	if (!get_value(&M.from, &M.schema, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
				   1, M.shard_s))
		refuse("could not read the shard registry of the --from server: %s", db_error());
	if (M.schema == NULL)
		refuse("shard %d does not live in the --from database (see SELECT * FROM shardid.shards there)", M.shard);

	if (!get_value(&M.to, &v, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
				   1, M.shard_s))
		refuse("could not read the shard registry of the --to server: %s", db_error());
	if (v != NULL)
		refuse("shard %d already lives on the --to server (schema \"%s\"); nothing was changed", M.shard, v);
	if (!get_value(&M.to, &v, "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = $1::name", 1, M.schema))
		refuse("could not query the --to server: %s", db_error());
	if (v != NULL)
		refuse("schema \"%s\" already exists on the --to server; nothing was changed", M.schema);

	inspect_source();

	/* every role owning something in the schema exists on the target */
	{
		PGresult   *res = query(&M.from,
								"SELECT pg_catalog.array_agg(DISTINCT r)::text FROM ("
								" SELECT pg_catalog.pg_get_userbyid(nspowner) FROM pg_catalog.pg_namespace WHERE oid = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(relowner) FROM pg_catalog.pg_class WHERE relnamespace = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(proowner) FROM pg_catalog.pg_proc WHERE pronamespace = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(typowner) FROM pg_catalog.pg_type WHERE typnamespace = $1::oid"
								") o(r)",
								1, M.src_schema_oid);
		char	   *missing = NULL;

		if (res == NULL)
			refuse("could not read the owners in schema \"%s\": %s", M.schema, db_error());
		if (!get_value(&M.to, &missing,
					   "SELECT pg_catalog.string_agg(r, ', ') FROM pg_catalog.unnest($1::text[]) r "
					   "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r)",
					   1, PQgetvalue(res, 0, 0)))
			refuse("could not read the roles of the --to server: %s", db_error());
		PQclear(res);
		if (missing)
			refuse("roles owning objects of schema \"%s\" do not exist on the --to server: %s", M.schema, missing);
	}

	if (M.online)
	{
		char	   *bad = NULL;
		char	   *free_slots = NULL;

		if (!get_value(&M.from, &v, "SELECT pg_catalog.current_setting('wal_level')", 0))
			refuse("could not query the --from server: %s", db_error());
		if (!is(v, "logical"))
			refuse("--online needs wal_level = logical on the --from server (it is %s); nothing was changed", v);
		if (!get_value(&M.from, &bad,
					   "SELECT pg_catalog.string_agg(pg_catalog.quote_ident(c.relname), ', ') FROM pg_catalog.pg_class c "
					   "WHERE c.relnamespace = $1::oid AND c.relkind = 'r' AND (c.relreplident = 'n' OR "
					   "(c.relreplident = 'd' AND NOT EXISTS (SELECT FROM pg_catalog.pg_index i "
					   " WHERE i.indrelid = c.oid AND i.indisprimary)))",
					   1, M.src_schema_oid))
			refuse("could not query the --from server: %s", db_error());
		if (bad)
			refuse("--online cannot carry updates and deletes of tables without a primary key or replica identity: %s",
				   bad);
		if (!get_value(&M.from, &free_slots,
					   "SELECT (pg_catalog.current_setting('max_replication_slots')::integer - "
					   "(SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots))::text", 0))
			refuse("could not query the --from server: %s", db_error());
		if (atoi(free_slots) < 1 + (M.ntables > 2 ? 2 : M.ntables))
			refuse("--online needs %d free replication slots on the --from server, it has %s (max_replication_slots)",
				   1 + (M.ntables > 2 ? 2 : M.ntables), free_slots);
	}
	if (!get_value(&M.from, &M.move_id, "SELECT pg_catalog.gen_random_uuid()::text", 0))
		refuse("could not make a move id: %s", db_error());
	M.method = M.online ? "online" : "offline";
}

/* read both journals; true when an unfinished move of the shard exists */
bool
load_unfinished(void)
{
	JournalRow	a,
				b;

	journal_clear(&a);
	journal_clear(&b);
	if ((M.from.conn && !journal_unfinished(&M.from, &a)) || (M.to.conn && !journal_unfinished(&M.to, &b)))
		refuse("could not read the move journal: %s", db_error());
	if (a.found && !is(a.side, "source"))
		refuse("the --from server records an unfinished move of shard %d to it, started %s: "
			   "give the servers the other way round", M.shard, a.started_at);
	if (b.found && !is(b.side, "target"))
		refuse("the --to server records an unfinished move of shard %d away from it, started %s: "
			   "give the servers the other way round", M.shard, b.started_at);
	if (a.found && b.found && !is(a.move_id, b.move_id))
		refuse("the two servers record different unfinished moves of shard %d (%s on the --from server, "
			   "%s on the --to server); finish or abort each with the server it names (column peer of "
			   "shardid.move_journal)", M.shard, a.move_id, b.move_id);
	if (!a.found && !b.found)
		return false;
	/* the other side's row of the same move, whatever its phase */
	if (!a.found && M.from.conn)
		journal_by_id(&M.from, b.move_id, "source", &a);
	if (!b.found && M.to.conn)
		journal_by_id(&M.to, a.move_id, "target", &b);
	jsrc = a;
	jdst = b;
	{
		const JournalRow *j = b.found ? &b : &a;

		M.move_id = xstrdup(j->move_id);
		M.schema = xstrdup(j->schema);
		M.method = xstrdup(j->method);
		M.online = is(M.method, "online");
	}
	/* "?": the server did not answer, its phase is unknown */
	set_phase(M.src_phase, a.found ? a.phase : M.from.conn ? "" : "?");
	set_phase(M.dst_phase, b.found ? b.phase : M.to.conn ? "" : "?");
	M.dst_schema_oid = b.found ? b.schema_oid : NULL;
	M.sub_oid = b.found && b.sub_oid ? b.sub_oid : (a.found ? a.sub_oid : NULL);
	return true;
}

void
describe_unfinished(void)
{
	const JournalRow *j = jdst.found ? &jdst : &jsrc;
	char	   *slots;

	error_msg("shard %d has an unfinished %s move (schema \"%s\", started %s by %s)",
			  M.shard, M.method, M.schema, j->started_at, j->started_by);
	if (jsrc.found)
		detail_msg("The --from server records phase \"%s\": %s.", jsrc.phase, source_phase_meaning(jsrc.phase));
	else
		detail_msg("The --from server records nothing of this move.");
	if (jdst.found)
		detail_msg("The --to server records phase \"%s\": %s.", jdst.phase, target_phase_meaning(jdst.phase));
	else
		detail_msg("The --to server records nothing of this move.");
	slots = slots_of_move(&M.from);
	hint_drop_slots(&M.from, slots);
	if (target_rank(M.dst_phase) >= RANK_CUT_OVER)
		hint_msg("Run the same command with --resume to finish the move (it is past the point of no return).");
	else
		hint_msg("Run the same command with --resume to finish the move, or with --abort to undo it.");
}

/* does the --from server hold a finished move of the shard, not dropped yet? */
bool
moved_away_pending(void)
{
	char	   *v = NULL;

	if (!get_value(&M.from, &v,
				   "SELECT move_id FROM shardid.move_journal WHERE shard = $1::integer AND side = 'source' "
				   "AND phase = 'moved-away' LIMIT 1", 1, M.shard_s))
		refuse("could not read the move journal of the --from server: %s", db_error());
	return v != NULL;
}
