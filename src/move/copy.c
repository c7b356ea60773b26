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
				2, M.schema, cp->command);
	for (i = 0; i < M.ntables; i++)
		if (M.tables[i].seen == 1)
			M.tables[i].seen = 2;	/* ended, unless still listed */
	if (res)
	{
		for (r = 0; r < PQntuples(res); r++)
			for (i = 0; i < M.ntables; i++)
				if (is(M.tables[i].name, PQgetvalue(res, r, 0)))
				{
					M.tables[i].seen = 1;
					M.tables[i].copied = atoll(PQgetvalue(res, r, 1));
				}
		PQclear(res);
	}
	for (i = 0; i < M.ntables; i++)
	{
		long long	n = M.tables[i].kind != 'r' ? 0 :
			M.tables[i].rows ? M.tables[i].rows : M.tables[i].estimate;

		if (M.tables[i].seen == 2)
			done += n > M.tables[i].copied ? n : M.tables[i].copied;
		else if (M.tables[i].seen == 1)
			done += M.tables[i].copied;
	}
	return done;
}

void
copy_progress_tick(void *arg)
{
	CopyProgress *cp = arg;
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
				 cp->label, fmt_count(a, sizeof(a), done), M.online ? "~" : "",
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
copy_progress_reset(void)
{
	int			i;

	for (i = 0; i < M.ntables; i++)
	{
		M.tables[i].seen = 0;
		M.tables[i].copied = 0;
	}
}

static void
run_child(const char *const argv[], const char *out, CopyProgress *cp, const char *what,
		  const char *password)
{
	char	   *err = xprintf("%s/%s.err", M.tmpdir, strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]);
	pid_t		pid;
	int			status;

	check_interrupt();
	if (cp)
	{
		copy_progress_reset();
		cp->started = now_seconds();
	}
	pid = child_start(argv, out, err, password);
	if (pid < 0)
		fail("could not start %s", argv[0]);
	status = child_wait(pid, cp ? copy_progress_tick : NULL, cp);
	progress_end();
	if (status == -2)
		fail("interrupted");
	if (status != 0)
	{
		char	   *tail = file_tail(err, 4);

		error_msg("%s failed (exit status %d)", what, status);
		if (tail[0])
			detail_msg("%s", tail);
		fail("%s failed", what);
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
static void rows_fail(const char *fmt,...) PRINTF_LIKE(1, 2) NORETURN;

static void
rows_fail(const char *fmt,...)
{
	va_list		ap;
	char		msg[8192];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tx_rollback(&M.rows_src);
	server_close(&M.rows_src);
	tx_rollback(&M.rows_dst);
	server_close(&M.rows_dst);
	fail("%s", msg);
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
copy_rows_as_owners(void)
{
	Server	   *src = &M.rows_src,
			   *dst = &M.rows_dst;
	char	  **cols = xcalloc(M.ntables + 1, sizeof(char *));
	char	  **make = xcalloc(M.ntables + 1, sizeof(char *));
	char	  **own = xcalloc(M.ntables + 1, sizeof(char *));
	char	  **oid = xcalloc(M.ntables + 1, sizeof(char *));
	char	   *enc = NULL,
			   *bad = NULL;
	char	   *scratch = random_name("shardid_move_");
	char	   *sql;
	int			i;
	bool		ok;
	long long	n;

	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	src->option = M.from.option;
	src->conninfo = M.from.conninfo;
	dst->option = M.to.option;
	dst->conninfo = M.to.conninfo;
	if (!server_connect(src) ||
		!exec_sql(src, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0) ||
		!get_value(src, &enc, "SELECT pg_catalog.current_setting('server_encoding')", 0) ||
		!exec_sql(src, ROWS_SETTINGS_SQL, 1, enc))
		rows_fail("could not read the rows of shard %d on the --from server: %s", M.shard, db_error());
	sql = xprintf("CREATE SCHEMA %s", scratch);
	if (!server_connect(dst) ||
		!exec_sql(dst, ROWS_SETTINGS_SQL, 1, enc) ||
		!tx_begin(dst) ||
		!exec_sql(dst, sql, 0))
		rows_fail("could not write the rows of shard %d on the --to server: %s", M.shard, db_error());
	free(sql);

	/* every table of rows first, and the functions' text */
	for (i = 0; i < M.ntables; i++)
	{
		PGresult   *res;
		char	   *body,
				   *lbody,
				   *qowner;

		if (M.tables[i].kind != 'r')
			continue;
		res = query(src,
					"SELECT pg_catalog.string_agg(pg_catalog.quote_ident(attname), ', ' ORDER BY attnum), "
					"pg_catalog.string_agg('c' || n || ' pg_catalog.text', ', ' ORDER BY attnum), "
					"pg_catalog.string_agg('c' || n || '::' || pg_catalog.format_type(atttypid, atttypmod), ', ' "
					"ORDER BY attnum) "
					"FROM (SELECT attname, attnum, atttypid, atttypmod, pg_catalog.row_number() OVER (ORDER BY attnum) n "
					"FROM pg_catalog.pg_attribute WHERE attrelid = $1::pg_catalog.regclass AND attnum > 0 "
					"AND NOT attisdropped AND attgenerated = '') a",
					1, M.tables[i].qname);
		if (res == NULL)
			rows_fail("could not read the columns of table %s on the --from server: %s", M.tables[i].qname, db_error());
		if (PQgetisnull(res, 0, 0))
			rows_fail("table %s has no column but generated ones: shardid-move cannot copy its rows", M.tables[i].qname);
		cols[i] = xstrdup(PQgetvalue(res, 0, 0));
		if (!get_value(dst, &oid[i], "SELECT $1::pg_catalog.regclass::pg_catalog.oid::pg_catalog.text", 1,
					   M.tables[i].qname))
			rows_fail("could not find table %s on the --to server: %s", M.tables[i].qname, db_error());
		sql = xprintf("CREATE UNLOGGED TABLE %s.shardid_move_rows_%d (%s)", scratch, i, PQgetvalue(res, 0, 1));
		body = xprintf("DECLARE n pg_catalog.int8; BEGIN INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE "
					   "SELECT %s FROM %s.shardid_move_rows_%d; "
					   "GET DIAGNOSTICS n = ROW_COUNT; RETURN n; END",
					   M.tables[i].qname, cols[i], PQgetvalue(res, 0, 2), scratch, i);
		PQclear(res);
		lbody = quote_literal(dst, body);
		qowner = quote_ident(dst, M.tables[i].owner);
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
			rows_fail("could not prepare the copy of table %s on the --to server: %s", M.tables[i].qname, db_error());
	}

	/* the rows, as text */
	for (i = 0; i < M.ntables; i++)
	{
		char	   *out,
				   *in;

		if (M.tables[i].kind != 'r')
			continue;
		if (interrupted_by)
			rows_fail("interrupted");
		out = xprintf("COPY %s (%s) TO STDOUT", M.tables[i].qname, cols[i]);
		in = xprintf("COPY %s.shardid_move_rows_%d FROM STDIN", scratch, i);
		ok = copy_stream(src, out, dst, in, &n, rows_tick, M.tables[i].qname);
		progress_end();
		free(out);
		free(in);
		if (!ok)
			rows_fail("could not copy the rows of table %s: %s", M.tables[i].qname, db_error());
	}
	tx_rollback(src);
	server_close(src);

	/* written by their owners */
	for (i = 0; i < M.ntables; i++)
	{
		char	   *call,
				   *written = NULL,
				   *now_oid = NULL;

		if (M.tables[i].kind != 'r')
			continue;
		if (interrupted_by)
			rows_fail("interrupted");
		progress("copy: writing table %s as its owner %s", M.tables[i].qname, M.tables[i].owner);
		call = xprintf("SELECT %s.shardid_move_write_%d()", scratch, i);
		ok = exec_sql(dst, make[i], 0) && exec_sql(dst, own[i], 0) &&
			get_value(dst, &now_oid, "SELECT $1::pg_catalog.regclass::pg_catalog.oid::pg_catalog.text", 1,
					  M.tables[i].qname);
		if (ok && (now_oid == NULL || strcmp(now_oid, oid[i]) != 0))
		{
			free(call);
			rows_fail("could not write the rows of table %s: it is no longer the table pg_restore made on the --to "
					  "server (dropped and made again while an owner's code ran)", M.tables[i].qname);
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

			rows_fail("could not write the rows of table %s as its owner %s: %s", M.tables[i].qname,
					  M.tables[i].owner, why);
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
		rows_fail("could not commit the rows of shard %d on the --to server: %s", M.shard, db_error());
	if (bad != NULL)
		rows_fail("could not commit the rows of shard %d on the --to server: %s, which the commit would run as a "
				  "superuser", M.shard, bad);
	sql = xprintf("DROP SCHEMA %s CASCADE", scratch);
	if (!exec_sql(dst, sql, 0))
		rows_fail("could not drop the move's schema %s on the --to server: %s", scratch, db_error());
	free(sql);
	free(scratch);
	if (!tx_commit(dst))
		rows_fail("could not commit the rows of shard %d on the --to server: %s", M.shard, db_error());
	server_close(dst);
	for (i = 0; i < M.ntables; i++)
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
copy_schema(bool schema_only)
{
	char	   *dump = xprintf("%s/shard.dump", M.tmpdir);
	char	   *list = xprintf("%s/shard.list", M.tmpdir);
	char	   *list2 = xprintf("%s/shard.use", M.tmpdir);
	char	   *schema_arg = xprintf("--schema=%s", M.pattern);
	const char *from_pw,
			   *to_pw;
	char	   *from_ci = child_conninfo(&M.from, &from_pw);
	char	   *to_ci = child_conninfo(&M.to, &to_pw);
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

	for (i = 0; i < M.ntables; i++)
		if (M.tables[i].kind == 'r')
			total += M.tables[i].rows ? M.tables[i].rows : M.tables[i].estimate;
	cp.total = total;

	{
		const char *argv[] = {M.pg_dump, "--format=custom", schema_arg, file_arg,
			"--no-publications", "--no-subscriptions", schema_only ? "--schema-only" : "--no-sync",
		from_db, NULL};

		cp.server = &M.from;
		cp.label = "copy, reading from the --from server";
		cp.command = "COPY TO";
		run_child(argv, NULL, schema_only ? NULL : &cp, "pg_dump of the --from server", from_pw);
	}
	{
		const char *argv[] = {M.pg_restore, "--list", dump, NULL};

		run_child(argv, list, NULL, "pg_restore --list", NULL);
	}

	/*
	 * The move created the schema on the target itself (and recorded its
	 * oid); the archive's own CREATE SCHEMA, the entry with the source
	 * schema's oid in pg_namespace (2615), is left out.
	 */
	in = fopen(list, "r");
	out = fopen(list2, "w");
	if (in == NULL || out == NULL)
		fail("could not filter the list of the dump: %s", strerror(errno));
	{
		char	   *skip = xprintf("2615 %s SCHEMA ", M.src_schema_oid);

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
	check_interrupt();
	if (schema_only)
	{
		const char *argv[] = {M.pg_restore, "--single-transaction", "--exit-on-error",
		list_arg, to_db, dump, NULL};

		run_child(argv, NULL, NULL, "pg_restore into the --to server", to_pw);
	}
	else
	{
		/* the definitions, the sequences' positions; the rows; the indexes, keys, triggers */
		const char *before[] = {M.pg_restore, "--single-transaction", "--exit-on-error",
			"--section=pre-data", "--section=data", list_arg, to_db, dump, NULL};
		const char *after[] = {M.pg_restore, "--single-transaction", "--exit-on-error",
		"--section=post-data", list_arg, to_db, dump, NULL};

		run_child(before, NULL, NULL, "pg_restore into the --to server", to_pw);
		copy_rows_as_owners();
		check_interrupt();
		cp.server = &M.to;
		cp.label = "copy, building indexes and keys on the --to server";
		cp.command = "COPY FROM";
		cp.by_relid = true;
		run_child(after, NULL, &cp, "pg_restore into the --to server", to_pw);
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
target_fresh_schema(void)
{
	char	   *sql;
	char	   *qowner = quote_ident(&M.to, M.owner);
	bool		ok;
	char	   *oid = NULL;
	char	   *old = NULL;

	need(&M.to);
	if (!drop_subscription(&M.to, M.name))
		fail("could not drop subscription %s on the --to server: %s", M.name, db_error());
	sql = xprintf("CREATE SCHEMA %s AUTHORIZATION %s", M.qschema, qowner);
	ok = tx_begin(&M.to);
	if (ok && M.dst_schema_oid)
		ok = drop_schema_by_oid(&M.to, M.dst_schema_oid, &old);
	ok = ok &&
		journal_write(&M.to, "target", "copying") &&
		exec_sql(&M.to, sql, 0) &&
		get_value(&M.to, &oid, "SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = $1::name", 1, M.schema) &&
		exec_sql(&M.to,
				 "UPDATE shardid.move_journal SET schema_oid = $1::oid, subscription_oid = NULL, "
				 "updated_at = pg_catalog.now() WHERE move_id = $2 AND side = 'target'",
				 2, oid, M.move_id) &&
		commit(&M.to);
	free(sql);
	free(qowner);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.to);
		fail("could not create schema \"%s\" on the --to server: %s", M.schema, why);
	}
	if (old)
		say("--to server: the partial copy of an earlier attempt was dropped");
	M.dst_schema_oid = oid;
}

/* offline: dump and restore the frozen shard */
void
step_copy_offline(void)
{
	long long  *counts = xcalloc(M.ntables + 1, sizeof(long long));
	int			i;
	double		t = now_seconds();
	char		a[32];

	M.step = "the copy";
	check_interrupt();
	target_fresh_schema();
	need(&M.from);
	if (!count_rows(&M.from, M.tables, M.ntables, counts))
		fail("could not count the rows of shard %d on the --from server: %s", M.shard, db_error());
	M.rows_total = 0;
	for (i = 0; i < M.ntables; i++)
	{
		M.tables[i].rows = counts[i];
		M.rows_total += counts[i];
	}
	free(counts);
	say("copying schema \"%s\": %s, %s rows, %s", M.schema, count_of(M.ntables, "table", "tables"),
		fmt_count(a, sizeof(a), M.rows_total), count_of(M.nseqs, "sequence", "sequences"));
	copy_schema(false);
	pause_point("copy");
	check_interrupt();
	need(&M.to);
	if (!journal_write(&M.to, "target", "copied"))
		fail("could not record the copy on the --to server: %s", db_error());
	say("copied in %.1f s", now_seconds() - t);
}
