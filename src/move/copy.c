/*-------------------------------------------------------------------------
 *
 * copy.c
 *	  Copying with pg_dump and pg_restore as child processes: the
 *	  definitions of the schema (online moves), or the definitions and the
 *	  rows of the frozen shard (offline moves), restored into the empty
 *	  schema the move made on the target.  Offline, the rows are written
 *	  between the definitions pg_restore makes before them and those it
 *	  makes after them, by each table's owner (copy_rows_as_owners()).
 *
 * src/move/copy.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "move.h"

static long long
copy_progress_poll(CopyProgress *cp)
{
	Move	   *m = cp->move;
	PGresult   *res;
	int			i,
				r;
	long long	done = 0;

	if (cp->by_relid)
	{
		res = query(cp->server,
					"SELECT relid::text, tuples_processed FROM pg_catalog.pg_stat_progress_copy "
					"WHERE datname = pg_catalog.current_database() AND command = $1",
					1, cp->command);
		for (r = 0; res && r < PQntuples(res); r++)
		{
			for (i = 0; i < cp->nrel; i++)
				if (strcmp(cp->relid[i], PQgetvalue(res, r, 0)) == 0)
					break;
			if (i == cp->nrel && cp->nrel < MAX_TRACKED_RELS)
				snprintf(cp->relid[cp->nrel++], sizeof(cp->relid[0]), "%s", PQgetvalue(res, r, 0));
			if (i < MAX_TRACKED_RELS)
				cp->reldone[i] = atoll(PQgetvalue(res, r, 1));
		}
		PQclear(res);
		for (i = 0; i < cp->nrel; i++)
			done += cp->reldone[i];
		return done;
	}
	res = query(cp->server,
				"SELECT c.relname, p.tuples_processed "
				"FROM pg_catalog.pg_stat_progress_copy p "
				"JOIN pg_catalog.pg_class c ON c.oid = p.relid "
				"JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
				"WHERE n.nspname = $1::name AND p.command = $2",
				2, m->schema, cp->command);
	for (i = 0; i < m->ntables; i++)
		if (m->tables[i].seen == 1)
			m->tables[i].seen = 2;	/* ended, unless still listed */
	if (res)
	{
		for (r = 0; r < PQntuples(res); r++)
			for (i = 0; i < m->ntables; i++)
				if (is(m->tables[i].name, PQgetvalue(res, r, 0)))
				{
					m->tables[i].seen = 1;
					m->tables[i].copied = atoll(PQgetvalue(res, r, 1));
				}
		PQclear(res);
	}
	for (i = 0; i < m->ntables; i++)
	{
		long long	n = m->tables[i].kind != 'r' ? 0 :
			m->tables[i].rows ? m->tables[i].rows : m->tables[i].estimate;

		if (m->tables[i].seen == 2)
			done += n > m->tables[i].copied ? n : m->tables[i].copied;
		else if (m->tables[i].seen == 1)
			done += m->tables[i].copied;
	}
	return done;
}

void
copy_progress_tick(void *arg)
{
	CopyProgress *cp = arg;
	Move	   *m = cp->move;
	long long	done;
	double		elapsed,
				rate;
	char		a[32],
				b[32],
				c[32],
				d[32];

	if (!progress_enabled())
		return;
	/* after the rows, pg_restore builds the indexes: say so, not "96%" */
	if (cp->by_relid)
	{
		PGresult   *res = query(cp->server,
								"SELECT phase, blocks_done, blocks_total, tuples_done, tuples_total "
								"FROM pg_catalog.pg_stat_progress_create_index "
								"WHERE datname = pg_catalog.current_database() LIMIT 1", 0);

		if (res && PQntuples(res) > 0)
		{
			long long	bt = atoll(PQgetvalue(res, 0, 2)),
						tt = atoll(PQgetvalue(res, 0, 4));
			char		part[64] = "";

			if (bt > 0)
				snprintf(part, sizeof(part), ", %lld%% of its blocks", 100 * atoll(PQgetvalue(res, 0, 1)) / bt);
			else if (tt > 0)
				snprintf(part, sizeof(part), ", %lld%% of its rows", 100 * atoll(PQgetvalue(res, 0, 3)) / tt);
			progress("%s: rows copied; building an index: %s%s", cp->label, PQgetvalue(res, 0, 0), part);
			PQclear(res);
			return;
		}
		PQclear(res);
	}
	done = copy_progress_poll(cp);
	elapsed = now_seconds() - cp->started;
	rate = elapsed > 0 ? done / elapsed : 0;
	if (cp->total > 0)
		progress("%s: %s of %s%s rows (%.0f%%), %s rows/s, %s left%s",
				 cp->label, fmt_count(a, sizeof(a), done), m->online ? "~" : "",
				 fmt_count(b, sizeof(b), cp->total),
				 100.0 * (done > cp->total ? cp->total : done) / cp->total,
				 fmt_count(c, sizeof(c), rate),
				 rate > 0 && cp->total > done ? fmt_seconds(d, sizeof(d), (cp->total - done) / rate) : "0 s",
				 cp->extra ? cp->extra : "");
	else
		progress("%s: %s rows, %s rows/s%s", cp->label, fmt_count(a, sizeof(a), done),
				 fmt_count(c, sizeof(c), rate), cp->extra ? cp->extra : "");
}

void
copy_progress_reset(Move *m)
{
	int			i;

	for (i = 0; i < m->ntables; i++)
	{
		m->tables[i].seen = 0;
		m->tables[i].copied = 0;
	}
}

static void
run_child(Move *m, const char *const argv[], const char *out, CopyProgress *cp, const char *what,
		  const char *password)
{
	char	   *err = xprintf("%s/%s.err", m->tmpdir, strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
	pid_t		pid;
	int			status;

	check_interrupt(m);
	if (cp)
	{
		copy_progress_reset(m);
		cp->started = now_seconds();
	}
	pid = child_start(argv, out, err, password);
	if (pid < 0)
		fail(m, "could not start %s", argv[0]);
	status = child_wait(pid, cp ? copy_progress_tick : NULL, cp);
	progress_end();
	if (status == -2)
		fail(m, "interrupted");
	if (status != 0)
	{
		char	   *tail = file_tail(err, 4);

		error_msg("%s failed (exit status %d)", what, status);
		if (tail[0])
			detail_msg("%s", tail);
		fail(m, "%s failed", what);
	}
	unlink(err);
	free(err);
}

static void
rows_tick(void *arg, long long rows)
{
	char		a[32];

	progress("copy: table %s, %s rows", (const char *) arg, fmt_count(a, sizeof(a), (double) rows));
}

/*
 * The encoding both ends of the rows' copy share, as pg_dump and pg_restore
 * set it; the settings of the values' text are pinned on every connection
 * (pin_values())
 */
#define ROWS_SETTINGS_SQL "SELECT pg_catalog.set_config('client_encoding', $1, false)"

/*
 * Before a failure: the undo freezes and drops on the same tables, which
 * the reading transaction would keep locked.
 */
static void rows_fail(Move *m, const char *fmt,...) PRINTF_LIKE(2, 3) NORETURN;

static void
rows_fail(Move *m, const char *fmt,...)
{
	va_list		ap;
	char		msg[8192];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tx_rollback(&m->rows_src);
	server_close(&m->rows_src);
	tx_rollback(&m->rows_dst);
	server_close(&m->rows_dst);
	fail(m, "%s", msg);
}

/*
 * The rows of the shard's tables, written on the --to server by each
 * table's owner, in one transaction of a connection of their own.
 *
 * Writing a row runs code the table's owner chose: CHECK constraints, the
 * CHECKs of domains anywhere in a column's type, generated columns,
 * partition constraints, whatever they call.  It runs with the owner's
 * rights, where the owner cannot become the superuser again: each table's
 * rows go, as text, into an unlogged table of the superuser, and a SECURITY
 * DEFINER function owned by the table's owner (search_path and row_security
 * fixed) converts them with the columns' types and inserts them;
 * PostgreSQL refuses SET ROLE and SET SESSION AUTHORIZATION inside it.  A
 * plain SET (set_config(..., false)) in the owner's code outlives the
 * function, even of search_path, which its SET clause then no longer
 * restores: after each call the session's settings are reset (RESET ALL)
 * and made again, before any statement of the move's runs in it.  The
 * tables and the functions live in a schema of the move's own, made in the
 * transaction with a random name and dropped before its COMMIT, in which
 * the owners have USAGE only: their code, which may create objects in
 * pg_temp or empty it (DISCARD TEMP), can neither take the name of a table
 * or function of the move nor drop one.  The tables are made before the
 * first owner's code runs; each function right before its call, with
 * CREATE (never OR REPLACE): an owner's code may alter the functions it
 * owns.
 * pg_restore made the tables before, without indexes, keys or triggers,
 * and makes those after, as for its own rows.
 *
 * The owner of the schema may drop any table in it, and an owner's code
 * runs in this transaction: each table is still the one pg_restore made
 * (its oid, taken before any owner's code ran) right before its rows are
 * written, or nothing is committed.
 *
 * What an owner's code leaves for the COMMIT would run as the superuser
 * (PostgreSQL before 18 fires deferred triggers as the role that commits):
 * a deferrable constraint trigger on a table of a role that is no
 * superuser, her own or the internal one of a deferrable foreign key,
 * UNIQUE or EXCLUDE constraint (whose recheck evaluates the index's
 * expressions), or a cursor WITH HOLD; when one exists at the end, nothing is
 * committed.  The source's rows are read by COPY TO, as pg_dump does, which
 * reads the table itself (no plan, no policy for a superuser) and calls
 * only the types' output functions, which only superusers write.
 */
static void
copy_rows_as_owners(Move *m)
{
	Server	   *src = &m->rows_src,
			   *dst = &m->rows_dst;
	char	  **cols = xcalloc(m->ntables + 1, sizeof(char *));
	char	  **make = xcalloc(m->ntables + 1, sizeof(char *));
	char	  **own = xcalloc(m->ntables + 1, sizeof(char *));
	char	  **oid = xcalloc(m->ntables + 1, sizeof(char *));
	char	   *enc = NULL,
			   *bad = NULL;
	char	   *scratch = random_name("shardid_move_");
	char	   *sql;
	int			i;
	bool		ok;
	long long	n;

	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	src->option = m->from.option;
	src->conninfo = m->from.conninfo;
	dst->option = m->to.option;
	dst->conninfo = m->to.conninfo;
	if (!server_connect(src) ||
		!exec_sql(src, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0) ||
		!get_value(src, &enc, "SELECT pg_catalog.current_setting('server_encoding')", 0) ||
		!exec_sql(src, ROWS_SETTINGS_SQL, 1, enc))
		rows_fail(m, "could not read the rows of shard %d on the --from server: %s", m->shard, db_error());
	sql = xprintf("CREATE SCHEMA %s", scratch);
	if (!server_connect(dst) ||
		!exec_sql(dst, ROWS_SETTINGS_SQL, 1, enc) ||
		!tx_begin(dst) ||
		!exec_sql(dst, sql, 0))
		rows_fail(m, "could not write the rows of shard %d on the --to server: %s", m->shard, db_error());
	free(sql);

	/* every table of rows first, and the functions' text */
	for (i = 0; i < m->ntables; i++)
	{
		PGresult   *res;
		char	   *body,
				   *lbody,
				   *qowner;

		if (m->tables[i].kind != 'r')
			continue;
		res = query(src,
					"SELECT pg_catalog.string_agg(pg_catalog.quote_ident(attname), ', ' ORDER BY attnum), "
					"pg_catalog.string_agg('c' || n || ' pg_catalog.text', ', ' ORDER BY attnum), "
					"pg_catalog.string_agg('c' || n || '::' || pg_catalog.format_type(atttypid, atttypmod), ', ' "
					"ORDER BY attnum) "
					"FROM (SELECT attname, attnum, atttypid, atttypmod, pg_catalog.row_number() OVER (ORDER BY attnum) n "
					"FROM pg_catalog.pg_attribute WHERE attrelid = $1::pg_catalog.regclass AND attnum > 0 "
					"AND NOT attisdropped AND attgenerated = '') a",
					1, m->tables[i].qname);
		if (res == NULL)
			rows_fail(m, "could not read the columns of table %s on the --from server: %s", m->tables[i].qname, db_error());
		if (PQgetisnull(res, 0, 0))
			rows_fail(m, "table %s has no column but generated ones: shardid-move cannot copy its rows", m->tables[i].qname);
		cols[i] = xstrdup(PQgetvalue(res, 0, 0));
		if (!get_value(dst, &oid[i], "SELECT $1::pg_catalog.regclass::pg_catalog.oid::pg_catalog.text", 1,
					   m->tables[i].qname))
			rows_fail(m, "could not find table %s on the --to server: %s", m->tables[i].qname, db_error());
		sql = xprintf("CREATE UNLOGGED TABLE %s.shardid_move_rows_%d (%s)", scratch, i, PQgetvalue(res, 0, 1));
		body = xprintf("DECLARE n pg_catalog.int8; BEGIN INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE "
					   "SELECT %s FROM %s.shardid_move_rows_%d; "
					   "GET DIAGNOSTICS n = ROW_COUNT; RETURN n; END",
					   m->tables[i].qname, cols[i], PQgetvalue(res, 0, 2), scratch, i);
		PQclear(res);
		lbody = quote_literal(dst, body);
		qowner = quote_ident(dst, m->tables[i].owner);
		ok = exec_sql(dst, sql, 0);
		free(sql);
		sql = xprintf("GRANT SELECT ON %s.shardid_move_rows_%d TO %s", scratch, i, qowner);
		ok = ok && exec_sql(dst, sql, 0);
		free(sql);
		sql = xprintf("GRANT USAGE ON SCHEMA %s TO %s", scratch, qowner);
		ok = ok && exec_sql(dst, sql, 0);
		free(sql);
		/* made right before its call: an owner may alter its own functions */
		make[i] = xprintf("CREATE FUNCTION %s.shardid_move_write_%d() RETURNS pg_catalog.int8 LANGUAGE plpgsql "
						  "SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET row_security = off AS %s",
						  scratch, i, lbody);
		own[i] = xprintf("ALTER FUNCTION %s.shardid_move_write_%d() OWNER TO %s", scratch, i, qowner);
		free(body);
		free(lbody);
		free(qowner);
		if (!ok)
			rows_fail(m, "could not prepare the copy of table %s on the --to server: %s", m->tables[i].qname, db_error());
	}

	/* the rows, as text */
	for (i = 0; i < m->ntables; i++)
	{
		char	   *out,
				   *in;

		if (m->tables[i].kind != 'r')
			continue;
		if (interrupted_by)
			rows_fail(m, "interrupted");
		out = xprintf("COPY %s (%s) TO STDOUT", m->tables[i].qname, cols[i]);
		in = xprintf("COPY %s.shardid_move_rows_%d FROM STDIN", scratch, i);
		ok = copy_stream(src, out, dst, in, &n, rows_tick, m->tables[i].qname);
		progress_end();
		free(out);
		free(in);
		if (!ok)
			rows_fail(m, "could not copy the rows of table %s: %s", m->tables[i].qname, db_error());
	}
	tx_rollback(src);
	server_close(src);

	/* written by their owners */
	for (i = 0; i < m->ntables; i++)
	{
		char	   *call,
				   *written = NULL,
				   *now_oid = NULL;

		if (m->tables[i].kind != 'r')
			continue;
		if (interrupted_by)
			rows_fail(m, "interrupted");
		progress("copy: writing table %s as its owner %s", m->tables[i].qname, m->tables[i].owner);
		call = xprintf("SELECT %s.shardid_move_write_%d()", scratch, i);
		ok = exec_sql(dst, make[i], 0) && exec_sql(dst, own[i], 0) &&
			get_value(dst, &now_oid, "SELECT $1::pg_catalog.regclass::pg_catalog.oid::pg_catalog.text", 1,
					  m->tables[i].qname);
		if (ok && (now_oid == NULL || strcmp(now_oid, oid[i]) != 0))
		{
			free(call);
			rows_fail(m, "could not write the rows of table %s: it is no longer the table pg_restore made on the --to "
					  "server (dropped and made again while an owner's code ran)", m->tables[i].qname);
		}
		free(now_oid);
		now_oid = NULL;
		ok = ok && get_value(dst, &written, call, 0) &&
			exec_sql(dst, "RESET ALL", 0) && exec_sql(dst, SESSION_SETTINGS_SQL, 0) &&
			pin_values(dst) && exec_sql(dst, ROWS_SETTINGS_SQL, 1, enc);
		progress_end();
		free(call);
		if (!ok)
		{
			char	   *why = xstrdup(db_error());

			rows_fail(m, "could not write the rows of table %s as its owner %s: %s", m->tables[i].qname,
					  m->tables[i].owner, why);
		}
		free(written);
	}

	/* what the COMMIT would run as the superuser */
	if (!get_value(dst, &bad,
				   "SELECT pg_catalog.string_agg(DISTINCT x, '; ' ORDER BY x) FROM ("
				   "SELECT pg_catalog.format(CASE WHEN t.tgisinternal THEN 'deferrable constraint %I on table %s of role %s' "
				   "ELSE 'deferrable constraint trigger %I on table %s of role %s' END, "
				   "CASE WHEN t.tgisinternal THEN k.conname ELSE t.tgname END, "
				   "t.tgrelid::pg_catalog.regclass, r.rolname) x FROM pg_catalog.pg_trigger t "
				   "JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid JOIN pg_catalog.pg_roles r ON r.oid = c.relowner "
				   "LEFT JOIN pg_catalog.pg_constraint k ON k.oid = t.tgconstraint "
				   "WHERE t.tgdeferrable AND NOT r.rolsuper "
				   "UNION ALL SELECT pg_catalog.format('cursor %I WITH HOLD', name) FROM pg_catalog.pg_cursors "
				   "WHERE is_holdable) l", 0))
		rows_fail(m, "could not commit the rows of shard %d on the --to server: %s", m->shard, db_error());
	if (bad != NULL)
		rows_fail(m, "could not commit the rows of shard %d on the --to server: %s, which the commit would run as a "
				  "superuser", m->shard, bad);
	sql = xprintf("DROP SCHEMA %s CASCADE", scratch);
	if (!exec_sql(dst, sql, 0))
		rows_fail(m, "could not drop the move's schema %s on the --to server: %s", scratch, db_error());
	free(sql);
	free(scratch);
	if (!tx_commit(dst))
		rows_fail(m, "could not commit the rows of shard %d on the --to server: %s", m->shard, db_error());
	server_close(dst);
	for (i = 0; i < m->ntables; i++)
	{
		free(cols[i]);
		free(make[i]);
		free(own[i]);
		free(oid[i]);
	}
	free(cols);
	free(make);
	free(own);
	free(oid);
	free(enc);
}

/*
 * Dump the schema (data too unless schema_only), restore it into the empty
 * schema this move created on the target, in one transaction.
 */
void
copy_schema(Move *m, bool schema_only)
{
	char	   *dump = xprintf("%s/shard.dump", m->tmpdir);
	char	   *list = xprintf("%s/shard.list", m->tmpdir);
	char	   *list2 = xprintf("%s/shard.use", m->tmpdir);
	char	   *schema_arg = xprintf("--schema=%s", m->pattern);
	const char *from_pw,
			   *to_pw;
	char	   *from_ci = child_conninfo(&m->from, &from_pw);
	char	   *to_ci = child_conninfo(&m->to, &to_pw);
	char	   *from_db = xprintf("--dbname=%s", from_ci);
	char	   *to_db = xprintf("--dbname=%s", to_ci);
	char	   *list_arg = xprintf("--use-list=%s", list2);
	char	   *file_arg = xprintf("--file=%s", dump);
	CopyProgress cp = {0};
	FILE	   *in,
			   *out;
	char		line[8192];
	int			i;
	long long	total = 0;

	for (i = 0; i < m->ntables; i++)
		if (m->tables[i].kind == 'r')
			total += m->tables[i].rows ? m->tables[i].rows : m->tables[i].estimate;
	cp.move = m;
	cp.total = total;

	{
		const char *argv[] = {m->pg_dump, "--format=custom", schema_arg, file_arg,
			"--no-publications", "--no-subscriptions", schema_only ? "--schema-only" : "--no-sync",
		from_db, NULL};

		cp.server = &m->from;
		cp.label = "copy, reading from the --from server";
		cp.command = "COPY TO";
		run_child(m, argv, NULL, schema_only ? NULL : &cp, "pg_dump of the --from server", from_pw);
	}
	{
		const char *argv[] = {m->pg_restore, "--list", dump, NULL};

		run_child(m, argv, list, NULL, "pg_restore --list", NULL);
	}

	/*
	 * The move created the schema on the target itself (and recorded its
	 * oid); the archive's own CREATE SCHEMA, the entry with the source
	 * schema's oid in pg_namespace (2615), is left out.
	 */
	in = fopen(list, "r");
	out = fopen(list2, "w");
	if (in == NULL || out == NULL)
		fail(m, "could not filter the list of the dump: %s", strerror(errno));
	{
		char	   *skip = xprintf("2615 %s SCHEMA ", m->src_schema_oid);

		while (fgets(line, sizeof(line), in))
		{
			char	   *p = strchr(line, ';');
			char	   *type = NULL;

			/* "<id>; <catalog> <oid> <type> ...": the type after two numbers */
			if (p && p[1] == ' ' && (type = strchr(p + 2, ' ')) != NULL)
				type = strchr(type + 1, ' ');
			if (line[0] != ';' && p && strncmp(p + 2, skip, strlen(skip)) == 0)
				fprintf(out, ";%s", line);
			else if (line[0] != ';' && !schema_only && type && strncmp(type + 1, "TABLE DATA ", 11) == 0)
				fprintf(out, ";%s", line);	/* written by the owners */
			else
				fputs(line, out);
		}
		free(skip);
	}
	fclose(in);
	fclose(out);

	pause_point("restore");
	check_interrupt(m);
	if (schema_only)
	{
		const char *argv[] = {m->pg_restore, "--single-transaction", "--exit-on-error",
		list_arg, to_db, dump, NULL};

		run_child(m, argv, NULL, NULL, "pg_restore into the --to server", to_pw);
	}
	else
	{
		/* the definitions, the sequences' positions; the rows; the indexes, keys, triggers */
		const char *before[] = {m->pg_restore, "--single-transaction", "--exit-on-error",
			"--section=pre-data", "--section=data", list_arg, to_db, dump, NULL};
		const char *after[] = {m->pg_restore, "--single-transaction", "--exit-on-error",
		"--section=post-data", list_arg, to_db, dump, NULL};

		run_child(m, before, NULL, NULL, "pg_restore into the --to server", to_pw);
		copy_rows_as_owners(m);
		check_interrupt(m);
		cp.server = &m->to;
		cp.label = "copy, building indexes and keys on the --to server";
		cp.command = "COPY FROM";
		cp.by_relid = true;
		run_child(m, after, NULL, &cp, "pg_restore into the --to server", to_pw);
	}
	unlink(dump);
	unlink(list);
	unlink(list2);
	free(dump);
	free(list);
	free(list2);
	free(schema_arg);
	free(from_db);
	free(to_db);
	free(from_ci);
	free(to_ci);
	free(list_arg);
	free(file_arg);
}

/*
 * Target: drop what an earlier attempt left (its subscription, the schema
 * it created), then create the empty schema and record its oid, in one
 * transaction: the journal always names exactly the schema this move made.
 */
void
target_fresh_schema(Move *m)
{
	char	   *sql;
	char	   *qowner = quote_ident(&m->to, m->owner);
	bool		ok;
	char	   *oid = NULL;
	char	   *old = NULL;

	need(m, &m->to);
	if (!drop_subscription(&m->to, m->name))
		fail(m, "could not drop subscription %s on the --to server: %s", m->name, db_error());
	sql = xprintf("CREATE SCHEMA %s AUTHORIZATION %s", m->qschema, qowner);
	ok = tx_begin(&m->to);
	if (ok && m->dst_schema_oid)
		ok = drop_schema_by_oid(&m->to, m->dst_schema_oid, &old);
	ok = ok &&
		journal_write(m, &m->to, "target", "copying") &&
		exec_sql(&m->to, sql, 0) &&
		get_value(&m->to, &oid, "SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = $1::name", 1, m->schema) &&
		exec_sql(&m->to,
				 "UPDATE shardid.move_journal SET schema_oid = $1::oid, subscription_oid = NULL, "
				 "updated_at = pg_catalog.now() WHERE move_id = $2 AND side = 'target'",
				 2, oid, m->move_id) &&
		commit(m, &m->to);
	free(sql);
	free(qowner);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->to);
		fail(m, "could not create schema \"%s\" on the --to server: %s", m->schema, why);
	}
	if (old)
		say("--to server: the partial copy of an earlier attempt was dropped");
	m->dst_schema_oid = oid;
}

/* offline: dump and restore the frozen shard */
void
step_copy_offline(Move *m)
{
	long long  *counts = xcalloc(m->ntables + 1, sizeof(long long));
	int			i;
	double		t = now_seconds();
	char		a[32];

	m->step = "the copy";
	check_interrupt(m);
	target_fresh_schema(m);
	need(m, &m->from);
	if (!count_rows(&m->from, m->tables, m->ntables, counts))
		fail(m, "could not count the rows of shard %d on the --from server: %s", m->shard, db_error());
	m->rows_total = 0;
	for (i = 0; i < m->ntables; i++)
	{
		m->tables[i].rows = counts[i];
		m->rows_total += counts[i];
	}
	free(counts);
	say("copying schema \"%s\": %s, %s rows, %s", m->schema, count_of(m->ntables, "table", "tables"),
		fmt_count(a, sizeof(a), m->rows_total), count_of(m->nseqs, "sequence", "sequences"));
	copy_schema(m, false);
	pause_point("copy");
	check_interrupt(m);
	need(m, &m->to);
	if (!journal_write(m, &m->to, "target", "copied"))
		fail(m, "could not record the copy on the --to server: %s", db_error());
	pause_part(m, "copy");
	say("copied in %.1f s", now_seconds() - t);
}
