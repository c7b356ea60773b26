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

static void wait_clock(Move *m, Server *s, const char *what_then);

/*
 * The time since the last part of the pause (or the freeze) counted as
 * part what: the cutover tells the operator where the pause went.  Parts
 * of the same name add up.  Nothing before the freeze of this run.
 */
void
pause_part(Move *m, const char *what)
{
	double		t = now_seconds();
	int			i;

	if (m->frozen_at <= 0)
		return;
	for (i = 0; i < m->nparts; i++)
		if (is(m->part_name[i], what))
			break;
	if (i == m->nparts && m->nparts < PAUSE_PARTS_MAX)
	{
		m->part_name[i] = what;
		m->part_secs[i] = 0;
		m->nparts++;
	}
	if (i < m->nparts)
		m->part_secs[i] += t - m->part_mark;
	m->part_mark = t;
}

/* "catch-up 0.01 s, verification 0.42 s, ..." */
static char *
pause_parts_text(Move *m)
{
	char	   *r = xstrdup("");
	int			i;

	for (i = 0; i < m->nparts; i++)
	{
		char	   *n = xprintf("%s%s%s %.2f s", r, i ? ", " : "", m->part_name[i], m->part_secs[i]);

		free(r);
		r = n;
	}
	return r;
}

static bool
freeze_source_tx(Move *m, Server *s)
{
	return journal_write(m, s, "source", "frozen-for-move") && freeze_tables(m, s);
}

/* source: record frozen-for-move and make every table refuse writes */
void
step_freeze(Move *m)
{
	bool		again = is(m->src_phase, "frozen-for-move");

	m->step = "the freeze";
	check_interrupt(m);
	/*
	 * The --to server's clock must pass the shard's newest id before the
	 * cutover: waited for here, while the shard still takes writes, so that
	 * only ids made from now on (the source's clock, at most the servers'
	 * clock difference ahead of the target's) are waited for after the
	 * freeze.
	 */
	if (!again)
		wait_clock(m, &m->from, "nothing was frozen");
	if (!tx_with_lock_retry(m, &m->from, freeze_source_tx, "refuse writes to the shard"))
		fail(m, "could not freeze shard %d on the --from server", m->shard);
	m->changed = true;
	if (!again)
		m->frozen_at = m->part_mark = now_seconds();
	say(again ? "writes to shard %d stay refused on the --from server" :
		"writes to shard %d are refused on the --from server from now on", m->shard);
	pause_point("freeze");
	check_interrupt(m);
}

void
step_verify(Move *m)
{
	char	  **pa = xcalloc(m->nseqs + 1, sizeof(char *));
	char	  **pb = xcalloc(m->nseqs + 1, sizeof(char *));
	int			i;
	long long	rows;
	char		buf[32];

	m->step = "the verification";
	pause_point("verify");
	check_interrupt(m);
	need(m, &m->from);
	need(m, &m->to);
	/*
	 * The schema and its tables on the --to server back to their owners,
	 * whose rights read the rows: an apply into PostgreSQL 15 held them
	 * (hold_target_tables()), and its subscription is gone by now
	 */
	if (!tx_begin(&m->to) || !give_back_owners(m, &m->to) || !commit(m, &m->to))
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->to);
		fail(m, "could not give schema \"%s\" back to its owners on the --to server: %s", m->schema, why);
	}
	refresh_matviews(m);
	/*
	 * A row written after the checks (before the freeze; online, until it)
	 * may point at a large object made since, which the copy does not carry
	 */
	if (check_large_objects(m, true) > 0)
		fail(m, "rows of schema \"%s\" written since the checks point at large objects that the --to server lacks (see above)",
			 m->schema);
	/* the rows are all there, the owners theirs: the cutover's read begins */
	start_newest_read(m);
	rows = verify_rows(m);
	if (!sequence_positions(&m->from, m->seqs, m->nseqs, pa))
		fail(m, "could not read the sequences on the --from server: %s", db_error());
	if (!sequence_positions(&m->to, m->seqs, m->nseqs, pb))
		fail(m, "could not read the sequences on the --to server: %s", db_error());
	for (i = 0; i < m->nseqs; i++)
		if (!is(pa[i], pb[i]))
			fail(m, "sequence %s is at %s on the --from server but at %s on the --to server",
				 m->seqs[i].qname, pa[i], pb[i]);
	m->rows_total = rows;
	if (!journal_write(m, &m->to, "target", "verified"))
		fail(m, "could not record the verification on the --to server: %s", db_error());
	pause_part(m, "verification");
	say("verified: the rows of %s (%s rows, by the hashes of their contents) and %s match",
		count_of(m->ntables, "table", "tables"), fmt_count(buf, sizeof(buf), rows),
		count_of(m->nseqs, "sequence position", "sequence positions"));
	pause_point("verified");
}

/*
 * The newest id of the move's shard stored on server s (offline: the --from
 * server before the freeze, the --to server after the copy) that the --to
 * server's clock must pass before the cutover, as milliseconds of the epoch
 * (shardid.id_millis()); NULL when there is none.
 *
 * Only the shard's own ids count, and only those in [0, bound_id): the
 * bound is the smallest id of the latest millisecond either server could
 * have stamped the shard with, its clock plus its shardid.max_lead_ms plus
 * 1,250 ms (the high-water mark's window and margin), whichever server's is
 * later (bound()).  Any role that may insert into a table of the shard can
 * store any id there, and the cutover must not keep the shard's writes
 * refused until a clock reaches a value such a role wrote; an id of the
 * shard beyond the bound, or with the sign bit set (it would decode to the
 * end of the time field), is reported with its table and not waited for.
 * Each column is read by its table's owner (owner_values()).
 */
struct NewestRead
{
	Server	   *server;
	char	   *bound_id;
	int			n;
	char	  **names;			/* the tables, qualified */
	OwnerBatch	batch;
};

static char *bound(Move *m);

/* newest_own_id() begun: the bound read, the owners' queries sent */
static NewestRead *
newest_start(Move *m, Server *s)
{
	PGresult   *res;
	int			i;
	char	  **owners,
			  **sqls;
	NewestRead *r = xcalloc(1, sizeof(NewestRead));

	r->server = s;
	r->bound_id = bound(m);
	need(m, s);
	res = query(s,
				"SELECT d.table_name, d.column_name, pg_catalog.pg_get_userbyid(c.relowner) "
				"FROM shardid.id_defaults d "
				"JOIN pg_catalog.pg_namespace s ON s.nspname OPERATOR(pg_catalog.=) d.schema_name "
				"JOIN pg_catalog.pg_class c ON c.relnamespace OPERATOR(pg_catalog.=) s.oid "
				"AND c.relname OPERATOR(pg_catalog.=) d.table_name "
				"WHERE d.schema_name OPERATOR(pg_catalog.=) $1::name",
				1, m->schema);
	if (res == NULL)
		fail(m, "could not read the id columns of schema \"%s\" on the %s server: %s", m->schema,
			 s->option, db_error());
	r->n = PQntuples(res);
	owners = xcalloc(r->n + 1, sizeof(char *));
	sqls = xcalloc(r->n + 1, sizeof(char *));
	r->names = xcalloc(r->n + 1, sizeof(char *));
	for (i = 0; i < r->n; i++)
	{
		char	   *qt = quote_ident(s, PQgetvalue(res, i, 0));
		char	   *qc = quote_ident(s, PQgetvalue(res, i, 1));
		char	   *within = xprintf("pg_catalog.max(%s) FILTER (WHERE %s OPERATOR(pg_catalog.>=) 0 "
									 "AND %s OPERATOR(pg_catalog.<) %s::pg_catalog.int8)", qc, qc, qc, r->bound_id);

		owners[i] = xstrdup(PQgetvalue(res, i, 2));
		r->names[i] = xprintf("%s.%s", m->qschema, qt);
		/* "<newest within the bound> <newest beyond it> <the first's millis>", "-" for none */
		sqls[i] = xprintf("SELECT COALESCE(%s::pg_catalog.text, '-') "
						  "OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) "
						  "COALESCE(pg_catalog.max(%s) FILTER (WHERE %s OPERATOR(pg_catalog.<) 0 "
						  "OR %s OPERATOR(pg_catalog.>=) %s::pg_catalog.int8)::pg_catalog.text, '-') "
						  "OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) "
						  "COALESCE(shardid.id_millis(%s)::pg_catalog.text, '-') "
						  "FROM %s.%s WHERE shardid.id_shard(%s) OPERATOR(pg_catalog.=) %d",
						  within, qc, qc, qc, r->bound_id, within, m->qschema, qt, qc, m->shard);
		free(within);
		free(qt);
		free(qc);
	}
	PQclear(res);
	if (!owner_values_send(s, r->n, owners, sqls, &r->batch))
		fail(m, "could not find the newest id of shard %d: %s", m->shard, db_error());
	for (i = 0; i < r->n; i++)
	{
		free(owners[i]);
		free(sqls[i]);
	}
	free(owners);
	free(sqls);
	return r;
}

static void
newest_free(NewestRead *r)
{
	int			i;

	for (i = 0; i < r->n; i++)
		free(r->names[i]);
	free(r->names);
	free(r->bound_id);
	free(r);
}

/* newest_own_id() ended: the answers of newest_start() */
static char *
newest_finish(Move *m, NewestRead *r)
{
	Server	   *s = r->server;
	char	   *newest = NULL;
	char	  **vals = xcalloc(r->n + 1, sizeof(char *));
	int			i;

	if (!owner_values_recv(&r->batch, vals))
	{
		free(vals);
		fail(m, "could not find the newest id of shard %d: %s", m->shard, db_error());
	}
	for (i = 0; i < r->n; i++)
	{
		char		within[32] = "-",
					beyond[32] = "-",
					millis[32] = "-";

		if (vals[i])
			(void) sscanf(vals[i], "%31s %31s %31s", within, beyond, millis);
		if (!is(beyond, "-") && !m->beyond_reported)
		{
			char	   *when = NULL;

			need(m, s);
			if (!get_value(s, &when, "SELECT shardid.id_time($1::pg_catalog.int8)::pg_catalog.text", 1, beyond))
				when = xstrdup("a time past the id's range");
			warning_msg("table %s holds id %s of shard %d, made for %s, further ahead than either server's "
						"clock allows the shard's ids (shardid.max_lead_ms + 1.25 s): the cutover does not "
						"wait for it, and the shard's new ids will sort below it",
						r->names[i], beyond, m->shard, when);
			hint_msg("A clock that ran that far ahead, or a role that may insert into %s, wrote it; find "
					 "the row (WHERE shardid.id_shard(id) = %d AND (id < 0 OR id >= %s)) before trusting "
					 "the order of the shard's ids.", r->names[i], m->shard, r->bound_id);
			free(when);
			m->beyond_reported = true;
		}
		if (!is(within, "-") && is(millis, "-"))
			fail(m, "could not decode the newest id of shard %d", m->shard);
		if (!is(within, "-") && (newest == NULL || atoll(millis) > atoll(newest)))
		{
			free(newest);
			newest = xstrdup(millis);
		}
		free(vals[i]);
	}
	free(vals);
	newest_free(r);
	return newest;
}

/*
 * The newest id of the shard on the --to server read beside the
 * verification, once the copy holds every row and the source refuses
 * writes: the cutover then finds it read (wait_clock()).  Its owners'
 * queries run in a session of their own.
 */
void
start_newest_read(Move *m)
{
	abandon_newest_read(m);
	m->newest = newest_start(m, &m->to);
}

/* a read of start_newest_read() dropped, its session closed (fail()) */
void
abandon_newest_read(Move *m)
{
	if (m->newest == NULL)
		return;
	owner_values_abandon(&m->newest->batch);
	newest_free(m->newest);
	m->newest = NULL;
}

/*
 * The bound of newest_own_id(): the smallest id of the millisecond
 * shardid.max_lead_ms + 1,250 ms ahead of a server's clock, the later of the
 * two servers' (ids the --from server made count when its clock runs ahead
 * of the --to server's: the wait is for them).
 */
static char *
bound(Move *m)
{
	Server	   *s[] = {&m->from, &m->to};
	char	   *b = NULL;
	int			i;

	for (i = 0; i < 2; i++)
	{
		char	   *v = NULL;

		need(m, s[i]);
		if (!get_value(s[i], &v,
					   "SELECT shardid.min_id(pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) "
					   "pg_catalog.make_interval(secs => (max_lead_ms OPERATOR(pg_catalog.+) 1250) "
					   "OPERATOR(pg_catalog./) 1000.0))::pg_catalog.text FROM shardid.info()", 0) || v == NULL)
			fail(m, "could not read the clock of the %s server: %s", s[i]->option, db_error());
		if (b == NULL || strtoll(v, NULL, 10) > strtoll(b, NULL, 10))
		{
			free(b);
			b = v;
		}
		else
			free(v);
	}
	return b;
}

/*
 * Wait until the --to server's clock is past the newest id of the shard
 * (newest_own_id() on server s), at most --timeout; a clock that does not
 * get there fails the move with what_then (whether writes are refused).
 */
static void
wait_clock(Move *m, Server *s, const char *what_then)
{
	char	   *newest;
	double		deadline;
	NewestRead *r = m->newest && m->newest->server == s ? m->newest : NULL;

	m->newest = NULL;
	abandon_newest_read(m);
	if (r == NULL)
		r = newest_start(m, s);
	newest = newest_finish(m, r);
	deadline = now_seconds() + m->timeout;
	if (newest == NULL)
		return;
	for (;;)
	{
		char	   *behind = NULL;

		check_interrupt(m);
		need(m, &m->to);
		if (!get_value(&m->to, &behind,
					   "SELECT ($1::bigint - (pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint "
					   "- (SELECT epoch_ms FROM shardid.info())))::text",
					   1, newest))
			fail(m, "could not read the clock of the --to server: %s", db_error());
		if (atoll(behind) < 0)
		{
			free(behind);
			break;
		}
		if (now_seconds() > deadline)
			fail(m, "the --to server's clock is %s ms behind the newest id of shard %d (%s)", behind, m->shard,
				 what_then);
		progress("waiting for the --to server's clock to pass the newest id: %s ms to go", behind);
		nap(atoll(behind) > 100 ? 100 : (int) atoll(behind) + 1);
		free(behind);
	}
	progress_end();
	free(newest);
}

/*
 * The columns of table c, by name, with their types: what the cutover
 * compares between the --from server's tables and their copies.  A type is
 * named by format_type(), qualified on both sides (the sessions' search_path
 * is empty, see db.c), never by pg_type.typname: the name of an array type
 * depends on the order in which the types of its schema were made, which
 * pg_restore does not keep (table "_en" made before enum en gives en's
 * array type another name on the --from server than on the copy).
 */
#define COLUMNS_SQL \
	"(SELECT pg_catalog.string_agg(pg_catalog.format('%I %s', a.attname, " \
	"pg_catalog.format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attname) FROM pg_catalog.pg_attribute a " \
	"WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped)"

/*
 * The partitions and inheritance children of table c, qualified: a
 * partition attached in another schema holds rows of the table that the
 * copy of the schema does not, and no table of the schema is new.
 */
#define PARTS_SQL \
	"(SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', pn.nspname, pc.relname), ', ' " \
	"ORDER BY pn.nspname, pc.relname) FROM pg_catalog.pg_inherits i " \
	"JOIN pg_catalog.pg_class pc ON pc.oid OPERATOR(pg_catalog.=) i.inhrelid " \
	"JOIN pg_catalog.pg_namespace pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace " \
	"WHERE i.inhparent OPERATOR(pg_catalog.=) c.oid)"

/*
 * copy_unchanged_legacy_rows(): fails the move when the tables of the
 * schema on the --from server (names, columns, partitions) are no longer
 * those of the copy; returns the legacy boundaries of the shard's
 * converted tables (convert_table()), rows of shardid.legacy_ids on the
 * --from server, which the copy of the
 * schema does not carry: as JSON for the cutover to record on the --to
 * server, NULL when there are none (or the --from server's shardid keeps
 * none, before 1.3, whose tables are compared all the same).  Without
 * them, the old ids of a moved table would route and decode as ids of
 * whatever shard their bits name.
 *
 * A row names its table by OID, the copy by name: the boundaries are read
 * in the statement that compares the tables of the schema on the --from
 * server, and their columns, with those of the copy, and the move gives up
 * when they differ.  The source refuses writes, not DDL: a table made
 * there after the copy began takes writes the move would not carry, one
 * with a column added lacks it on the --to server, and one dropped or
 * renamed (a --resume skips the verification) would lose its boundary on
 * the --to server, or fail the cutover on its old name.
 * Each row carries the OID of its table's copy, read with the names: a
 * copy renamed on the --to server before the cutover keeps its boundary,
 * which a new table given its name does not take; one dropped there fails
 * the cutover (no OID).
 */
static char *
copy_unchanged_legacy_rows(Move *m)
{
	char	   *rows = NULL;
	char	   *copy = NULL;
	char	   *sql;
	bool		keeps;
	PGresult   *res;

	need(m, &m->from);
	if (!keeps_legacy_ids(&m->from, &keeps))
		fail(m, "could not query the --from server: %s", db_error());
	need(m, &m->to);
	if (!get_value(&m->to, &copy,
				   "SELECT COALESCE(pg_catalog.json_object_agg(c.relname, pg_catalog.json_build_object("
				   "'oid', c.oid, 'columns', " COLUMNS_SQL ", 'parts', " PARTS_SQL ")), '{}')::text "
				   "FROM pg_catalog.pg_class c "
				   "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
				   "WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name "
				   "AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[])",
				   1, m->schema))
		fail(m, "could not list the tables of the copy on the --to server: %s", db_error());
	need(m, &m->from);
	sql = xprintf("%s%s", "WITH here AS (SELECT c.oid, c.relname FROM pg_catalog.pg_class c "
				  "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace "
				  "WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name "
				  "AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[])), "
				  "copy AS (SELECT t.key::pg_catalog.name AS relname, (t.value OPERATOR(pg_catalog.->>) 'oid')::pg_catalog.oid AS tab, "
				  "t.value OPERATOR(pg_catalog.->>) 'columns' AS columns, t.value OPERATOR(pg_catalog.->>) 'parts' AS parts "
				  "FROM pg_catalog.json_each($2::pg_catalog.json) AS t) "
				  "SELECT pg_catalog.concat_ws('; ', "
				  "'gone: ' OPERATOR(pg_catalog.||) (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(y.relname), ', ' "
				  "ORDER BY y.relname) FROM copy y WHERE NOT EXISTS (SELECT FROM here h "
				  "WHERE h.relname OPERATOR(pg_catalog.=) y.relname)), "
				  "'new: ' OPERATOR(pg_catalog.||) (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(h.relname), ', ' "
				  "ORDER BY h.relname) FROM here h WHERE NOT EXISTS (SELECT FROM copy y "
				  "WHERE y.relname OPERATOR(pg_catalog.=) h.relname)), "
				  "'other columns: ' OPERATOR(pg_catalog.||) (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(h.relname), ', ' "
				  "ORDER BY h.relname) FROM here h JOIN copy y ON y.relname OPERATOR(pg_catalog.=) h.relname "
				  "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) h.oid "
				  "WHERE y.columns IS DISTINCT FROM " COLUMNS_SQL "), "
				  "'other partitions: ' OPERATOR(pg_catalog.||) (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(h.relname), ', ' "
				  "ORDER BY h.relname) FROM here h JOIN copy y ON y.relname OPERATOR(pg_catalog.=) h.relname "
				  "JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) h.oid "
				  "WHERE y.parts IS DISTINCT FROM " PARTS_SQL ")), ",
				  keeps ?
				  "(SELECT pg_catalog.json_agg(pg_catalog.json_build_object("
				  "'tab', y.tab, 'id_column', l.id_column, 'shard', l.shard, "
				  "'legacy_below', l.legacy_below, 'converted_at', l.converted_at, "
				  "'converted_by', l.converted_by, 'trusted', l.trusted))::text "
				  "FROM shardid.legacy_ids l "
				  "JOIN here h ON h.oid OPERATOR(pg_catalog.=) l.tab::pg_catalog.oid "
				  "JOIN copy y ON y.relname OPERATOR(pg_catalog.=) h.relname)" :
				  "NULL::pg_catalog.text");
	res = query(&m->from, sql, 2, m->schema, copy);
	free(sql);
	free(copy);
	if (res == NULL)
		fail(m, "could not compare schema \"%s\" on the --from server with its copy: %s",
			 m->schema, db_error());
	if (PQgetvalue(res, 0, 0)[0] != '\0')
	{
		char	   *diff = xstrdup(PQgetvalue(res, 0, 0));

		PQclear(res);
		fail(m, "the tables of schema \"%s\" on the --from server are no longer those of the copy on the "
			 "--to server (%s): a table, a column or a partition was added, dropped or renamed after the copy "
			 "began, whose rows, columns or legacy boundary (shardid.legacy_ids) the move would not carry; "
			 "move the shard again",
			 m->schema, diff);
	}
	if (!PQgetisnull(res, 0, 1))
		rows = xstrdup(PQgetvalue(res, 0, 1));
	PQclear(res);
	return rows;
}

/*
 * The tables of schema $1 on the --from server whose freeze is no longer
 * the one the freeze made: its trigger missing, disabled, or its row of
 * pg_trigger written since by another transaction than the one that wrote
 * the source's row of the journal (move $2) in the freeze, which the
 * hand-over writes next.  The owner of a table may ALTER TABLE ... DISABLE
 * TRIGGER the trigger of hers and write: a row written before the
 * verification fails it, one written after it would stay on the --from
 * server only.  "" when none.
 */
#define GUARDS_CHANGED_SQL \
	"SELECT COALESCE(pg_catalog.string_agg(c.oid::pg_catalog.regclass::pg_catalog.text, ', ' ORDER BY c.relname), '') " \
	"FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace " \
	"WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name " \
	"AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog.\"char\"[]) AND NOT EXISTS (" \
	"SELECT FROM pg_catalog.pg_trigger t JOIN shardid.move_journal j " \
	"ON j.move_id OPERATOR(pg_catalog.=) $2 AND j.side OPERATOR(pg_catalog.=) 'source' " \
	"WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid AND t.tgname OPERATOR(pg_catalog.=) '" GUARD_TRIGGER "' " \
	"AND t.tgenabled OPERATOR(pg_catalog.=) 'O' AND t.xmin OPERATOR(pg_catalog.=) j.xmin)"

/*
 * source: record that the --to server may take the shard over, once the
 * freeze is found unchanged, the tables held against writes (a transaction
 * that disabled a trigger and writes holds them) until the record commits.
 * A run resumed after the record (which is the journal's row the freeze
 * wrote no longer) writes it again only.
 */
static void
hand_over(Move *m)
{
	double		deadline = now_seconds() + m->timeout;

	if (is(m->src_phase, "handing-over"))
	{
		need(m, &m->from);
		if (!journal_write(m, &m->from, "source", "handing-over"))
			fail(m, "could not record the hand-over on the --from server: %s", db_error());
		return;
	}
	for (;;)
	{
		char	   *changed = NULL;
		char	   *why;
		bool		ok;

		need(m, &m->from);
		ok = tx_begin(&m->from) &&
			exec_sql(&m->from, FREEZE_LOCK_TIMEOUT_SQL, 0) &&
			lock_tables(m, &m->from, "SHARE ROW EXCLUSIVE") &&
			get_value(&m->from, &changed, GUARDS_CHANGED_SQL, 2, m->schema, m->move_id) && changed != NULL;
		if (ok && changed[0] != '\0')
		{
			rollback(m, &m->from);
			fail(m, "the trigger " GUARD_TRIGGER " that refuses writes to table %s on the --from server was "
				 "disabled or changed after the freeze (the owner of a table may ALTER TABLE ... DISABLE "
				 "TRIGGER): rows written there meanwhile would not be on the --to server; move the shard again",
				 changed);
		}
		free(changed);
		if (ok && journal_write(m, &m->from, "source", "handing-over") && commit(m, &m->from))
			return;
		why = xstrdup(db_error());
		ok = is(db_sqlstate(), SQLSTATE_LOCK_NOT_AVAILABLE) || is(db_sqlstate(), SQLSTATE_DEADLOCK_DETECTED);
		rollback(m, &m->from);
		check_interrupt(m);
		if (!ok || now_seconds() > deadline)
			fail(m, "could not record the hand-over on the --from server: %s", why);
		free(why);
		nap(RETRY_NAP_MS);
	}
}

/* target: one transaction lets the copy take writes and registers the shard */
void
step_cutover(Move *m)
{
	bool		ok;
	char	   *has_floor = NULL;
	char	   *legacy;

	m->step = "the cutover";
	check_interrupt(m);
	wait_clock(m, &m->to, "writes to the shard are refused");
	pause_part(m, "clock");
	say(m->beyond_reported ?
		"the --to server's clock is past the newest id of shard %d within the bound: its ids sort after those" :
		"the --to server's clock is past the newest id of shard %d: its ids sort after all of them", m->shard);
	check_interrupt(m);
	need(m, &m->to);
	if (!get_value(&m->to, &has_floor,
				   "SELECT (pg_catalog.to_regprocedure('shardid.raise_floor(integer)') IS NOT NULL)::text", 0))
		fail(m, "could not query the --to server: %s", db_error());
	if (!is(has_floor, "true"))
		warning_msg("the --to server has shardid older than 1.3, which keeps no floor of shard %d: "
					"run ALTER EXTENSION shardid UPDATE there before it makes ids of the shard "
					"(the update raises the floor of every registered shard)", m->shard);
	legacy = copy_unchanged_legacy_rows(m);
	if (legacy != NULL && !is(has_floor, "true"))
		fail(m, "schema \"%s\" holds tables converted by shardid.convert_table(), whose legacy boundaries "
			 "the --to server's shardid (older than 1.3) cannot keep: run ALTER EXTENSION shardid UPDATE "
			 "there and move the shard again", m->schema);
	hand_over(m);
	pause_point("handover");
	check_interrupt(m);
	need(m, &m->to);
	/*
	 * A row of shardid.legacy_ids outlives its table until a superuser
	 * deletes it: rows on the --to server that name relations of the copy
	 * (made by this move, in a schema that was not there) are rows of
	 * dropped tables whose OIDs the copy reuses, and would mark a table
	 * never converted as converted.  They go; the --from server's rows
	 * take their place.
	 *
	 * The floor of the shard on the target: the registration raises it to
	 * the newest id the copy holds (and an earlier registration of the same
	 * schema, which register_shard() keeps, is raised again), so that no
	 * id the target makes from now on, after a crash or on a promoted
	 * standby, sorts before the copied rows.
	 */
	ok = tx_begin(&m->to) &&
		unfreeze_tables(&m->to, m->schema) &&
		(!is(has_floor, "true") || delete_legacy_ids(&m->to, m->schema)) &&
		(legacy == NULL ||
		 exec_sql(&m->to,
				  "INSERT INTO shardid.legacy_ids AS l (tab, id_column, shard, legacy_below, converted_at, "
				  "converted_by, trusted) "
				  "SELECT (SELECT c.oid::pg_catalog.regclass FROM pg_catalog.pg_class c "
				  "WHERE c.oid OPERATOR(pg_catalog.=) r.tab), "
				  "r.id_column, r.shard, r.legacy_below, r.converted_at, r.converted_by, r.trusted "
				  "FROM pg_catalog.json_to_recordset($1::pg_catalog.json) AS r(tab pg_catalog.oid, "
				  "id_column pg_catalog.name, shard pg_catalog.int4, legacy_below pg_catalog.int8, "
				  "converted_at pg_catalog.timestamptz, converted_by pg_catalog.name, trusted pg_catalog.bool) "
				  "ON CONFLICT (tab) DO UPDATE SET id_column = excluded.id_column, shard = excluded.shard, "
				  "legacy_below = excluded.legacy_below, converted_at = excluded.converted_at, "
				  "converted_by = excluded.converted_by, trusted = excluded.trusted",
				  1, legacy)) &&
		exec_sql(&m->to, "SELECT shardid.register_shard($1::integer, $2::name)", 2, m->shard_s, m->schema) &&
		(!is(has_floor, "true") ||
		 exec_sql(&m->to, "SELECT shardid.raise_floor($1::integer)", 1, m->shard_s)) &&
		journal_write(m, &m->to, "target", "cut-over") && commit(m, &m->to);
	free(has_floor);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->to);
		fail(m, "could not register shard %d on the --to server: %s", m->shard, why);
	}
	if (legacy != NULL)
		say("the legacy boundaries of the converted tables of schema \"%s\" are recorded on the --to server",
			m->schema);
	free(legacy);
	m->past_no_return = true;
	say("cut over: shard %d is registered on the --to server, which takes its writes", m->shard);
	pause_part(m, "cutover");
	if (m->frozen_at > 0)
	{
		char	   *parts = pause_parts_text(m);

		say("writes to shard %d were refused for %.1f s, from the freeze to the cutover", m->shard,
			now_seconds() - m->frozen_at);
		detail_msg("%s.", parts);
		free(parts);
	}
	pause_point("cutover");
	check_interrupt(m);
}

/* source: unregister the shard, keep the frozen copy; target: done */
void
step_finish(Move *m)
{
	bool		ok;

	m->step = "the end of the move";
	need(m, &m->from);
	ok = tx_begin(&m->from) &&
		exec_sql(&m->from, "SELECT shardid.unregister_shard($1::integer)", 1, m->shard_s) &&
		journal_write(m, &m->from, "source", "moved-away") && commit(m, &m->from);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->from);
		fail(m, "could not unregister shard %d on the --from server: %s", m->shard, why);
	}
	need(m, &m->to);
	if (!journal_write(m, &m->to, "target", "done"))
		fail(m, "could not record the end of the move on the --to server: %s", db_error());
	say("shard %d now lives on the --to server: route it there", m->shard);
}
