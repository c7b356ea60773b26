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
give_up(void)
{
	bool		ok;

	cancel_allow(false);
	if (M.past_no_return)
	{
		say("the move is past the point of no return: shard %d is registered on the --to server", M.shard);
		report_state();
		hint_msg("Run the same command with --resume to finish the move.");
		finish(EXIT_UNFINISHED, "unfinished");
	}
	if (!M.changed)
	{
		say("nothing was changed");
		finish(EXIT_FAILED, "failed");
	}
	say("undoing the move of shard %d", M.shard);
	ok = undo_target();
	if (M.dst_known && target_rank(M.dst_phase) >= RANK_CUT_OVER)
	{
		/* the cutover committed although its answer was lost */
		say("the move is past the point of no return: shard %d is registered on the --to server", M.shard);
		report_state();
		hint_msg("Run the same command with --resume to finish the move.");
		finish(EXIT_UNFINISHED, "unfinished");
	}
	ok = undo_source() && ok;
	report_state();
	if (ok)
	{
		say("the move was undone: shard %d stays on the --from server, which takes its writes", M.shard);
		finish(EXIT_FAILED, "undone");
	}
	error_msg("the move could not be fully undone");
	hint_msg("Once both servers answer, run the same command with --abort to finish the undo.");
	finish(EXIT_UNFINISHED, "unfinished");
}

/* target: subscription, the schema this move created, journal aborted */
bool
undo_target(void)
{
	bool		ok;
	char	   *name = NULL;

	JournalRow	j;

	M.dst_known = false;
	if (M.to.conn == NULL || !server_ensure(&M.to, UNDO_REACH_S))
	{
		if (M.dst_phase[0] == '\0' || is(M.dst_phase, "aborted"))
			return true;
		error_msg("could not reach the --to server to undo its part: %s", db_error());
		return false;
	}
	rollback(&M.to);
	/* what the journal there says, not what this run believes it committed */
	if (M.move_id && journal_by_id(&M.to, M.move_id, "target", &j))
	{
		M.dst_known = true;
		set_phase(M.dst_phase, j.found ? j.phase : "");
		if (j.found)
		{
			M.dst_schema_oid = j.schema_oid;
			if (j.sub_oid)
				M.sub_oid = j.sub_oid;
		}
	}
	if (M.dst_phase[0] == '\0' || is(M.dst_phase, "aborted"))
		return true;
	if (target_rank(M.dst_phase) >= RANK_CUT_OVER)
		return false;
	ok = drop_subscription(&M.to, M.name);
	if (!ok)
		error_msg("could not drop subscription %s on the --to server: %s", M.name, db_error());
	ok = ok && tx_begin(&M.to);
	if (ok && M.dst_schema_oid)
		ok = drop_schema_by_oid(&M.to, M.dst_schema_oid, &name);
	ok = ok && exec_sql(&M.to,
						"UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
						"WHERE move_id = $1 AND side = 'target'", 1, M.move_id) &&
		commit(&M.to);
	if (!ok)
	{
		error_msg("could not undo the move on the --to server: %s", db_error());
		rollback(&M.to);
		return false;
	}
	set_phase(M.dst_phase, "aborted");
	say("--to server: %s", name ? "the partial copy was dropped" : "nothing was left to drop");
	free(name);
	return true;
}

/* source: writes allowed again, publication and slots dropped, journal aborted */
bool
undo_source(void)
{
	bool		ok;

	JournalRow	j;

	if (M.from.conn == NULL || !server_ensure(&M.from, UNDO_REACH_S))
	{
		if (M.src_phase[0] == '\0' || is(M.src_phase, "aborted"))
			return true;
		error_msg("could not reach the --from server to undo its part: %s", db_error());
		return false;
	}
	rollback(&M.from);
	if (M.move_id && journal_by_id(&M.from, M.move_id, "source", &j))
	{
		set_phase(M.src_phase, j.found ? j.phase : "");
		if (j.found && j.sub_oid && !M.sub_oid)
			M.sub_oid = j.sub_oid;
	}
	if (M.src_phase[0] == '\0' || is(M.src_phase, "aborted"))
		return true;
	if (is(M.src_phase, "moved-away") || is(M.src_phase, "dropped"))
		return false;
	if (is(M.src_phase, "handing-over") && (!M.dst_known || target_rank(M.dst_phase) >= RANK_CUT_OVER))
	{
		error_msg("the --from server's part is not undone: %s",
				  M.dst_known ? "the --to server took the shard over" :
				  "only the --to server knows whether it took the shard over, and it did not answer");
		return false;
	}
	if (!drop_slots(&M.from, M.name, M.sub_oid, true))
	{
		error_msg("could not drop the replication slots of the move on the --from server: %s", db_error());
		return false;
	}
	ok = tx_begin(&M.from) &&
		unfreeze_tables(&M.from, M.schema) &&
		drop_publication(&M.from, M.name) &&
		exec_sql(&M.from,
				 "UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
				 "WHERE move_id = $1 AND side = 'source'", 1, M.move_id) &&
		commit(&M.from);
	if (!ok)
	{
		error_msg("could not undo the move on the --from server: %s", db_error());
		rollback(&M.from);
		return false;
	}
	set_phase(M.src_phase, "aborted");
	say("--from server: shard %d takes writes again", M.shard);
	return true;
}
