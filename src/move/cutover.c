/*-------------------------------------------------------------------------
 *
 * cutover.c
 *	  The end of a move: the freeze of the source, the verification of the
 *	  copy, the wait for the target's clock to pass the newest id, the
 *	  cutover (the point of no return), and the source's last step.
 *
 * src/move/cutover.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

static bool
freeze_source_tx(Server *s)
{
	return journal_write(s, "source", "frozen-for-move") && freeze_tables(s);
}

/* source: record frozen-for-move and make every table refuse writes */
void
step_freeze(void)
{
	bool		again = is(M.src_phase, "frozen-for-move");

	M.step = "the freeze";
	check_interrupt();
	if (!tx_with_lock_retry(&M.from, freeze_source_tx, "refuse writes to the shard"))
		fail("could not freeze shard %d on the --from server", M.shard);
	M.changed = true;
	if (!again)
		M.frozen_at = now_seconds();
	say(again ? "writes to shard %d stay refused on the --from server" :
		"writes to shard %d are refused on the --from server from now on", M.shard);
	pause_point("freeze");
	check_interrupt();
}

void
step_verify(void)
{
	long long  *a = xcalloc(M.ntables + 1, sizeof(long long));
	long long  *b = xcalloc(M.ntables + 1, sizeof(long long));
	char	  **pa = xcalloc(M.nseqs + 1, sizeof(char *));
	char	  **pb = xcalloc(M.nseqs + 1, sizeof(char *));
	int			i;
	long long	rows = 0;
	char		buf[32];

	M.step = "the verification";
	pause_point("verify");
	check_interrupt();
	need(&M.from);
	need(&M.to);
	if (!count_rows(&M.from, a))
		fail("could not count rows on the --from server: %s", db_error());
	if (!count_rows(&M.to, b))
		fail("could not count rows on the --to server: %s", db_error());
	for (i = 0; i < M.ntables; i++)
	{
		M.tables[i].rows = a[i];
		rows += a[i];
		if (a[i] != b[i])
			fail("table %s has %lld rows on the --from server but %lld on the --to server",
				 M.tables[i].qname, a[i], b[i]);
	}
	if (!sequence_positions(&M.from, pa))
		fail("could not read the sequences on the --from server: %s", db_error());
	if (!sequence_positions(&M.to, pb))
		fail("could not read the sequences on the --to server: %s", db_error());
	for (i = 0; i < M.nseqs; i++)
		if (!is(pa[i], pb[i]))
			fail("sequence %s is at %s on the --from server but at %s on the --to server",
				 M.seqs[i].qname, pa[i], pb[i]);
	M.rows_total = rows;
	if (!journal_write(&M.to, "target", "verified"))
		fail("could not record the verification on the --to server: %s", db_error());
	say("verified: the row counts of %s (%s rows) and %s match", count_of(M.ntables, "table", "tables"),
		fmt_count(buf, sizeof(buf), rows), count_of(M.nseqs, "sequence position", "sequence positions"));
	free(a);
	free(b);
}

/* the target's clock past the newest id of the shard */
static void
wait_clock(void)
{
	PGresult   *res;
	char	   *newest = NULL;
	int			i,
				n;
	char	  **owners,
			  **sqls,
			  **vals;
	double		deadline = now_seconds() + M.timeout;

	/* the newest id of each id column, read by the table's owner */
	res = query(&M.to,
				"SELECT d.table_name, d.column_name, pg_catalog.pg_get_userbyid(c.relowner) "
				"FROM shardid.id_defaults d "
				"JOIN pg_catalog.pg_namespace s ON s.nspname = d.schema_name "
				"JOIN pg_catalog.pg_class c ON c.relnamespace = s.oid AND c.relname = d.table_name "
				"WHERE d.schema_name = $1::name",
				1, M.schema);
	if (res == NULL)
		fail("could not read the id columns of schema \"%s\" on the --to server: %s", M.schema, db_error());
	n = PQntuples(res);
	owners = xcalloc(n + 1, sizeof(char *));
	sqls = xcalloc(n + 1, sizeof(char *));
	vals = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
	{
		char	   *qt = quote_ident(&M.to, PQgetvalue(res, i, 0));
		char	   *qc = quote_ident(&M.to, PQgetvalue(res, i, 1));

		owners[i] = xstrdup(PQgetvalue(res, i, 2));
		/* the owner reads the newest id; id_millis() runs below, as us */
		sqls[i] = xprintf("SELECT pg_catalog.max(%s)::pg_catalog.text FROM %s.%s", qc, M.qschema, qt);
		free(qt);
		free(qc);
	}
	PQclear(res);
	if (!owner_values(&M.to, n, owners, sqls, vals))
		fail("could not find the newest id of shard %d: %s", M.shard, db_error());
	for (i = 0; i < n; i++)
	{
		char	   *millis = NULL;

		if (vals[i] &&
			!get_value(&M.to, &millis, "SELECT shardid.id_millis($1::bigint)::pg_catalog.text", 1, vals[i]))
			fail("could not decode the newest id of shard %d: %s", M.shard, db_error());
		if (millis && (newest == NULL || atoll(millis) > atoll(newest)))
		{
			free(newest);
			newest = millis;
		}
		else
			free(millis);
		free(owners[i]);
		free(sqls[i]);
		free(vals[i]);
	}
	free(owners);
	free(sqls);
	free(vals);
	if (newest == NULL)
		return;
	for (;;)
	{
		char	   *behind = NULL;

		check_interrupt();
		if (!get_value(&M.to, &behind,
					   "SELECT ($1::bigint - (pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint "
					   "- (SELECT epoch_ms FROM shardid.info())))::text",
					   1, newest))
			fail("could not read the clock of the --to server: %s", db_error());
		if (atoll(behind) < 0)
		{
			free(behind);
			break;
		}
		if (now_seconds() > deadline)
			fail("the --to server's clock is %s ms behind the newest id of shard %d", behind, M.shard);
		progress("waiting for the --to server's clock to pass the newest id: %s ms to go", behind);
		nap(atoll(behind) > 100 ? 100 : (int) atoll(behind) + 1);
		free(behind);
	}
	progress_end();
	say("the --to server's clock is past the newest id of shard %d: its ids sort after all of them", M.shard);
}

/* target: one transaction lets the copy take writes and registers the shard */
void
step_cutover(void)
{
	bool		ok;

	M.step = "the cutover";
	check_interrupt();
	need(&M.to);
	wait_clock();
	check_interrupt();
	need(&M.from);
	if (!journal_write(&M.from, "source", "handing-over"))
		fail("could not record the hand-over on the --from server: %s", db_error());
	pause_point("handover");
	check_interrupt();
	need(&M.to);
	ok = tx_begin(&M.to) &&
		unfreeze_tables(&M.to, M.schema) &&
		exec_sql(&M.to, "SELECT shardid.register_shard($1::integer, $2::name)", 2, M.shard_s, M.schema) &&
		journal_write(&M.to, "target", "cut-over") && commit(&M.to);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.to);
		fail("could not register shard %d on the --to server: %s", M.shard, why);
	}
	M.past_no_return = true;
	say("cut over: shard %d is registered on the --to server, which takes its writes", M.shard);
	if (M.frozen_at > 0)
		say("writes to shard %d were refused for %.1f s, from the freeze to the cutover", M.shard,
			now_seconds() - M.frozen_at);
	pause_point("cutover");
	check_interrupt();
}

/* source: unregister the shard, keep the frozen copy; target: done */
void
step_finish(void)
{
	bool		ok;

	M.step = "the end of the move";
	need(&M.from);
	ok = tx_begin(&M.from) &&
		exec_sql(&M.from, "SELECT shardid.unregister_shard($1::integer)", 1, M.shard_s) &&
		journal_write(&M.from, "source", "moved-away") && commit(&M.from);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.from);
		fail("could not unregister shard %d on the --from server: %s", M.shard, why);
	}
	need(&M.to);
	if (!journal_write(&M.to, "target", "done"))
		fail("could not record the end of the move on the --to server: %s", db_error());
	say("shard %d now lives on the --to server: route it there", M.shard);
}
