/*-------------------------------------------------------------------------
 *
 * state.c
 *	  The state of a move (Move, filled from the command line, the source
 *	  and the journals), the move lock, and the three ways a run ends:
 *	  finish() with an exit code and the JSON summary, refuse() before
 *	  anything changed, fail() which undoes the move through m->on_failure.
 *
 * src/move/state.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

bool
is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* "1 table", "2 tables" */
char *
count_of(long long n, const char *one, const char *many)
{
	return xprintf("%lld %s", n, n == 1 ? one : many);
}

void
set_phase(char *buf, const char *phase)
{
	snprintf(buf, PHASE_LEN, "%s", phase);
}

/*
 * The name of the move's publication, replication slot and subscription:
 * shardid_move_<shard>_<move id without dashes>, unique per move, so that
 * what an earlier move of the shard left anywhere (a subscription on a
 * third server still enabled, say) never attaches to this move's slot.
 * Moves begun by shardid-move 1.1 used shardid_move_<shard> (legacy).
 */
void
name_move(Move *m, bool legacy)
{
	char		hex[OBJECT_NAME_LEN];
	int			i,
				o = 0;

	for (i = 0; m->move_id && m->move_id[i] && o < (int) sizeof(hex) - 1; i++)
		if (m->move_id[i] != '-')
			hex[o++] = m->move_id[i];
	hex[o] = '\0';
	if (legacy || o == 0)
		snprintf(m->name, sizeof(m->name), "shardid_move_%d", m->shard);
	else
		snprintf(m->name, sizeof(m->name), "shardid_move_%d_%s", m->shard, hex);
}

/*
 * A phase written inside a transaction counts once the transaction commits:
 * journal_write() keeps it pending (m->pending_src, m->pending_dst) until
 * commit() below.
 */
bool
commit(Move *m, Server *s)
{
	char	   *pending = s == &m->from ? m->pending_src : m->pending_dst;
	bool		ok = tx_commit(s);

	if (ok && pending[0])
		set_phase(s == &m->from ? m->src_phase : m->dst_phase, pending);
	pending[0] = '\0';
	return ok;
}

void
rollback(Move *m, Server *s)
{
	(s == &m->from ? m->pending_src : m->pending_dst)[0] = '\0';
	tx_rollback(s);
}

void
check_interrupt(Move *m)
{
	if (interrupted_by)
		fail(m, "interrupted");
}

/*
 * The move lock, held on both servers by the run working on the shard, so
 * that a second run (even --abort) cannot act on a move that is still
 * running: the shard's row of shardid.move_locks, naming this run's session
 * (pid and backend start).  Only superusers write that table, so no other
 * role can take the lock or keep it; a row whose session is gone (a run
 * killed by SIGKILL, a lost connection) is taken over.  One statement,
 * committed at once: two runs that race serialise on the row.  A server
 * with shardid 1.2 has no such table: there the lock is the session
 * advisory lock (class MOVE_LOCK_CLASS) of 1.2, with a warning, since any
 * role that may connect can take that one.  Returns 1 when this run holds
 * the lock, 0 when another run does, -1 when a query failed (db_error()
 * says why: a refusal must name that, not another run).
 */
int
take_move_lock(Move *m, Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT (pg_catalog.to_regclass('shardid.move_locks') IS NOT NULL)::text", 0))
		return -1;
	if (!is(v, "true"))
	{
		free(v);
		warning_msg("the %s server has shardid older than 1.3: the move lock there is an advisory lock, "
					"which any role that may connect can take (ALTER EXTENSION shardid UPDATE)", s->option);
		if (!get_value(s, &v, "SELECT pg_catalog.pg_try_advisory_lock($1::integer, $2::integer)::text",
					   2, MOVE_LOCK_CLASS, m->shard_s))
			return -1;
	}
	else
	{
		free(v);
		v = NULL;
		/*
		 * Taken over from a session that is gone, but only from one that
		 * took it before this statement began (pg_stat_activity is read
		 * once, at the start: a run that connected later is missing from
		 * it, yet alive), and from this run's own earlier session, which
		 * may live on for a while after a lost connection.
		 */
		if (!get_value(s, &v,
					   "INSERT INTO shardid.move_locks AS l (shard, pid, backend_start) "
					   "SELECT $1::integer, a.pid, a.backend_start FROM pg_catalog.pg_stat_activity a "
					   "WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid() "
					   "ON CONFLICT (shard) DO UPDATE SET pid = EXCLUDED.pid, backend_start = EXCLUDED.backend_start, "
					   "taken_at = pg_catalog.now(), taken_by = CURRENT_USER "
					   "WHERE l.taken_at OPERATOR(pg_catalog.<) pg_catalog.statement_timestamp() AND NOT EXISTS "
					   "(SELECT FROM pg_catalog.pg_stat_activity a WHERE a.pid OPERATOR(pg_catalog.=) l.pid "
					   "AND a.backend_start OPERATOR(pg_catalog.=) l.backend_start) "
					   "OR l.pid OPERATOR(pg_catalog.=) EXCLUDED.pid AND l.backend_start OPERATOR(pg_catalog.=) EXCLUDED.backend_start "
					   "OR l.pid::pg_catalog.text OPERATOR(pg_catalog.=) $2 "
					   "AND l.backend_start::pg_catalog.text OPERATOR(pg_catalog.=) $3 "
					   "RETURNING l.pid::pg_catalog.text OPERATOR(pg_catalog.||) ' ' OPERATOR(pg_catalog.||) "
					   "l.backend_start::pg_catalog.text",
					   3, m->shard_s, s->lock_pid, s->lock_start))
			return -1;
		if (v != NULL)
		{
			char	   *sp = strchr(v, ' ');

			if (sp != NULL)
			{
				*sp = '\0';
				snprintf(s->lock_pid, sizeof(s->lock_pid), "%s", v);
				snprintf(s->lock_start, sizeof(s->lock_start), "%s", sp + 1);
			}
			free(v);
			v = xstrdup("true");
		}
	}
	if (!is(v, "true"))
	{
		free(v);
		return 0;
	}
	free(v);
	s->locked = s->generation;
	return 1;
}

/* who holds the move lock of the shard on server s, for a refusal */
char *
move_lock_holder(Move *m, Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT (pg_catalog.to_regclass('shardid.move_locks') IS NOT NULL)::text", 0))
		return xprintf("unknown: %s", db_error());
	if (!is(v, "true"))
	{
		free(v);
		return xstrdup("a session holding the advisory lock of shardid 1.2");
	}
	free(v);
	if (!get_value(s, &v,
				   "SELECT pg_catalog.format('pid %s, application %L, from %s, since %s', l.pid, "
				   "a.application_name, COALESCE(pg_catalog.host(a.client_addr), 'a local socket'), "
				   "l.taken_at::pg_catalog.timestamptz(0)) "
				   "FROM shardid.move_locks l LEFT JOIN pg_catalog.pg_stat_activity a "
				   "ON a.pid OPERATOR(pg_catalog.=) l.pid AND a.backend_start OPERATOR(pg_catalog.=) l.backend_start "
				   "WHERE l.shard OPERATOR(pg_catalog.=) $1::integer", 1, m->shard_s))
		return xprintf("unknown: %s", db_error());
	return v ? v : xstrdup("one that has let the lock go since");
}

/* the move lock given back on server s (its row; an advisory lock goes with the session) */
static void
release_move_lock(Move *m, Server *s)
{
	if (s->conn == NULL || s->locked != s->generation || s->locked == 0)
		return;
	(void) exec_sql(s, "DELETE FROM shardid.move_locks WHERE shard OPERATOR(pg_catalog.=) $1::integer "
					"AND pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()", 1, m->shard_s);
}

/* a server answering again after a lost connection, or the move fails */
void
need(Move *m, Server *s)
{
	if (!server_ensure(s, m->timeout < RECONNECT_MAX_S ? m->timeout : RECONNECT_MAX_S))
		fail(m, "lost the connection to the %s server: %s", s->option, db_error());
	if (s->locked != s->generation)
	{
		int			r = take_move_lock(m, s);

		if (r < 0)
			fail(m, "could not take the move lock of shard %d again on the %s server: %s", m->shard, s->option,
				 db_error());
		if (r == 0)
			fail(m, "another shardid-move took shard %d over on the %s server while this one reconnected",
				 m->shard, s->option);
	}
}

/* the --json summary on standard output */
static void
json_summary(Move *m, int code)
{
	int			i;
	long long	rows = 0;
	bool		first = true;

	printf("{\"shard\": %d, \"schema\": ", m->shard);
	json_string(stdout, m->schema);
	printf(", \"method\": ");
	json_string(stdout, m->method);
	printf(", \"move_id\": ");
	json_string(stdout, m->move_id);
	printf(", \"from\": ");
	json_string(stdout, m->from.conn || m->from.where[0] ? m->from.where : NULL);
	printf(", \"to\": ");
	json_string(stdout, m->to.conn || m->to.where[0] ? m->to.where : NULL);
	printf(", \"outcome\": ");
	json_string(stdout, m->outcome);
	printf(", \"exit_code\": %d, \"phase_from\": ", code);
	json_string(stdout, m->src_phase[0] ? m->src_phase : NULL);
	printf(", \"phase_to\": ");
	json_string(stdout, m->dst_phase[0] ? m->dst_phase : NULL);
	printf(", \"tables\": [");
	for (i = 0; i < m->ntables; i++)
	{
		/* a partitioned table holds no rows itself: its partitions do */
		printf("%s{\"name\": ", first ? "" : ", ");
		first = false;
		json_string(stdout, m->tables[i].name);
		if (m->tables[i].kind != 'r')
		{
			printf(", \"partitioned\": true, \"rows\": null}");
			continue;
		}
		printf(", \"rows\": %lld}", m->tables[i].rows);
		rows += m->tables[i].rows;
	}
	printf("], \"rows\": %lld, \"sequences\": %d, \"size_bytes\": ", rows, m->nseqs);
	if (m->size_bytes >= 0)
		printf("%lld, \"room_needed_bytes\": %lld", m->size_bytes, m->room_needed);
	else
		printf("null, \"room_needed_bytes\": null");
	printf(", \"seconds\": %.3f, \"error\": ", now_seconds() - m->t0);
	json_string(stdout, m->error_text);
	printf("}\n");
	fflush(stdout);
}

void
finish(Move *m, int code, const char *outcome)
{
	progress_end();
	m->outcome = outcome;
	if (report_json)
		json_summary(m, code);
	release_move_lock(m, &m->from);
	release_move_lock(m, &m->to);
	server_close(&m->from);
	server_close(&m->to);
	private_dir_remove();
	exit(code);
}

void
fail(Move *m, const char *fmt,...)
{
	va_list		ap;
	char		buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (interrupted_by)
	{
		m->error_text = xprintf("interrupted by %s during %s", signal_name(interrupted_by),
								m->step ? m->step : "the checks");
		error_msg("%s", m->error_text);
	}
	else
	{
		m->error_text = xstrdup(buf);
		error_msg("%s", buf);
	}
	abandon_newest_read(m);
	if (m->on_failure)
		m->on_failure(m);
	finish(m, EXIT_UNFINISHED, "unfinished");
}

void
refuse(Move *m, const char *fmt,...)
{
	va_list		ap;
	char		buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->error_text = xstrdup(buf);
	error_msg("%s", buf);
	finish(m, EXIT_FAILED, "refused");
}
