/*-------------------------------------------------------------------------
 *
 * journal.c
 *	  shardid.move_journal: the phases of each side and their order, and
 *	  the rows that record them.  Every step is recorded on the server it
 *	  changes, in the same transaction as the change where one transaction
 *	  can hold both.  The shard's row of shardid.shard_registry, read the
 *	  same way by every step that asks where the shard lives.
 *
 * src/move/journal.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

/* the order of the target's phases; -1 for aborted */
int
target_rank(const char *phase)
{
	if (phase == NULL || phase[0] == '\0')
		return 0;
	if (is(phase, "checked"))
		return RANK_CHECKED;
	if (is(phase, "copying"))
		return RANK_COPYING;
	if (is(phase, "copied") || is(phase, "replicating"))
		return RANK_COPIED;
	if (is(phase, "caught-up"))
		return RANK_CAUGHT_UP;
	if (is(phase, "verified"))
		return RANK_VERIFIED;
	if (is(phase, "cut-over"))
		return RANK_CUT_OVER;
	if (is(phase, "done"))
		return RANK_DONE;
	return -1;
}

void
journal_clear(JournalRow *j)
{
	memset(j, 0, sizeof(*j));
}

bool
journal_fill(PGresult *res, JournalRow *j)
{
	journal_clear(j);
	if (PQntuples(res) == 0)
		return false;
	j->found = true;
	j->move_id = xstrdup(PQgetvalue(res, 0, 0));
	j->side = xstrdup(PQgetvalue(res, 0, 1));
	j->schema = xstrdup(PQgetvalue(res, 0, 2));
	j->method = xstrdup(PQgetvalue(res, 0, 3));
	j->phase = xstrdup(PQgetvalue(res, 0, 4));
	j->peer = xstrdup(PQgetvalue(res, 0, 5));
	j->schema_oid = PQgetisnull(res, 0, 6) ? NULL : xstrdup(PQgetvalue(res, 0, 6));
	j->sub_oid = PQgetisnull(res, 0, 7) ? NULL : xstrdup(PQgetvalue(res, 0, 7));
	j->started_at = xstrdup(PQgetvalue(res, 0, 8));
	j->started_by = xstrdup(PQgetvalue(res, 0, 9));
	return true;
}

/* the unfinished move of shard (its number as text) recorded on a server, if any */
bool
journal_unfinished(Server *s, const char *shard, JournalRow *j)
{
	PGresult   *res = query(s,
							"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
							"WHERE shard = $1::integer AND phase NOT IN " ACTIVE_PHASES_EXCLUDED,
							1, shard);

	if (res == NULL)
		return false;
	journal_fill(res, j);
	PQclear(res);
	return true;
}

bool
journal_by_id(Server *s, const char *move_id, const char *side, JournalRow *j)
{
	PGresult   *res = query(s,
							"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
							"WHERE move_id = $1 AND side = $2",
							2, move_id, side);

	if (res == NULL)
		return false;
	journal_fill(res, j);
	PQclear(res);
	return true;
}

/* record a phase: insert the row of this side, or move it on */
bool
journal_write(Move *m, Server *s, const char *side, const char *phase)
{
	Server	   *peer = s == &m->from ? &m->to : &m->from;

	if (!exec_sql(s,
				  "INSERT INTO shardid.move_journal AS j "
				  "(move_id, side, shard, schema_name, method, phase, peer) "
				  "VALUES ($1, $2, $3::integer, $4::name, $5, $6, $7) "
				  "ON CONFLICT (move_id, side) DO UPDATE "
				  "SET phase = EXCLUDED.phase, updated_at = pg_catalog.now()",
				  7, m->move_id, side, m->shard_s, m->schema, m->method, phase, peer->where))
		return false;
	if (PQtransactionStatus(s->conn) == PQTRANS_INTRANS)
		set_phase(s == &m->from ? m->pending_src : m->pending_dst, phase);
	else
		set_phase(s == &m->from ? m->src_phase : m->dst_phase, phase);
	return true;
}

const char *
target_phase_meaning(const char *phase)
{
	if (is(phase, "checked"))
		return "nothing was changed there yet";
	if (is(phase, "copying"))
		return "a partial copy of the schema may exist there";
	if (is(phase, "copied"))
		return "a full copy exists there, refusing writes, not yet verified";
	if (is(phase, "replicating"))
		return "a copy refusing writes exists there, with a subscription replicating into it";
	if (is(phase, "caught-up"))
		return "a full copy exists there, refusing writes, with the sequences carried over";
	if (is(phase, "verified"))
		return "a verified copy exists there, refusing writes, not yet registered";
	if (is(phase, "cut-over"))
		return "the shard is registered there and takes writes (past the point of no return)";
	if (is(phase, "done"))
		return "the move is done";
	if (is(phase, "aborted"))
		return "its part of the move was undone";
	return "unknown phase";
}

const char *
source_phase_meaning(const char *phase)
{
	if (is(phase, "publishing"))
		return "a publication and a replication slot of the move may exist there; the shard takes writes";
	if (is(phase, "frozen-for-move"))
		return "the shard's tables refuse writes there";
	if (is(phase, "handing-over"))
		return "the shard's tables refuse writes there, and the --to server may have taken the shard over";
	if (is(phase, "moved-away"))
		return "the shard moved away; its frozen copy stays until --drop-source";
	if (is(phase, "dropped"))
		return "the shard moved away and its copy was dropped";
	if (is(phase, "aborted"))
		return "its part of the move was undone";
	return "unknown phase";
}

/*
 * The schema that shardid.shard_registry on s names for shard (its number
 * as text) into *schema, NULL when the shard is not registered there; false
 * when the query failed.
 */
bool
registered_schema(Server *s, const char *shard, char **schema)
{
	return get_value(s, schema, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
					 1, shard);
}
