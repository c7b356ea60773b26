/*-------------------------------------------------------------------------
 *
 * db.c
 *	  shardid-move's libpq layer: connections with a safe search_path,
 *	  queries whose values travel only as $n parameters, identifiers quoted
 *	  by PQescapeIdentifier (each armed for proc.c's signal-driven cancel),
 *	  the connection strings handed to pg_dump, pg_restore and the
 *	  target's subscription, and COPY streamed from one connection into
 *	  another.
 *
 * Every connection runs SELECT pg_catalog.set_config('search_path', '',
 * false) first, so that no object another role created can be picked up by
 * an unqualified name; every name in shardid-move's SQL is qualified.  Then
 * it pins the settings that change the text of a value (value_settings),
 * which pg_dump, pg_restore and the subscription's walsender get as
 * options of their connections.
 *
 * src/move/db.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

#define MAX_PARAMS 16

/*
 * The last failure of a query or connection, as errno: db_error() and
 * db_sqlstate() read it right after the call that failed, whatever the
 * connection.  The process's, not a move's (db.c knows no move).
 */
static char last_error[4096];
static char last_sqlstate[6];

static void
set_error(const char *msg, const char *sqlstate)
{
	snprintf(last_error, sizeof(last_error), "%s", msg ? msg : "unknown error");
	chomp(last_error);
	snprintf(last_sqlstate, sizeof(last_sqlstate), "%s", sqlstate ? sqlstate : "");
}

const char *
db_error(void)
{
	return last_error;
}

const char *
db_sqlstate(void)
{
	return last_sqlstate;
}

/*
 * The settings that change the text of a value, as the input and output
 * functions of PostgreSQL's types read them: array_in (array_nulls: with it
 * off, an unquoted NULL element is read as the string 'NULL'); cash_in and
 * cash_out (lc_monetary: the currency symbol, the separators, the number of
 * fractional digits); the date and time types (DateStyle, whose order also
 * reads ambiguous input; IntervalStyle, whose sql_standard input gives a
 * leading sign to every field; TimeZone); float4, float8 and the geometric
 * types (extra_float_digits: 3 writes the shortest text that reads back
 * exactly); bytea (bytea_output); xml_in and xml_recv (xmloption); the reg*
 * types (quote_all_identifiers, and search_path, which SESSION_SETTINGS_SQL
 * empties).  standard_conforming_strings reads the literals of the
 * definitions pg_dump writes.  The other types' text depends on no
 * setting, but on the encoding (client_encoding, set where rows travel as
 * text: copy.c).  Each session of the move pins them, and the
 * subscription's apply and table syncs take them from the role that owns
 * the subscription (online.c), as the database's defaults would otherwise
 * give them to every session that does not set its own.
 */
const char *const value_settings[][2] = {
	{"datestyle", "ISO, MDY"},
	{"intervalstyle", "postgres"},
	{"timezone", "UTC"},
	{"extra_float_digits", "3"},
	{"bytea_output", "hex"},
	{"array_nulls", "on"},
	{"lc_monetary", "C"},
	{"xmloption", "content"},
	{"quote_all_identifiers", "off"},
	{"standard_conforming_strings", "on"},
	{NULL, NULL}
};

static char *
value_settings_sql(void)
{
	static char *sql = NULL;	/* made once, of constants */
	int			i;

	if (sql != NULL)
		return sql;
	sql = xstrdup("SELECT ");
	for (i = 0; value_settings[i][0]; i++)
	{
		char	   *n = xprintf("%s%spg_catalog.set_config('%s', '%s', false)", sql, i ? ", " : "",
								value_settings[i][0], value_settings[i][1]);

		free(sql);
		sql = n;
	}
	return sql;
}

/* the session's values read and written as every other session of the move does */
bool
pin_values(Server *s)
{
	return exec_sql(s, value_settings_sql(), 0);
}

/*
 * In one round trip: the session's settings back to its defaults, then
 * SESSION_SETTINGS_SQL and the values' settings made again (after code of
 * another role ran in it); false on error
 */
bool
reset_settings(Server *s)
{
	char	   *sql = xprintf("RESET ALL; %s; %s", SESSION_SETTINGS_SQL, value_settings_sql());
	PGresult   *res;
	bool		ok;

	cancel_arm(s->conn);
	res = PQexec(s->conn, sql);
	cancel_disarm();
	free(sql);
	ok = PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		set_error(res && PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
				  PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(s->conn),
				  res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : SQLSTATE_CONNECTION_FAILURE);
	PQclear(res);
	return ok;
}

/* reset_settings() as three statements of a batch (batch_start()) */
bool
batch_add_reset(Server *s)
{
	return batch_add(s, "RESET ALL", 0, NULL) &&
		batch_add(s, SESSION_SETTINGS_SQL, 0, NULL) &&
		batch_add(s, value_settings_sql(), 0, NULL);
}

/*
 * The same as the options of a connection ("-c name=value ...", spaces
 * escaped), after the options given, which they override
 */
static char *
value_options(const char *given)
{
	char	   *r = xstrdup(given ? given : "");
	int			i;

	for (i = 0; value_settings[i][0]; i++)
	{
		const char *v;
		char	   *n = xprintf("%s%s-c %s=", r, r[0] ? " " : "", value_settings[i][0]);

		free(r);
		r = n;
		for (v = value_settings[i][1]; *v; v++)
		{
			n = xprintf("%s%s%c", r, (*v == ' ' || *v == '\\') ? "\\" : "", *v);
			free(r);
			r = n;
		}
	}
	return r;
}

static void
notice_quiet(void *arg, const char *message)
{
	(void) arg;
	(void) message;
}

/* host, port and database of a connection: for messages and the journal */
static void
describe(Server *s)
{
	const char *host = PQhost(s->conn);

	snprintf(s->where, sizeof(s->where), "host=%s port=%s dbname=%s",
			 host && host[0] ? host : "localhost", PQport(s->conn), PQdb(s->conn));
}

bool
server_connect(Server *s)
{
	const char *keys[] = {"dbname", "fallback_application_name", NULL};
	const char *values[] = {s->conninfo, PROGNAME, NULL};
	PGresult   *res;

	if (s->conn)
		PQfinish(s->conn);
	s->conn = PQconnectdbParams(keys, values, 1);
	if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK)
	{
		set_error(s->conn ? PQerrorMessage(s->conn) : "out of memory", SQLSTATE_CONNECTION_FAILURE);
		if (s->conn)
			PQfinish(s->conn);
		s->conn = NULL;
		return false;
	}
	PQsetNoticeProcessor(s->conn, notice_quiet, NULL);
	res = PQexec(s->conn, SESSION_SETTINGS_SQL);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		set_error(PQerrorMessage(s->conn), PQresultErrorField(res, PG_DIAG_SQLSTATE));
		PQclear(res);
		PQfinish(s->conn);
		s->conn = NULL;
		return false;
	}
	PQclear(res);
	if (!pin_values(s))
	{
		PQfinish(s->conn);
		s->conn = NULL;
		return false;
	}
	describe(s);
	s->generation++;
	return true;
}

/*
 * Make sure the connection works, reconnecting for up to timeout_s seconds
 * (a server that restarts comes back); false when it does not.
 */
bool
server_ensure(Server *s, int timeout_s)
{
	double		deadline = now_seconds() + timeout_s;

	if (s->conn && PQstatus(s->conn) == CONNECTION_OK)
	{
		PGresult   *res;

		cancel_arm(s->conn);
		res = PQexec(s->conn, "SELECT 1");
		cancel_disarm();
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
		{
			PQclear(res);
			return true;
		}
		set_error(PQerrorMessage(s->conn), PQresultErrorField(res, PG_DIAG_SQLSTATE));
		PQclear(res);
		if (PQstatus(s->conn) == CONNECTION_OK)
			return false;		/* it answers, but with an error */
	}
	for (;;)
	{
		if (server_connect(s))
			return true;
		if (interrupted_by || now_seconds() >= deadline)
			return false;
		nap(RECONNECT_NAP_MS);
	}
}

void
server_close(Server *s)
{
	if (s->conn)
		PQfinish(s->conn);
	s->conn = NULL;
}

static PGresult *
run(Server *s, const char *sql, int nparams, va_list ap)
{
	const char *params[MAX_PARAMS];
	PGresult   *res;
	ExecStatusType st;
	int			i;

	for (i = 0; i < nparams && i < MAX_PARAMS; i++)
		params[i] = va_arg(ap, const char *);
	if (s->conn == NULL)
	{
		set_error("no connection to the server", SQLSTATE_NO_CONNECTION);
		return NULL;
	}
	cancel_arm(s->conn);
	res = PQexecParams(s->conn, sql, nparams, NULL, params, NULL, NULL, 0);
	cancel_disarm();
	st = PQresultStatus(res);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return res;
	if (res && PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY))
		set_error(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
				  PQresultErrorField(res, PG_DIAG_SQLSTATE));
	else
		set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
	PQclear(res);
	return NULL;
}

/* a query's result, or NULL on error (db_error() says why) */
PGresult *
query(Server *s, const char *sql, int nparams,...)
{
	va_list		ap;
	PGresult   *res;

	va_start(ap, nparams);
	res = run(s, sql, nparams, ap);
	va_end(ap);
	return res;
}

bool
exec_sql(Server *s, const char *sql, int nparams,...)
{
	va_list		ap;
	PGresult   *res;

	va_start(ap, nparams);
	res = run(s, sql, nparams, ap);
	va_end(ap);
	if (res == NULL)
		return false;
	PQclear(res);
	return true;
}

/* the first column of the first row (NULL when no row or SQL NULL) */
bool
get_value(Server *s, char **out, const char *sql, int nparams,...)
{
	va_list		ap;
	PGresult   *res;

	*out = NULL;
	va_start(ap, nparams);
	res = run(s, sql, nparams, ap);
	va_end(ap);
	if (res == NULL)
		return false;
	if (PQntuples(res) > 0 && PQnfields(res) > 0 && !PQgetisnull(res, 0, 0))
		*out = xstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return true;
}

/*
 * A batch: statements sent to s in one pipeline (batch_start(), then
 * batch_add() for each, then batch_end()), without waiting for an answer;
 * batch_recv() collects their results, and may wait for another server's
 * first (the two servers work at once).  A batch whose sending failed
 * (false, db_error() says why) is abandoned by batch_abandon(), which
 * closes the connection (need() makes it again).
 */
bool
batch_start(Server *s)
{
	if (s->conn == NULL)
	{
		set_error("no connection to the server", SQLSTATE_NO_CONNECTION);
		return false;
	}
	if (PQenterPipelineMode(s->conn) != 1)
	{
		set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
		return false;
	}
	return true;
}

bool
batch_add(Server *s, const char *sql, int nparams, const char *const *params)
{
	if (PQsendQueryParams(s->conn, sql, nparams, NULL, params, NULL, NULL, 0) != 1)
	{
		set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
		return false;
	}
	return true;
}

bool
batch_end(Server *s)
{
	if (PQpipelineSync(s->conn) != 1)
	{
		set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
		return false;
	}
	return true;
}

void
batch_abandon(Server *s)
{
	server_close(s);
}

/*
 * A batch of n statements, sql with params[i * nparams ...] as the
 * parameters of the i-th
 */
bool
batch_send(Server *s, int n, const char *sql, int nparams, const char *const *params)
{
	int			i;
	bool		ok = batch_start(s);

	for (i = 0; ok && i < n; i++)
		ok = batch_add(s, sql, nparams, params + (size_t) i * nparams);
	ok = ok && batch_end(s);
	if (!ok && s->conn)
	{
		char	   *why = xstrdup(db_error());

		batch_abandon(s);
		set_error(why, SQLSTATE_CONNECTION_FAILURE);
		free(why);
	}
	return ok;
}

/*
 * The results of the n statements of the batch sent to s into res[0..n)
 * (each NULL where a statement failed or did not run, the first failure
 * in db_error()), and s out of pipeline mode; res NULL drops them.  False
 * when one failed.
 */
bool
batch_recv(Server *s, int n, PGresult **res)
{
	int			i;
	bool		ok = true;
	PGresult   *r;

	cancel_arm(s->conn);
	for (i = 0; i < n; i++)
	{
		PGresult   *mine = NULL;

		while ((r = PQgetResult(s->conn)) != NULL)
		{
			ExecStatusType st = PQresultStatus(r);

			if (mine == NULL && (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK))
			{
				mine = r;
				continue;
			}
			if (ok && st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
			{
				if (PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY))
					set_error(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
							  PQresultErrorField(r, PG_DIAG_SQLSTATE));
				else
					set_error(st == PGRES_PIPELINE_ABORTED ? "an earlier statement of the batch failed" :
							  PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
				ok = false;
			}
			PQclear(r);
			if (PQstatus(s->conn) != CONNECTION_OK)
				break;
		}
		if (res)
			res[i] = mine;
		else
			PQclear(mine);
		if (mine == NULL && ok)
		{
			set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
			ok = false;
		}
		if (PQstatus(s->conn) != CONNECTION_OK)
		{
			for (i++; res && i < n; i++)
				res[i] = NULL;
			break;
		}
	}
	/* the sync */
	while (PQstatus(s->conn) == CONNECTION_OK && (r = PQgetResult(s->conn)) != NULL)
	{
		ExecStatusType st = PQresultStatus(r);

		PQclear(r);
		if (st == PGRES_PIPELINE_SYNC)
			break;
	}
	cancel_disarm();
	if (PQexitPipelineMode(s->conn) != 1 && ok)
	{
		set_error(PQerrorMessage(s->conn), SQLSTATE_CONNECTION_FAILURE);
		ok = false;
	}
	return ok;
}

/*
 * Stream the rows of out_sql (a COPY ... TO STDOUT on from) into in_sql (a
 * COPY ... FROM STDIN on to); *rows counts them.  tick(arg, rows) runs now
 * and then.  False on error (db_error() says why).
 */
bool
copy_stream(Server *from, const char *out_sql, Server *to, const char *in_sql, long long *rows,
			void (*tick) (void *, long long), void *arg)
{
	PGresult   *res;
	char	   *buf;
	int			len;
	bool		ok = true;

	*rows = 0;
	res = PQexec(from->conn, out_sql);
	if (PQresultStatus(res) != PGRES_COPY_OUT)
	{
		set_error(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
				  PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(from->conn),
				  PQresultErrorField(res, PG_DIAG_SQLSTATE));
		PQclear(res);
		return false;
	}
	PQclear(res);
	res = PQexec(to->conn, in_sql);
	if (PQresultStatus(res) != PGRES_COPY_IN)
	{
		set_error(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
				  PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(to->conn),
				  PQresultErrorField(res, PG_DIAG_SQLSTATE));
		PQclear(res);
		/* drain the COPY OUT: the source connection stays usable */
		while ((len = PQgetCopyData(from->conn, &buf, 0)) > 0)
			PQfreemem(buf);
		PQclear(PQgetResult(from->conn));
		return false;
	}
	PQclear(res);
	cancel_arm(from->conn);
	while ((len = PQgetCopyData(from->conn, &buf, 0)) > 0)
	{
		if (ok && PQputCopyData(to->conn, buf, len) != 1)
		{
			set_error(PQerrorMessage(to->conn), SQLSTATE_CONNECTION_FAILURE);
			ok = false;
		}
		PQfreemem(buf);
		if (++*rows % 10000 == 0 && tick)
			tick(arg, *rows);
	}
	cancel_disarm();
	res = PQgetResult(from->conn);
	if (ok && (len != -1 || PQresultStatus(res) != PGRES_COMMAND_OK))
	{
		set_error(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
				  PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(from->conn),
				  PQresultErrorField(res, PG_DIAG_SQLSTATE));
		ok = false;
	}
	PQclear(res);
	while ((res = PQgetResult(from->conn)) != NULL)
		PQclear(res);
	if (PQputCopyEnd(to->conn, ok ? NULL : "the copy from the --from server failed") != 1 && ok)
	{
		set_error(PQerrorMessage(to->conn), SQLSTATE_CONNECTION_FAILURE);
		ok = false;
	}
	cancel_arm(to->conn);
	res = PQgetResult(to->conn);
	cancel_disarm();
	if (ok && PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		set_error(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
				  PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(to->conn),
				  PQresultErrorField(res, PG_DIAG_SQLSTATE));
		ok = false;
	}
	PQclear(res);
	while ((res = PQgetResult(to->conn)) != NULL)
		PQclear(res);
	return ok;
}

bool
tx_begin(Server *s)
{
	return exec_sql(s, "BEGIN", 0);
}

bool
tx_commit(Server *s)
{
	return exec_sql(s, "COMMIT", 0);
}

void
tx_rollback(Server *s)
{
	PGresult   *res;

	if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK)
		return;
	res = PQexec(s->conn, "ROLLBACK");
	PQclear(res);
}

char *
quote_ident(Server *s, const char *name)
{
	char	   *q = PQescapeIdentifier(s->conn, name, strlen(name));
	char	   *r;

	if (q == NULL)
	{
		error_msg("could not quote the name \"%s\": %s", name, chomp(PQerrorMessage(s->conn)));
		exit(EXIT_UNFINISHED);
	}
	r = xstrdup(q);
	PQfreemem(q);
	return r;
}

char *
quote_literal(Server *s, const char *value)
{
	char	   *q = PQescapeLiteral(s->conn, value, strlen(value));
	char	   *r;

	if (q == NULL)
	{
		error_msg("could not quote a value: %s", chomp(PQerrorMessage(s->conn)));
		exit(EXIT_UNFINISHED);
	}
	r = xstrdup(q);
	PQfreemem(q);
	return r;
}

/* value of a conninfo keyword, quoted when needed */
char *
conninfo_value(const char *v)
{
	size_t		n = strlen(v),
				i,
				o = 0;
	char	   *r = xcalloc(2 * n + 3, 1);

	r[o++] = '\'';
	for (i = 0; i < n; i++)
	{
		if (v[i] == '\'' || v[i] == '\\')
			r[o++] = '\\';
		r[o++] = v[i];
	}
	r[o++] = '\'';
	r[o] = '\0';
	return r;
}

/*
 * The settings of SESSION_SETTINGS_SQL that a session this program does not
 * drive itself gets at its start (libpq's options, -c name=value): those of
 * pg_dump and pg_restore, and the walsender of the subscription on the
 * --from server, whose table syncs run COPY there.  A database's owner may
 * set a read-only default, a timeout or a role for it (ALTER DATABASE ...
 * SET role makes a superuser's new session run as that role);
 * pg_dump and pg_restore set some timeouts of their own, not these all.
 * idle_session_timeout and transaction_timeout only where the server has
 * them (an unknown setting fails the connection).
 */
static char *
session_options(Server *s)
{
	int			v = PQserverVersion(s->conn);

	return xprintf("-c default_transaction_read_only=off -c exit_on_error=off -c statement_timeout=0 "
				   "-c lock_timeout=0 -c idle_in_transaction_session_timeout=0 -c role=none%s%s",
				   v >= 140000 ? " -c idle_session_timeout=0" : "",
				   v >= 170000 ? " -c transaction_timeout=0" : "");
}

/*
 * How another server (the --to server's subscription) reaches s: the host,
 * port, database, user and password this program's connection used, with
 * session_options() and the settings of the values (value_settings), for the
 * walsender that writes the rows of the initial copy and the changes as text.
 */
char *
subscription_conninfo(Server *s)
{
	PGconn	   *c = s->conn;
	const char *pass = PQpass(c);
	char	   *h = conninfo_value(PQhost(c));
	char	   *p = conninfo_value(PQport(c));
	char	   *d = conninfo_value(PQdb(c));
	char	   *u = conninfo_value(PQuser(c));
	char	   *so = session_options(s);
	char	   *vo = value_options(so);
	char	   *o = conninfo_value(vo);
	char	   *r;

	if (pass && pass[0])
	{
		char	   *pw = conninfo_value(pass);

		r = xprintf("host=%s port=%s dbname=%s user=%s password=%s options=%s", h, p, d, u, pw, o);
		free(pw);
	}
	else
		r = xprintf("host=%s port=%s dbname=%s user=%s options=%s", h, p, d, u, o);
	free(h);
	free(p);
	free(d);
	free(u);
	free(so);
	free(vo);
	free(o);
	return r;
}

/*
 * The connection string for pg_dump / pg_restore: every setting this
 * program's connection uses, but the password, which goes to the child's
 * environment instead so that it never shows in a process list; after any
 * options given, session_options() and the settings of the values
 * (value_settings): the definitions pg_dump writes hold values as text too (a
 * DEFAULT, a CHECK's constant, a partition's bounds), which pg_restore reads.
 */
char *
child_conninfo(Server *s, const char **password)
{
	PQconninfoOption *opts = PQconninfo(s->conn);
	PQconninfoOption *o;
	char	   *r = xstrdup("");
	char	   *so,
			   *given,
			   *options,
			   *v,
			   *n;
	const char *user_options = NULL;

	*password = PQpass(s->conn);
	if (opts == NULL)
	{
		error_msg("could not read the connection options of the %s server: out of memory", s->option);
		exit(EXIT_UNFINISHED);
	}
	for (o = opts; o->keyword; o++)
	{
		if (o->val == NULL || o->val[0] == '\0' || strcmp(o->keyword, "password") == 0 ||
			strcmp(o->keyword, "fallback_application_name") == 0)
			continue;
		if (strcmp(o->keyword, "options") == 0)
		{
			user_options = o->val;
			continue;
		}
		v = conninfo_value(o->val);
		n = xprintf("%s%s%s=%s", r, r[0] ? " " : "", o->keyword, v);
		free(r);
		free(v);
		r = n;
	}
	so = session_options(s);
	given = xprintf("%s%s%s", user_options ? user_options : "", user_options ? " " : "", so);
	options = value_options(given);
	v = conninfo_value(options);
	n = xprintf("%s%soptions=%s", r, r[0] ? " " : "", v);
	free(r);
	free(v);
	free(so);
	free(given);
	free(options);
	PQconninfoFree(opts);
	return n;
}
