/*-------------------------------------------------------------------------
 *
 * undo.c
 *	  Giving up: undo what this move changed on each side, unless it passed
 *	  the point of no return (the target registered the shard), and say
 *	  what state the servers are left in.
 *
 * src/move/undo.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

/*
 * Give up: undo what this move changed, unless it passed the point of no
 * return, and say what state the servers are in.
 */
void NORETURN
give_up(Move *m)
{
	bool		ok;

	cancel_allow(false);
	if (m->past_no_return)
	{
		say("the move is past the point of no return: shard %d is registered on the --to server", m->shard);
		report_state(m);
		hint_msg("Run the same command with --resume to finish the move.");
		finish(m, EXIT_UNFINISHED, "unfinished");
	}
	if (!m->changed)
	{
		say("nothing was changed");
		finish(m, EXIT_FAILED, "failed");
	}
	say("undoing the move of shard %d", m->shard);
	ok = undo_target(m);
	if (m->dst_known && target_rank(m->dst_phase) >= RANK_CUT_OVER)
	{
		/* the cutover committed although its answer was lost */
		say("the move is past the point of no return: shard %d is registered on the --to server", m->shard);
		report_state(m);
		hint_msg("Run the same command with --resume to finish the move.");
		finish(m, EXIT_UNFINISHED, "unfinished");
	}
	ok = undo_source(m) && ok;
	report_state(m);
	if (ok)
	{
		say("the move was undone: shard %d stays on the --from server, which takes its writes", m->shard);
		finish(m, EXIT_FAILED, "undone");
	}
	error_msg("the move could not be fully undone");
	hint_msg("Once both servers answer, run the same command with --abort to finish the undo.");
	finish(m, EXIT_UNFINISHED, "unfinished");
}

/* target: subscription, the schema this move created, journal aborted */
bool
undo_target(Move *m)
{
	bool		ok;
	char	   *name = NULL;

	JournalRow	j;

	m->dst_known = false;
	if (m->to.conn == NULL || !server_ensure(&m->to, UNDO_REACH_S))
	{
		if (m->dst_phase[0] == '\0' || is(m->dst_phase, "aborted"))
			return true;
		error_msg("could not reach the --to server to undo its part: %s", db_error());
		return false;
	}
	rollback(m, &m->to);
	/* what the journal there says, not what this run believes it committed */
	if (m->move_id && journal_by_id(&m->to, m->move_id, "target", &j))
	{
		m->dst_known = true;
		set_phase(m->dst_phase, j.found ? j.phase : "");
		if (j.found)
		{
			m->dst_schema_oid = j.schema_oid;
			if (j.sub_oid)
				m->sub_oid = j.sub_oid;
		}
	}
	if (m->dst_phase[0] == '\0' || is(m->dst_phase, "aborted"))
		return true;
	if (target_rank(m->dst_phase) >= RANK_CUT_OVER)
		return false;
	ok = drop_subscription(&m->to, m->name);
	if (!ok)
		error_msg("could not drop subscription %s on the --to server: %s", m->name, db_error());
	ok = ok && tx_begin(&m->to);
	if (ok && m->dst_schema_oid)
		ok = drop_schema_by_oid(&m->to, m->dst_schema_oid, &name);
	ok = ok && exec_sql(&m->to,
						"UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
						"WHERE move_id = $1 AND side = 'target'", 1, m->move_id) &&
		commit(m, &m->to);
	if (!ok)
	{
		error_msg("could not undo the move on the --to server: %s", db_error());
		rollback(m, &m->to);
		return false;
	}
	set_phase(m->dst_phase, "aborted");
	say("--to server: %s", name ? "the partial copy was dropped" : "nothing was left to drop");
	free(name);
	return true;
}

/* source: writes allowed again, publication and slots dropped, journal aborted */
bool
undo_source(Move *m)
{
	bool		ok;

	JournalRow	j;

	if (m->from.conn == NULL || !server_ensure(&m->from, UNDO_REACH_S))
	{
		if (m->src_phase[0] == '\0' || is(m->src_phase, "aborted"))
			return true;
		error_msg("could not reach the --from server to undo its part: %s", db_error());
		return false;
	}
	rollback(m, &m->from);
	if (m->move_id && journal_by_id(&m->from, m->move_id, "source", &j))
	{
		set_phase(m->src_phase, j.found ? j.phase : "");
		if (j.found && j.sub_oid && !m->sub_oid)
			m->sub_oid = j.sub_oid;
	}
	if (m->src_phase[0] == '\0' || is(m->src_phase, "aborted"))
		return true;
	if (is(m->src_phase, "moved-away") || is(m->src_phase, "dropped"))
		return false;
	if (is(m->src_phase, "handing-over") && (!m->dst_known || target_rank(m->dst_phase) >= RANK_CUT_OVER))
	{
		error_msg("the --from server's part is not undone: %s",
				  m->dst_known ? "the --to server took the shard over" :
				  "only the --to server knows whether it took the shard over, and it did not answer");
		return false;
	}
	if (!drop_slots(&m->from, m->name, m->sub_oid, true))
	{
		error_msg("could not drop the replication slots of the move on the --from server: %s", db_error());
		return false;
	}
	ok = tx_begin(&m->from) &&
		unfreeze_tables(&m->from, m->schema) &&
		drop_publication(&m->from, m->name) &&
		exec_sql(&m->from,
				 "UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
				 "WHERE move_id = $1 AND side = 'source'", 1, m->move_id) &&
		commit(m, &m->from);
	if (!ok)
	{
		error_msg("could not undo the move on the --from server: %s", db_error());
		rollback(m, &m->from);
		return false;
	}
	set_phase(m->src_phase, "aborted");
	say("--from server: shard %d takes writes again", m->shard);
	return true;
}
