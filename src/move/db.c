/*-------------------------------------------------------------------------
 *
 * db.c
 *	  shardid-move's libpq layer: connections with a safe search_path,
 *	  queries whose values travel only as $n parameters, identifiers quoted
 *	  by PQescapeIdentifier, and the query cancel a signal triggers.
 *
 * Every connection runs SELECT pg_catalog.set_config('search_path', '',
 * false) first, so that no object another role created can be picked up by
 * an unqualified name; every name in shardid-move's SQL is qualified.
 *
 * src/move/db.c
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

#define MAX_PARAMS 16

static char last_error[4096];
static char last_sqlstate[6];

/* the query cancel a signal may fire: armed only while a query runs */
static PGcancel *volatile armed_cancel = NULL;
static volatile sig_atomic_t cancel_allowed = 1;

static void
block_signals(sigset_t *old)
{
	sigset_t	set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, old);
}

void
cancel_arm(PGconn *conn)
{
	PGcancel   *c = PQgetCancel(conn);
	sigset_t	old;

	block_signals(&old);
	armed_cancel = c;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void
cancel_disarm(void)
{
	PGcancel   *c;
	sigset_t	old;

	block_signals(&old);
	c = armed_cancel;
	armed_cancel = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (c)
		PQfreeCancel(c);
}

/* called from the signal handler: PQcancel is safe there */
void
cancel_from_signal(void)
{
	char		buf[256];

	if (armed_cancel != NULL && cancel_allowed)
		PQcancel(armed_cancel, buf, sizeof(buf));
}

/* the undo must not be cancelled by a second signal */
void
cancel_allow(bool allow)
{
	cancel_allowed = allow ? 1 : 0;
}

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
		set_error(s->conn ? PQerrorMessage(s->conn) : "out of memory", "08006");
		if (s->conn)
			PQfinish(s->conn);
		s->conn = NULL;
		return false;
	}
	PQsetNoticeProcessor(s->conn, notice_quiet, NULL);
	res = PQexec(s->conn,
				 "SELECT pg_catalog.set_config('search_path', '', false), "
				 "pg_catalog.set_config('client_min_messages', 'warning', false), "
				 "pg_catalog.set_config('lock_timeout', '0', false), "
				 "pg_catalog.set_config('statement_timeout', '0', false), "
				 "pg_catalog.set_config('idle_in_transaction_session_timeout', '0', false)");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		set_error(PQerrorMessage(s->conn), PQresultErrorField(res, PG_DIAG_SQLSTATE));
		PQclear(res);
		PQfinish(s->conn);
		s->conn = NULL;
		return false;
	}
	PQclear(res);
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
		nap(250);
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
		set_error("no connection to the server", "08003");
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
		set_error(PQerrorMessage(s->conn), "08006");
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
