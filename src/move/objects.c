/*-------------------------------------------------------------------------
 *
 * objects.c
 *	  What a move makes and reads on a server: the shard's tables and
 *	  sequences on the source, the guard triggers that refuse writes, the
 *	  row counts and sequence positions that verify a copy, the replication
 *	  slots, publication and subscription of an online move, and a report
 *	  of what each server holds of the shard.
 *
 * src/move/objects.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

/* tables, sequences and owner of the schema on the source */
void
inspect_source(Move *m)
{
	PGresult   *res;
	int			i;

	m->qschema = quote_ident(&m->from, m->schema);
	{
		/* pg_dump --schema takes a pattern: in double quotes a name is exact */
		size_t		n = strlen(m->schema),
					o = 0;

		m->pattern = xcalloc(2 * n + 3, 1);
		m->pattern[o++] = '"';
		for (i = 0; i < (int) n; i++)
		{
			if (m->schema[i] == '"')
				m->pattern[o++] = '"';
			m->pattern[o++] = m->schema[i];
		}
		m->pattern[o++] = '"';
		m->pattern[o] = '\0';
	}
	res = query(&m->from,
				"SELECT n.oid, pg_catalog.pg_get_userbyid(n.nspowner) "
				"FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				1, m->schema);
	if (res == NULL)
		fail(m, "could not read schema \"%s\" on the --from server: %s", m->schema, db_error());
	if (PQntuples(res) == 0)
		fail(m, "schema \"%s\" of shard %d does not exist on the --from server", m->schema, m->shard);
	m->src_schema_oid = xstrdup(PQgetvalue(res, 0, 0));
	m->owner = xstrdup(PQgetvalue(res, 0, 1));
	PQclear(res);

	res = query(&m->from,
				"SELECT c.relname, c.relkind, GREATEST(c.reltuples, 0)::bigint, "
				"pg_catalog.pg_get_userbyid(c.relowner) "
				"FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p') "
				"ORDER BY c.relname",
				1, m->src_schema_oid);
	if (res == NULL)
		fail(m, "could not list the tables of schema \"%s\": %s", m->schema, db_error());
	m->ntables = PQntuples(res);
	m->tables = xcalloc(m->ntables + 1, sizeof(Table));
	for (i = 0; i < m->ntables; i++)
	{
		char	   *qt = quote_ident(&m->from, PQgetvalue(res, i, 0));

		m->tables[i].name = xstrdup(PQgetvalue(res, i, 0));
		m->tables[i].qname = xprintf("%s.%s", m->qschema, qt);
		m->tables[i].kind = PQgetvalue(res, i, 1)[0];
		m->tables[i].estimate = atoll(PQgetvalue(res, i, 2));
		m->tables[i].owner = xstrdup(PQgetvalue(res, i, 3));
		free(qt);
	}
	PQclear(res);

	res = query(&m->from,
				"SELECT c.relname FROM pg_catalog.pg_class c "
				"WHERE c.relnamespace = $1::oid AND c.relkind = 'S' ORDER BY c.relname",
				1, m->src_schema_oid);
	if (res == NULL)
		fail(m, "could not list the sequences of schema \"%s\": %s", m->schema, db_error());
	m->nseqs = PQntuples(res);
	m->seqs = xcalloc(m->nseqs + 1, sizeof(Seq));
	for (i = 0; i < m->nseqs; i++)
	{
		char	   *qn = quote_ident(&m->from, PQgetvalue(res, i, 0));

		m->seqs[i].name = xstrdup(PQgetvalue(res, i, 0));
		m->seqs[i].qname = xprintf("%s.%s", m->qschema, qn);
		free(qn);
	}
	PQclear(res);
}

/*
 * In the current transaction: every table of the schema locked in mode, in
 * one statement, in name order.  The freeze then waits for at most one
 * lock at a time, and never longer than the lock_timeout
 * tx_with_lock_retry() set, shorter than the server's deadlock_timeout; so
 * a writer waiting for a table the freeze holds finds no deadlock when it
 * looks, the freeze gives up first, and the writer goes on (and gets the
 * refusal once the freeze commits).
 */
bool
lock_tables(Move *m, Server *s, const char *mode)
{
	char	   *sql,
			   *list = xstrdup("");
	int			i;
	bool		ok;

	for (i = 0; i < m->ntables; i++)
	{
		char	   *n = xprintf("%s%s%s", list, i ? ", " : "", m->tables[i].qname);

		free(list);
		list = n;
	}
	sql = xprintf("LOCK TABLE %s IN %s MODE", list, mode);
	ok = m->ntables == 0 || exec_sql(s, sql, 0);
	free(sql);
	free(list);
	return ok;
}

/* in the current transaction: every table of the schema refuses writes */
bool
freeze_tables(Move *m, Server *s)
{
	char	   *sql;
	int			i;
	bool		ok;
	char	   *arg = quote_literal(s, m->shard_s);

	ok = lock_tables(m, s, "SHARE ROW EXCLUSIVE");
	for (i = 0; i < m->ntables && ok; i++)
	{
		sql = xprintf("CREATE OR REPLACE TRIGGER " GUARD_TRIGGER
					  " BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s"
					  " FOR EACH STATEMENT EXECUTE FUNCTION shardid.move_guard(%s)",
					  m->tables[i].qname, arg);
		ok = exec_sql(s, sql, 0);
		free(sql);
	}
	free(arg);
	return ok;
}

/*
 * In the current transaction: the schema and its tables on s belong again
 * to the roles that own them on the --from server, as pg_restore made them
 * (hold_target_tables() gave them to the move's superuser for an apply that
 * runs as one).  Only what differs is changed; a no-op after an offline
 * copy or an apply into PostgreSQL 16+.
 */
bool
give_back_owners(Move *m, Server *s)
{
	PGresult   *res = query(s,
							"SELECT c.relname, r.rolname FROM pg_catalog.pg_class c "
							"JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
							"JOIN pg_catalog.pg_roles r ON r.oid = c.relowner "
							"WHERE n.nspname = $1::name AND c.relkind IN ('r', 'p') "
							"UNION ALL SELECT NULL, r.rolname FROM pg_catalog.pg_namespace n "
							"JOIN pg_catalog.pg_roles r ON r.oid = n.nspowner WHERE n.nspname = $1::name",
							1, m->schema);
	int			i,
				k;
	bool		ok = true;

	if (res == NULL)
		return false;
	for (i = 0; i < PQntuples(res) && ok; i++)
	{
		const char *owner = NULL;
		char	   *target = NULL;

		if (PQgetisnull(res, i, 0))
		{
			owner = m->owner;
			target = xprintf("SCHEMA %s", m->qschema);
		}
		else
			for (k = 0; k < m->ntables; k++)
				if (is(m->tables[k].name, PQgetvalue(res, i, 0)))
				{
					owner = m->tables[k].owner;
					target = xprintf("TABLE %s", m->tables[k].qname);
					break;
				}
		if (owner != NULL && !is(owner, PQgetvalue(res, i, 1)))
		{
			char	   *qowner = quote_ident(s, owner);
			char	   *sql = xprintf("ALTER %s OWNER TO %s", target, qowner);

			ok = exec_sql(s, sql, 0);
			free(sql);
			free(qowner);
		}
		free(target);
	}
	PQclear(res);
	return ok;
}

/* in the current transaction: drop the guard triggers in a schema */
bool
unfreeze_tables(Server *s, const char *schema)
{
	PGresult   *res = query(s,
							"SELECT c.relname FROM pg_catalog.pg_trigger t "
							"JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
							"JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
							"WHERE n.nspname = $1::name AND t.tgname = '" GUARD_TRIGGER "' "
							"AND t.tgfoid = 'shardid.move_guard()'::pg_catalog.regprocedure",
							1, schema);
	int			i;
	bool		ok = true;
	char	   *qs;

	if (res == NULL)
		return false;
	qs = quote_ident(s, schema);
	for (i = 0; i < PQntuples(res) && ok; i++)
	{
		char	   *qt = quote_ident(s, PQgetvalue(res, i, 0));
		char	   *sql = xprintf("DROP TRIGGER " GUARD_TRIGGER " ON %s.%s", qs, qt);

		ok = exec_sql(s, sql, 0);
		free(sql);
		free(qt);
	}
	free(qs);
	PQclear(res);
	return ok;
}

/*
 * Run fn in a transaction on s, again while it fails on a lock timeout
 * (writers hold the tables), up to --timeout.  The short lock_timeout keeps
 * a waiting freeze from queueing every writer behind it for long.
 */
bool
tx_with_lock_retry(Move *m, Server *s, bool (*fn) (Move *m, Server *s), const char *what)
{
	double		deadline = now_seconds() + m->timeout;

	for (;;)
	{
		bool		ok;

		need(m, s);
		ok = tx_begin(s) &&
			exec_sql(s, FREEZE_LOCK_TIMEOUT_SQL, 0) &&
			fn(m, s) &&
			commit(m, s);
		if (ok)
			return true;
		rollback(m, s);
		check_interrupt(m);
		if ((!is(db_sqlstate(), SQLSTATE_LOCK_NOT_AVAILABLE) &&
			 !is(db_sqlstate(), SQLSTATE_DEADLOCK_DETECTED)) || now_seconds() > deadline)
		{
			error_msg("could not %s on the %s server: %s", what, s->option, db_error());
			return false;
		}
		nap(RETRY_NAP_MS);
	}
}

/*
 * Values read from tables of other roles, each query run as the owner of
 * its table: out[i] is the text of the single value sqls[i] returns, run as
 * owners[i].  False on error (db_error() says why).
 *
 * Reading a table runs code its owner chose: planning it evaluates the
 * constant parts of its partial-index predicates and index expressions, a
 * policy filters it.  So no query of this program reads a table of the
 * shard as the superuser it connects as.  SET ROLE would not do: the code
 * it runs could RESET ROLE (or SET SESSION AUTHORIZATION DEFAULT) and be
 * superuser again.  Each query runs instead inside a SECURITY DEFINER
 * function owned by the table's owner, where PostgreSQL refuses SET ROLE
 * and SET SESSION AUTHORIZATION, with search_path and row_security fixed by
 * the function.  The functions live in a schema of the move's own, made by
 * this connection with a random name, in a transaction that is never
 * committed: no other session can see, alter or call them, whatever the
 * owners' code leaves in that session goes with it, and the owners' code
 * (which may create objects in pg_temp, or empty it with DISCARD TEMP) can
 * neither take the name of the next function nor drop it.  A plain SET in
 * an owner's code outlives the function (of search_path too): the session's
 * settings are reset and made again after each call.  One function per
 * query: an owner's code may alter its own function (to SECURITY INVOKER,
 * say), never the next owner's.
 */
#define OWNER_STATEMENTS 6		/* a table's: the function, its owner, the
								 * call, the settings made again (3) */

bool
owner_values(Server *s, int n, char *const *owners, char *const *sqls, char **out)
{
	OwnerBatch	b;

	return owner_values_send(s, n, owners, sqls, &b) && owner_values_recv(&b, out);
}

/*
 * owner_values() in two halves: the statements sent, in one batch, by a
 * session of their own, whose answers owner_values_recv() reads (or
 * owner_values_abandon() drops): the move does something else meanwhile
 */
bool
owner_values_send(Server *s, int n, char *const *owners, char *const *sqls, OwnerBatch *b)
{
	int			i;
	bool		ok;
	char	   *scratch = random_name("shardid_move_");
	char	   *make = xprintf("CREATE SCHEMA %s", scratch);

	memset(b, 0, sizeof(*b));
	b->n = n;
	b->c.option = s->option;
	b->c.conninfo = s->conninfo;
	if (n == 0)
	{
		free(scratch);
		free(make);
		return true;
	}
	if (!server_connect(&b->c))
	{
		free(scratch);
		free(make);
		return false;
	}

	/*
	 * Every statement in one batch, in the order they would run one by one:
	 * a failure ends the batch there, and the session goes
	 */
	ok = batch_start(&b->c) && batch_add(&b->c, "BEGIN", 0, NULL) && batch_add(&b->c, make, 0, NULL);
	for (i = 0; ok && i < n; i++)
	{
		char	   *fn = xprintf("%s.shardid_move_as_owner_%d", scratch, i);
		char	   *qowner = quote_ident(&b->c, owners[i]);
		char	   *create = xprintf("CREATE FUNCTION %s(pg_catalog.text) RETURNS pg_catalog.text "
									 "LANGUAGE plpgsql SECURITY DEFINER "
									 "SET search_path = pg_catalog, pg_temp SET row_security = off "
									 "AS $f$DECLARE r pg_catalog.text; "
									 "BEGIN EXECUTE $1 INTO r; RETURN r; END$f$", fn);
		char	   *own = xprintf("ALTER FUNCTION %s(pg_catalog.text) OWNER TO %s", fn, qowner);
		char	   *call = xprintf("SELECT %s($1::pg_catalog.text)", fn);
		const char *params[1] = {sqls[i]};

		ok = batch_add(&b->c, create, 0, NULL) &&
			batch_add(&b->c, own, 0, NULL) &&
			batch_add(&b->c, call, 1, params) &&
			batch_add_reset(&b->c);
		free(fn);
		free(qowner);
		free(create);
		free(own);
		free(call);
	}
	free(scratch);
	free(make);
	b->sent = ok && batch_end(&b->c);
	if (!b->sent)
		server_close(&b->c);	/* db_error() keeps why */
	return b->sent;
}

bool
owner_values_recv(OwnerBatch *b, char **out)
{
	int			i,
				total = 2 + OWNER_STATEMENTS * b->n;
	PGresult  **res;
	bool		ok;

	for (i = 0; i < b->n; i++)
		out[i] = NULL;
	if (b->n == 0)
		return true;
	res = xcalloc(total, sizeof(PGresult *));
	ok = b->sent && batch_recv(&b->c, total, res);
	for (i = 0; i < total; i++)
	{
		int			k = i - 2;

		if (ok && k >= 0 && k % OWNER_STATEMENTS == 2 && PQntuples(res[i]) > 0 && !PQgetisnull(res[i], 0, 0))
			out[k / OWNER_STATEMENTS] = xstrdup(PQgetvalue(res[i], 0, 0));
		PQclear(res[i]);
	}
	free(res);
	if (b->sent)
		tx_rollback(&b->c);
	server_close(&b->c);
	b->sent = false;
	return ok;
}

/* the session of owner_values_send() closed, its answers unread */
void
owner_values_abandon(OwnerBatch *b)
{
	server_close(&b->c);
	b->sent = false;
}

/*
 * Row counts of the ntables tables on a server, each counted by its owner
 * (owner_values()); false on error.  FROM ONLY: every table with rows
 * (relkind 'r', partitions too) is counted once, by itself.
 */
bool
count_rows(Server *s, const Table *tables, int ntables, long long *counts)
{
	char	  **owners = xcalloc(ntables + 1, sizeof(char *));
	char	  **sqls = xcalloc(ntables + 1, sizeof(char *));
	char	  **vals = xcalloc(ntables + 1, sizeof(char *));
	int			i,
				n = 0;
	bool		ok;

	for (i = 0; i < ntables; i++)
	{
		counts[i] = 0;
		if (tables[i].kind != 'r')
			continue;
		owners[n] = tables[i].owner;
		sqls[n++] = xprintf("SELECT pg_catalog.count(*)::pg_catalog.text FROM ONLY %s", tables[i].qname);
	}
	ok = owner_values(s, n, owners, sqls, vals);
	for (i = 0, n = 0; i < ntables; i++)
	{
		if (tables[i].kind != 'r')
			continue;
		if (ok)
			counts[i] = atoll(vals[n] ? vals[n] : "0");
		free(sqls[n]);
		free(vals[n++]);
	}
	free(owners);
	free(sqls);
	free(vals);
	return ok;
}

/* "last_value is_called" of each of the nseqs sequences seqs */
bool
sequence_positions(Server *s, const Seq *seqs, int nseqs, char **pos)
{
	int			i;

	for (i = 0; i < nseqs; i++)
	{
		char	   *sql = xprintf("SELECT last_value::text || ' ' || is_called::text FROM %s", seqs[i].qname);
		bool		ok = get_value(s, &pos[i], sql, 0);

		free(sql);
		if (!ok)
			return false;
	}
	return true;
}

/*
 * The oid of subscription name in the database of s into *oid, NULL when
 * there is none; false when the query failed.
 */
bool
subscription_oid(Server *s, const char *name, char **oid)
{
	return get_value(s, oid,
					 "SELECT oid FROM pg_catalog.pg_subscription WHERE subname = $1::name AND subdbid = "
					 "(SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())",
					 1, name);
}

/*
 * target s: drop subscription name (never its slot through the target),
 * and the role that owns it when the move made that role
 * (make_apply_role() of online.c, named shardid_move_<shard>_owner_<32 hex
 * digits>), in one transaction: the role never outlives its subscription,
 * and a run stopped at any point leaves both or neither.  A role that is no
 * superuser (PostgreSQL 16+) loses its privileges first (DROP OWNED: USAGE
 * on the schema; it owns nothing, as the apply runs as the tables' owners).
 */
bool
drop_subscription(Server *s, const char *name)
{
	char	   *sub = NULL;
	char	   *role = NULL;
	char	   *super = NULL;
	char	   *qsub;
	bool		ok = true;
	bool		own_tx;

	if (!subscription_oid(s, name, &sub))
		return false;
	if (sub == NULL)
		return true;
	qsub = quote_ident(s, name);
	{
		char	   *a = xprintf("ALTER SUBSCRIPTION %s DISABLE", qsub);
		char	   *b = xprintf("ALTER SUBSCRIPTION %s SET (slot_name = NONE)", qsub);

		ok = exec_sql(s, a, 0) && exec_sql(s, b, 0);
		free(a);
		free(b);
	}
	/* in a transaction of the caller's, if any: it commits both */
	own_tx = PQtransactionStatus(s->conn) == PQTRANS_IDLE;
	ok = ok && (!own_tx || tx_begin(s)) &&
		get_value(s, &role, "SELECT r.rolname FROM pg_catalog.pg_subscription u "
				  "JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) u.subowner "
				  "WHERE u.oid OPERATOR(pg_catalog.=) $1::oid AND r.rolname::pg_catalog.text "
				  "OPERATOR(pg_catalog.~) '^shardid_move_[0-9]+_owner_[0-9a-f]{32}$'", 1, sub) &&
		(role == NULL ||
		 get_value(s, &super, "SELECT rolsuper::pg_catalog.text FROM pg_catalog.pg_roles WHERE rolname = $1::name",
				   1, role));
	if (ok)
	{
		char	   *c = xprintf("DROP SUBSCRIPTION %s", qsub);

		ok = exec_sql(s, c, 0);
		free(c);
	}
	if (ok && role != NULL)
	{
		char	   *qrole = quote_ident(s, role);
		char	   *o = xprintf("DROP OWNED BY %s", qrole);
		char	   *d = xprintf("DROP ROLE %s", qrole);

		ok = (is(super, "true") || exec_sql(s, o, 0)) && exec_sql(s, d, 0);
		free(qrole);
		free(o);
		free(d);
	}
	if (ok && own_tx)
		ok = tx_commit(s);
	else if (own_tx)
		tx_rollback(s);
	free(qsub);
	free(sub);
	free(role);
	free(super);
	return ok;
}

/*
 * Whether shardid on s keeps legacy boundaries (shardid.legacy_ids, from
 * 1.3 on) into *keeps.  False when the query failed.
 */
bool
keeps_legacy_ids(Server *s, bool *keeps)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT (pg_catalog.to_regclass('shardid.legacy_ids') IS NOT NULL)::text", 0))
		return false;
	*keeps = is(v, "true");
	free(v);
	return true;
}

/*
 * Delete, in the caller's transaction, the legacy boundaries on s that name
 * relations of schema (its copy being made, or dropped).
 */
bool
delete_legacy_ids(Server *s, const char *schema)
{
	return exec_sql(s,
					"DELETE FROM shardid.legacy_ids l USING pg_catalog.pg_class c, pg_catalog.pg_namespace n "
					"WHERE c.oid OPERATOR(pg_catalog.=) l.tab::pg_catalog.oid "
					"AND n.oid OPERATOR(pg_catalog.=) c.relnamespace "
					"AND n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name", 1, schema);
}

/*
 * Drop the schema whose oid is oid on s (a schema this move made), in the
 * caller's transaction; its name into *name, NULL when it is gone already.
 * False when a statement failed.
 */
bool
drop_schema_by_oid(Server *s, const char *oid, char **name)
{
	char	   *q;
	char	   *sql;
	bool		ok;

	*name = NULL;
	if (!get_value(s, name, "SELECT nspname FROM pg_catalog.pg_namespace WHERE oid = $1::oid", 1, oid))
		return false;
	if (*name == NULL)
		return true;
	q = quote_ident(s, *name);
	sql = xprintf("DROP SCHEMA %s CASCADE", q);
	ok = exec_sql(s, sql, 0);
	free(sql);
	free(q);
	return ok;
}

/*
 * Source s: drop the move's replication slots, stopping their senders: its
 * slot name when main_slot, and the table syncs' slots of subscription
 * sub_oid when it is known.  A sender stopped leaves its slot within
 * milliseconds: looked at again every FROZEN_NAP_MS for the first second
 * (a move drops them in its freeze), then every POLL_NAP_MS.
 */
bool
drop_slots(Server *s, const char *name, const char *sub_oid, bool main_slot)
{
	double		started = now_seconds();
	double		deadline = started + SLOT_DROP_WAIT_S;

	for (;;)
	{
		PGresult   *res = query(s,
								"SELECT slot_name, active_pid FROM pg_catalog.pg_replication_slots "
								"WHERE (slot_name = $1 AND $3) OR ($2::text IS NOT NULL AND "
								"pg_catalog.starts_with(slot_name::text, 'pg_' || $2 || '_sync_'))",
								3, name, sub_oid, main_slot ? "true" : "false");
		int			i,
					n;

		if (res == NULL)
			return false;
		n = PQntuples(res);
		for (i = 0; i < n; i++)
		{
			const char *slot = PQgetvalue(res, i, 0);

			if (!PQgetisnull(res, i, 1))
				exec_sql(s, "SELECT pg_catalog.pg_terminate_backend($1::integer)", 1, PQgetvalue(res, i, 1));
			else
				exec_sql(s, "SELECT pg_catalog.pg_drop_replication_slot($1::name)", 1, slot);
		}
		PQclear(res);
		if (n == 0)
			return true;
		if (now_seconds() > deadline)
			return false;
		nap_always(now_seconds() - started < 1 ? FROZEN_NAP_MS : POLL_NAP_MS);
	}
}

/* drop publication name on s if it exists */
bool
drop_publication(Server *s, const char *name)
{
	char	   *qpub = quote_ident(s, name);
	char	   *sql = xprintf("DROP PUBLICATION IF EXISTS %s", qpub);
	bool		ok = exec_sql(s, sql, 0);

	free(sql);
	free(qpub);
	return ok;
}

/* source s: the move's publication and slots (name, sub_oid) gone */
bool
unpublish(Server *s, const char *name, const char *sub_oid)
{
	return drop_slots(s, name, sub_oid, true) && drop_publication(s, name);
}

/*
 * replication slots of the move named name on the source (with the table
 * syncs of subscription sub_oid, when known), "" when none
 */
char *
slots_of_move(Server *s, const char *name, const char *sub_oid)
{
	char	   *v = NULL;

	if (!get_value(s, &v,
				   "SELECT pg_catalog.string_agg(slot_name::text, ' ' ORDER BY slot_name) "
				   "FROM pg_catalog.pg_replication_slots "
				   "WHERE slot_name = $1 OR ($2::text IS NOT NULL AND "
				   "pg_catalog.starts_with(slot_name::text, 'pg_' || $2 || '_sync_'))",
				   2, name, sub_oid))
		return NULL;
	return v ? v : xstrdup("");
}

void
hint_drop_slots(Server *s, const char *slots)
{
	char	   *copy,
			   *slot,
			   *save = NULL;

	if (slots == NULL || slots[0] == '\0')
		return;
	copy = xstrdup(slots);
	for (slot = strtok_r(copy, " ", &save); slot; slot = strtok_r(NULL, " ", &save))
		hint_msg("Replication slot \"%s\" keeps WAL on the %s server (%s) until it is dropped: "
				 "run --abort, or there: SELECT pg_catalog.pg_terminate_backend(active_pid) "
				 "FROM pg_catalog.pg_replication_slots WHERE slot_name = '%s' AND active_pid IS NOT NULL; "
				 "SELECT pg_catalog.pg_drop_replication_slot('%s');",
				 slot, s->option, s->where, slot, slot);
	free(copy);
}

/* one line saying what a server holds of the shard now */
static void
report_server(Move *m, Server *s, const char *side, char **slots_out)
{
	PGresult   *res;
	char	   *registered = NULL;
	char	   *pub = NULL,
			   *sub = NULL,
			   *slots = NULL;
	char	   *schema_state;
	char	   *journal;

	*slots_out = NULL;
	if (!server_ensure(s, REPORT_REACH_S))
	{
		say("%s server (%s): unreachable (%s); it keeps what its journal records: phase \"%s\" (%s)",
			s->option, s->where, db_error(), side[0] == 's' ? m->src_phase : m->dst_phase,
			side[0] == 's' ? source_phase_meaning(m->src_phase) : target_phase_meaning(m->dst_phase));
		return;
	}
	registered_schema(s, m->shard_s, &registered);

	res = query(s,
				"SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_class c "
				"        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')), "
				"       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_trigger t "
				"        JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
				"        WHERE c.relnamespace = n.oid AND t.tgname = '" GUARD_TRIGGER "') "
				"FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				1, m->schema);
	if (res == NULL)
		schema_state = xprintf("schema state unknown (%s)", db_error());
	else if (PQntuples(res) == 0)
		schema_state = xstrdup("no schema of the shard");
	else
	{
		long		tables = atol(PQgetvalue(res, 0, 0));
		long		frozen = atol(PQgetvalue(res, 0, 1));

		if (tables == 0)
			schema_state = xstrdup("the schema, with no table");
		else if (frozen == 0)
			schema_state = xprintf("the schema with %ld table%s, taking writes", tables, tables == 1 ? "" : "s");
		else if (frozen >= tables)
			schema_state = xprintf("the schema with %ld table%s, refusing writes", tables, tables == 1 ? "" : "s");
		else
			schema_state = xprintf("the schema with %ld tables, %ld of them refusing writes", tables, frozen);
	}
	PQclear(res);

	get_value(s, &pub, "SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = $1::name", 1, m->name);
	subscription_oid(s, m->name, &sub);
	slots = slots_of_move(s, m->name, m->sub_oid);
	if (m->move_id)
	{
		JournalRow	j;

		journal_by_id(s, m->move_id, side, &j);
		journal = j.found ? xprintf("journal phase \"%s\"", j.phase) : xstrdup("no journal row");
	}
	else
		journal = xstrdup("no journal row");

	say("%s server (%s): shard %d %s; %s%s%s%s%s%s", s->option, s->where, m->shard,
		registered ? "registered" : "not registered", schema_state,
		pub ? "; publication " : "", pub ? pub : "",
		sub ? "; subscription " : "", sub ? m->name : "",
		slots && slots[0] ? "; replication slots of the move" : "");
	say("%s server: %s", s->option, journal);
	*slots_out = slots;
	free(schema_state);
	free(journal);
}

void
report_state(Move *m)
{
	char	   *slots_from = NULL,
			   *slots_to = NULL;

	if (m->schema == NULL)
		return;
	report_server(m, &m->from, "source", &slots_from);
	report_server(m, &m->to, "target", &slots_to);
	hint_drop_slots(&m->from, slots_from);
	hint_drop_slots(&m->to, slots_to);
}
