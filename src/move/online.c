/*-------------------------------------------------------------------------
 *
 * online.c
 *	  The online copy: a publication of the schema and a replication slot
 *	  on the source, a subscription on the target filling the frozen copy
 *	  while the source takes writes, the wait for the initial sync, the
 *	  catch-up, and the sequences carried over.
 *
 * src/move/online.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

/*
 * The publication of the schema.  Into PostgreSQL 16+ it leaves TRUNCATE
 * out: the apply of a TRUNCATE does not switch to the table's owner, as
 * that of a row does, and checks the subscription's owner's own TRUNCATE
 * privilege, which the move's role has not (it may only SET ROLE to the
 * owners), so the apply failed at every retry and the --to server never
 * caught up, the shard frozen until --timeout.  Granting it would run the
 * owners' code that a TRUNCATE reaches (its triggers enabled ALWAYS or
 * REPLICA) as that role, which may SET ROLE to every owner of the schema.
 * A TRUNCATE on the --from server during the move leaves the copy's rows,
 * and the verification ends the move undone (the counts differ).  Into
 * PostgreSQL 15 the subscription applies as a superuser, and TRUNCATE is
 * carried.
 */
static bool
publish_tx(Move *m, Server *s)
{
	char	   *pub = NULL;
	bool		ok;
	bool		truncate;

	need(m, &m->to);
	truncate = PQserverVersion(m->to.conn) < 160000;

	ok = journal_write(m, s, "source", "publishing") &&
		get_value(s, &pub, "SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = $1::name", 1, m->name);
	if (ok && pub == NULL)
	{
		char	   *qpub = quote_ident(s, m->name);
		char	   *sql = xprintf("CREATE PUBLICATION %s FOR TABLES IN SCHEMA %s%s", qpub, m->qschema,
								  truncate ? "" : " WITH (publish = 'insert, update, delete')");

		ok = exec_sql(s, sql, 0);
		free(sql);
		free(qpub);
	}
	free(pub);
	return ok;
}

/* source: the publication of the schema and the replication slot */
void
step_publish(Move *m)
{
	char	   *slot = NULL;

	m->step = "the publication";
	check_interrupt(m);
	need(m, &m->from);
	if (!tx_begin(&m->from) || !publish_tx(m, &m->from) || !commit(m, &m->from))
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->from);
		fail(m, "could not publish schema \"%s\" on the --from server: %s", m->schema, why);
	}
	m->changed = true;
	if (!get_value(&m->from, &slot, "SELECT slot_name FROM pg_catalog.pg_replication_slots WHERE slot_name = $1::name",
				   1, m->name))
		fail(m, "could not read the replication slots of the --from server: %s", db_error());
	if (slot == NULL &&
		!exec_sql(&m->from, "SELECT pg_catalog.pg_create_logical_replication_slot($1::name, 'pgoutput')", 1, m->name))
		fail(m, "could not create replication slot \"%s\" on the --from server: %s", m->name, db_error());
	free(slot);
	say("publication and replication slot %s created on the --from server", m->name);
}

/*
 * The role that owns the subscription, made in the transaction that makes
 * the subscription, with a name nobody knows before (random_name(): the
 * move's other objects are named after its id, which the --from server's
 * publication shows to every role there, and a role with CREATEROLE that
 * took the name first would fail the move): the CREATE ROLE fails rather
 * than take a role that exists.  Its own settings pin those of the values'
 * text (value_settings) for the apply and the table syncs.  Their workers
 * take no setting from anything but the server's configuration, the
 * database's defaults and those of the subscription's owner
 * (BackgroundWorkerInitializeConnectionByOid() reads pg_db_role_setting as
 * a session of that role does), and set only session_replication_role,
 * search_path and synchronous_commit themselves; the role's settings come
 * before the database's, which its owner, no superuser, may set
 * (ALTER DATABASE ... SET array_nulls = off, or SET role = her, which
 * would run the workers as her); those of a superuser only
 * superusers may change, those of any other role only superusers and the
 * roles with ADMIN OPTION on it (none) from PostgreSQL 16 on.
 *
 * It has no password, and LOGIN: PostgreSQL starts no apply or sync worker
 * for a role that may not log in (InitializeSessionUserId(), whose bypass
 * of the check the workers do not ask for).  Before PostgreSQL 16 the owner
 * of a subscription must be a superuser.  From 16 on it is none, and
 * CONNECTION LIMIT 0 keeps every client session out whatever pg_hba.conf
 * trusts (the limit counts no background worker, and does not bind a
 * superuser): its subscription has password_required = false (which only
 * a superuser sets, and then only a superuser may alter the subscription),
 * as this program's own connection may have used none; it may SET ROLE,
 * without inheriting their rights, to the owners of the tables, as the
 * apply and the table syncs switch to each table's owner
 * (run_as_owner = false), and has USAGE on the schema, which they look the
 * tables up in.  drop_subscription() drops it with the subscription, in one
 * transaction, with its privileges (DROP OWNED).
 */
static bool
make_apply_role(Move *m, Server *s, const char *role)
{
	bool		v16 = PQserverVersion(s->conn) >= 160000;
	char	   *qrole = quote_ident(s, role);
	char	   *sql = xprintf("CREATE ROLE %s %s", qrole,
							  v16 ? "NOSUPERUSER LOGIN CONNECTION LIMIT 0" : "SUPERUSER LOGIN");
	bool		ok = exec_sql(s, sql, 0);
	int			i;

	free(sql);
	for (i = 0; ok && value_settings[i][0]; i++)
	{
		char	   *lvalue = quote_literal(s, value_settings[i][1]);

		sql = xprintf("ALTER ROLE %s SET %s = %s", qrole, value_settings[i][0], lvalue);
		ok = exec_sql(s, sql, 0);
		free(sql);
		free(lvalue);
	}
	if (ok)
	{
		/* the database's owner may make every new session SET ROLE to her */
		sql = xprintf("ALTER ROLE %s SET role = 'none'", qrole);
		ok = exec_sql(s, sql, 0);
		free(sql);
	}
	if (ok && v16)
	{
		char	   *owners = NULL;

		ok = get_value(s, &owners,
					   "SELECT pg_catalog.string_agg(DISTINCT pg_catalog.quote_ident("
					   "pg_catalog.pg_get_userbyid(c.relowner)), ', ') "
					   "FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p')",
					   1, m->dst_schema_oid);
		if (ok && owners)
		{
			sql = xprintf("GRANT %s TO %s WITH INHERIT FALSE, SET TRUE", owners, qrole);
			ok = exec_sql(s, sql, 0);
			free(sql);
		}
		if (ok)
		{
			sql = xprintf("GRANT USAGE ON SCHEMA %s TO %s", m->qschema, qrole);
			ok = exec_sql(s, sql, 0);
			free(sql);
		}
		free(owners);
	}
	free(qrole);
	return ok;
}

static bool
subscribe_tx(Move *m, Server *s)
{
	char	   *conn = subscription_conninfo(&m->from);
	char	   *lconn = quote_literal(s, conn);
	char	   *qsub = quote_ident(s, m->name);
	char	   *lslot = quote_literal(s, m->name);
	/*
	 * From PostgreSQL 16 on, the subscription applies each change as the
	 * owner of its table, in a security-restricted operation, unless
	 * run_as_owner: the owners' triggers, constraints and index expressions
	 * never run as this superuser (the table sync and the apply both switch
	 * to the table's owner, SwitchToUntrustedUser()).  Before 16 it applies
	 * as its owner, and check_shapes() refused every table of a non-superuser
	 * that carries an evaluated expression; hold_target_tables() checks them
	 * again on the --to server and keeps them the superuser's while the
	 * subscription exists, so that nobody else adds one.  On every version
	 * it keeps the schema the superuser's, so that nobody swaps a table.
	 */
	char	   *sql = xprintf("CREATE SUBSCRIPTION %s CONNECTION %s PUBLICATION %s "
							  "WITH (create_slot = false, slot_name = %s, copy_data = true%s)",
							  qsub, lconn, qsub, lslot,
							  PQserverVersion(s->conn) >= 160000 ?
							  ", run_as_owner = false, password_required = false" : "");
	char	   *role = xprintf("shardid_move_%d_owner_", m->shard);
	char	   *rrole = random_name(role);
	char	   *qrole = quote_ident(s, rrole);
	char	   *owner = xprintf("ALTER SUBSCRIPTION %s OWNER TO %s", qsub, qrole);
	char	   *oid = NULL;
	bool		ok;

	ok = hold_target_tables(m, s, PQserverVersion(s->conn) < 160000, &m->target_changed) &&
		freeze_tables(m, s) &&
		make_apply_role(m, s, rrole) &&
		exec_sql(s, sql, 0) &&
		exec_sql(s, owner, 0) &&
		subscription_oid(s, m->name, &oid) &&
		journal_write(m, s, "target", "replicating") &&
		exec_sql(s, "UPDATE shardid.move_journal SET subscription_oid = $1::oid "
				 "WHERE move_id = $2 AND side = 'target'", 2, oid, m->move_id);
	if (ok)
		m->sub_oid = oid;
	free(conn);
	free(lconn);
	free(qsub);
	free(lslot);
	free(sql);
	free(role);
	free(rrole);
	free(qrole);
	free(owner);
	return ok;
}

/* target: the definitions, frozen, and a subscription filling them */
static void
copy_online(Move *m)
{
	m->step = "the copy";
	check_interrupt(m);
	target_fresh_schema(m);
	say("copying the definitions of schema \"%s\" (%s, %s)", m->schema, count_of(m->ntables, "table", "tables"),
		count_of(m->nseqs, "sequence", "sequences"));
	copy_schema(m, true);
	pause_point("subscribe");
	check_interrupt(m);
	need(m, &m->to);
	if (!tx_begin(&m->to) || !subscribe_tx(m, &m->to) || !commit(m, &m->to))
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->to);
		if (m->target_changed)
			fail(m, "a table of schema \"%s\" changed on the --to server after the copy of its definitions, "
				 "which the subscription would run as a superuser", m->schema);
		fail(m, "could not subscribe the --to server to the --from server: %s", why);
	}
	need(m, &m->from);
	if (!exec_sql(&m->from, "UPDATE shardid.move_journal SET subscription_oid = $1::oid, updated_at = pg_catalog.now() "
				  "WHERE move_id = $2 AND side = 'source'", 2, m->sub_oid, m->move_id))
		fail(m, "could not record the subscription on the --from server: %s", db_error());
	say("replicating schema \"%s\" while the --from server takes writes", m->schema);
}

void
step_copy_online(Move *m)
{
	copy_online(m);
	pause_point("copy");
	check_interrupt(m);
}

/*
 * Tables of the subscription whose sync can never end: copied (state 'f',
 * finishedcopy) on the --to server while their sync slot is gone from the
 * --from server.  A sync worker drops its slot on the publisher and only
 * then commits the table's syncdone state; a --to server stopped between
 * the two (a fast shutdown, a crash) keeps the table at 'f', and every sync
 * worker started for it after the restart fails on the missing slot, for
 * ever (PostgreSQL counts no sync error for it).  The relids, comma
 * separated, or NULL.
 */
static char *
orphaned_syncs(Move *m)
{
	char	   *copied = NULL;
	char	   *orphans = NULL;

	if (!get_value(&m->to, &copied,
				   "SELECT pg_catalog.string_agg(srrelid::text, ',' ORDER BY srrelid) "
				   "FROM pg_catalog.pg_subscription_rel WHERE srsubid = $1::oid AND srsubstate = 'f'",
				   1, m->sub_oid) || copied == NULL)
		return NULL;
	need(m, &m->from);
	if (!get_value(&m->from, &orphans,
				   "SELECT pg_catalog.string_agg(r, ',' ORDER BY r::oid) "
				   "FROM pg_catalog.unnest(pg_catalog.string_to_array($2, ',')) AS r "
				   "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_slots "
				   "WHERE pg_catalog.starts_with(slot_name::text, 'pg_' || $1 || '_sync_' || r || '_'))",
				   2, m->sub_oid, copied))
		orphans = NULL;
	free(copied);
	return orphans;
}

/*
 * The subscription of an earlier attempt dropped on the target, then the
 * move's replication slots on the source, before the copy begins again
 */
void
drop_replication(Move *m)
{
	need(m, &m->to);
	if (!drop_subscription(&m->to, m->name))
		fail(m, "could not drop subscription %s on the --to server: %s", m->name, db_error());
	need(m, &m->from);
	if (!drop_slots(&m->from, m->name, m->sub_oid, true))
		fail(m, "could not drop the replication slots of the move on the --from server: %s", db_error());
	m->sub_oid = NULL;
}

/* the subscription dropped with its slots, and the initial copy begun again */
static void
copy_online_again(Move *m)
{
	drop_replication(m);
	step_publish(m);
	copy_online(m);
}

#define SYNC_CHECK_S 5.0		/* seconds between two looks for orphaned syncs */
#define SYNC_AGAIN_MAX 3		/* initial copies begun again, at most */
#define SYNC_ERRORS_MAX 10		/* sync errors that end the wait */

/* the table-sync errors counted on the --to server for the subscription */
static long
sync_errors(Move *m)
{
	char	   *v = NULL;
	long		n;

	if (!get_value(&m->to, &v,
				   "SELECT sync_error_count::pg_catalog.text FROM pg_catalog.pg_stat_subscription_stats "
				   "WHERE subid = $1::oid", 1, m->sub_oid) || v == NULL)
		return -1;
	n = atol(v);
	free(v);
	return n;
}

/*
 * Why the initial copy makes no progress, as far as the two servers show:
 * who uses the move's replication slot on the --from server, whether the
 * subscription's workers run on the --to server, the sync errors, and the
 * tables not synchronized yet with their owners (whose code, a CHECK that
 * fails, say, may be what fails their sync).
 */
static char *
sync_diagnosis(Move *m)
{
	char	   *slot = NULL,
			   *workers = NULL,
			   *waiting = NULL,
			   *r;
	long		errors = sync_errors(m);

	if (!get_value(&m->from, &slot,
				   "SELECT CASE WHEN s.slot_name IS NULL THEN 'the move''s replication slot is gone from the --from server' "
				   "WHEN NOT s.active THEN 'no walsender uses the move''s replication slot on the --from server' "
				   "WHEN r.application_name IS DISTINCT FROM $1 THEN pg_catalog.format("
				   "'the move''s replication slot on the --from server is used by another client "
				   "(application_name %L, from %s), not by the move''s subscription', r.application_name, "
				   "COALESCE(pg_catalog.host(r.client_addr), 'a local socket')) "
				   "ELSE 'the move''s subscription streams from its slot' END "
				   "FROM (SELECT 1) one "
				   "LEFT JOIN pg_catalog.pg_replication_slots s ON s.slot_name = $1::name "
				   "LEFT JOIN pg_catalog.pg_stat_replication r ON r.pid = s.active_pid",
				   1, m->name))
		slot = xprintf("the --from server did not say (%s)", db_error());
	if (!get_value(&m->to, &workers,
				   "SELECT CASE WHEN pg_catalog.count(*) FILTER (WHERE w.relid IS NULL AND w.pid IS NOT NULL) = 0 "
				   "THEN 'its apply worker is not running on the --to server' "
				   "ELSE pg_catalog.format('%s table-sync workers run on the --to server', "
				   "pg_catalog.count(*) FILTER (WHERE w.relid IS NOT NULL)) END "
				   "FROM pg_catalog.pg_stat_subscription w WHERE w.subid = $1::oid",
				   1, m->sub_oid))
		workers = xprintf("the --to server did not say (%s)", db_error());
	if (!get_value(&m->to, &waiting,
				   "SELECT pg_catalog.string_agg(pg_catalog.format('%s (of role %s)', c.oid::pg_catalog.regclass, "
				   "pg_catalog.pg_get_userbyid(c.relowner)), ', ' ORDER BY c.relname) "
				   "FROM pg_catalog.pg_subscription_rel r JOIN pg_catalog.pg_class c ON c.oid = r.srrelid "
				   "WHERE r.srsubid = $1::oid AND r.srsubstate <> 'r'", 1, m->sub_oid))
		waiting = NULL;
	r = xprintf("%s; %s; %ld sync errors (the --to server's log says why)%s%s", slot, workers,
				errors < 0 ? 0 : errors, waiting ? "; not synchronized yet: " : "", waiting ? waiting : "");
	free(slot);
	free(workers);
	free(waiting);
	return r;
}

/* wait until every table of the subscription finished its initial copy */
void
step_wait_sync(Move *m)
{
	double		deadline = now_seconds() + m->timeout;
	CopyProgress cp = {0};
	char		extra[64];		/* cp.extra */
	long long	total = 0;
	int			i;
	int			again = 0;
	double		checked = now_seconds();
	char	   *suspects = NULL;
	long		errors0 = -1;

	m->step = "the initial copy";
	for (i = 0; i < m->ntables; i++)
		if (m->tables[i].kind == 'r')
			total += m->tables[i].estimate;
	cp.move = m;
	cp.server = &m->to;
	cp.label = "initial copy";
	cp.command = "COPY FROM";
	cp.total = total;
	cp.started = now_seconds();
	copy_progress_reset(m);
	for (;;)
	{
		PGresult   *res;
		long		pending,
					all;

		check_interrupt(m);
		need(m, &m->to);
		res = query(&m->to,
					"SELECT pg_catalog.count(*) FILTER (WHERE srsubstate <> 'r'), pg_catalog.count(*) "
					"FROM pg_catalog.pg_subscription_rel WHERE srsubid = $1::oid",
					1, m->sub_oid);
		if (res == NULL)
		{
			nap(RETRY_NAP_MS);
			continue;
		}
		pending = atol(PQgetvalue(res, 0, 0));
		all = atol(PQgetvalue(res, 0, 1));
		PQclear(res);
		if (pending == 0)
			break;
		if (now_seconds() > deadline)
			fail(m, "the initial copy did not finish within %d s (%ld of %ld tables ready): %s",
				 m->timeout, all - pending, all, sync_diagnosis(m));
		/* an orphaned sync, seen twice SYNC_CHECK_S apart: copy again */
		if (now_seconds() - checked >= SYNC_CHECK_S)
		{
			char	   *orphans = orphaned_syncs(m);
			long		errors = sync_errors(m);

			/*
			 * A sync that fails again and again (a full disk): give up once
			 * SYNC_ERRORS_MAX errors were counted since the first of the
			 * looks, one after another, that saw no orphan.
			 * The apply worker starts a failed sync's worker again at its
			 * first wake-up wal_retrieve_retry_interval after the last start,
			 * and it wakes each second and at each message of the walsender,
			 * which any WAL written on the --from server brings: up to one
			 * error each wal_retrieve_retry_interval.  An orphaned sync fails
			 * at every start of its worker (counted when its origin is gone
			 * too: the missing slot alone fails after the sync's error
			 * report), so while one is seen its errors are its own and do not
			 * count: it is copied again once seen twice.
			 */
			if (orphans != NULL)
				errors0 = -1;
			else if (errors0 < 0)
				errors0 = errors;
			else if (errors >= 0 && errors - errors0 >= SYNC_ERRORS_MAX)
				fail(m, "the initial copy keeps failing on the --to server (%ld of %ld tables ready): %s",
					 all - pending, all, sync_diagnosis(m));

			checked = now_seconds();
			if (orphans && suspects && strcmp(orphans, suspects) == 0)
			{
				progress_end();
				if (++again > SYNC_AGAIN_MAX)
					fail(m, "the initial copy of table oid %s on the --to server cannot end: its sync slot is gone "
						 "from the --from server, %d times over", orphans, SYNC_AGAIN_MAX);
				warning_msg("the --to server keeps table oid %s copied but not synchronized, and its sync slot "
							"is gone from the --from server (the --to server stopped as the sync ended): "
							"starting the initial copy again", orphans);
				free(orphans);
				orphans = NULL;
				copy_online_again(m);
				m->step = "the initial copy";
				deadline = now_seconds() + m->timeout;
				copy_progress_reset(m);
				cp.started = now_seconds();
			}
			free(suspects);
			suspects = orphans;
		}
		snprintf(extra, sizeof(extra), ", %ld of %ld tables ready", all - pending, all);
		cp.extra = extra;
		copy_progress_tick(&cp);
		nap(POLL_NAP_MS);
	}
	free(suspects);
	progress_end();
	say("initial copy done");
}

/*
 * Before the freeze: wait until the --to server is within --max-lag bytes
 * and --max-lag-seconds of the --from server, so that writes pause only for
 * the last stretch.  Bytes: the WAL between the --from server's position and
 * what the subscription confirmed; seconds: the walsender's flush_lag (NULL
 * once idle).  A target that falls behind is reported every LAG_REPORT_S;
 * one that does not come close within --timeout ends the move here, before
 * anything was frozen, never after.  Once close, the rows are hashed
 * (hash_before_freeze() of verify.c), so that the freeze hashes only what
 * changed since, and the gap the hashing let grow is closed again.
 */
static void
close_gap(Move *m)
{
	double		started = now_seconds(),
				deadline = started + m->timeout,
				reported = started;
	long long	last_lag = -1;
	char		b[32],
				c[32],
				secs[32];

	for (;;)
	{
		PGresult   *res;
		long long	lag;
		double		lag_s;
		bool		lag_s_known;

		check_interrupt(m);
		need(m, &m->from);
		res = query(&m->from,
					"SELECT pg_catalog.pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.confirmed_flush_lsn)::bigint, "
					"EXTRACT(epoch FROM r.flush_lag) "
					"FROM pg_catalog.pg_replication_slots s "
					"LEFT JOIN pg_catalog.pg_stat_replication r ON r.pid = s.active_pid "
					"WHERE s.slot_name = $1::name",
					1, m->name);
		if (res == NULL)
		{
			nap(RETRY_NAP_MS);
			continue;
		}
		if (PQntuples(res) == 0)
		{
			PQclear(res);
			fail(m, "replication slot \"%s\" disappeared from the --from server", m->name);
		}
		lag = PQgetisnull(res, 0, 0) ? -1 : atoll(PQgetvalue(res, 0, 0));
		lag_s_known = !PQgetisnull(res, 0, 1);
		lag_s = lag_s_known ? atof(PQgetvalue(res, 0, 1)) : 0;
		PQclear(res);
		if (lag_s_known)
			snprintf(secs, sizeof(secs), "%.1f s", lag_s);
		else
			snprintf(secs, sizeof(secs), "seconds unknown");
		if (lag >= 0 && lag <= m->max_lag && lag_s <= m->max_lag_s)
			break;
		if (now_seconds() > deadline)
			fail(m, "the --to server did not come within %s and %d s of the --from server in %d s "
				 "(%s and %s behind): it does not keep up with the writes; nothing was frozen",
				 fmt_bytes(b, sizeof(b), (double) m->max_lag), m->max_lag_s, m->timeout,
				 fmt_bytes(c, sizeof(c), lag < 0 ? 0 : (double) lag),
				 secs);
		if (now_seconds() - reported >= LAG_REPORT_S)
		{
			progress_end();
			say("the --to server is %s (%s) behind the --from server%s; waiting before the freeze",
				fmt_bytes(b, sizeof(b), lag < 0 ? 0 : (double) lag),
				secs,
				last_lag >= 0 && lag > last_lag ? ", and falling further behind: the writes outpace it" : "");
			reported = now_seconds();
			last_lag = lag;
		}
		progress("closing the gap before the freeze: %s behind (at most %s before freezing), waiting %.0f s",
				 fmt_bytes(b, sizeof(b), lag < 0 ? 0 : (double) lag), fmt_bytes(c, sizeof(c), (double) m->max_lag),
				 now_seconds() - started);
		nap(CATCH_UP_NAP_MS);
	}
	progress_end();
}

/*
 * The materialized views populated on the --from server, refreshed on the
 * --to server where they are not: an online copy's definitions come from
 * pg_dump --schema-only, which makes them WITH NO DATA, and a query of one
 * on the --to server failed after the move ("materialized view ... has not
 * been populated").  pg_restore of an offline copy refreshes them itself.
 * Each REFRESH runs its query as the view's owner, in a security-restricted
 * operation (as pg_restore's does); a plain SET in her code outlives it,
 * so the session's settings are made again after each.  A view that reads
 * another one not yet refreshed fails ("has not been populated"): it is
 * tried again after the others, for as long as one more succeeds.  Once the
 * initial copy is done, before the freeze; the verification does it again
 * for a move resumed after the freeze.
 */
void
refresh_matviews(Move *m)
{
	PGresult   *res;
	char	  **views;
	bool	   *done;
	int			n,
				i,
				left,
				bad = 0,
				pass;
	char		why[1024] = "";

	need(m, &m->from);
	res = query(&m->from, "SELECT pg_catalog.quote_ident(c.relname) FROM pg_catalog.pg_class c "
				"WHERE c.relnamespace = $1::oid AND c.relkind = 'm' AND c.relispopulated ORDER BY c.oid",
				1, m->src_schema_oid);
	if (res == NULL)
		fail(m, "could not list the materialized views of schema \"%s\" on the --from server: %s", m->schema,
			 db_error());
	n = PQntuples(res);
	views = xcalloc(n + 1, sizeof(char *));
	done = xcalloc(n + 1, sizeof(bool));
	for (i = 0; i < n; i++)
		views[i] = xprintf("%s.%s", m->qschema, PQgetvalue(res, i, 0));
	PQclear(res);
	need(m, &m->to);
	left = 0;
	for (i = 0; i < n; i++)
	{
		char	   *populated = NULL;

		if (!get_value(&m->to, &populated, "SELECT relispopulated::pg_catalog.text FROM pg_catalog.pg_class "
					   "WHERE oid = $1::pg_catalog.regclass", 1, views[i]))
			fail(m, "could not read materialized view %s on the --to server: %s", views[i], db_error());
		done[i] = populated == NULL || is(populated, "true");
		left += !done[i];
		free(populated);
	}
	for (pass = 0; left > 0; pass++)
	{
		int			before = left;

		for (i = 0; i < n; i++)
		{
			char	   *sql;
			bool		ok,
						later = false;

			if (done[i])
				continue;
			check_interrupt(m);
			progress("refreshing materialized view %s on the --to server", views[i]);
			sql = xprintf("REFRESH MATERIALIZED VIEW %s", views[i]);
			ok = exec_sql(&m->to, sql, 0);
			free(sql);
			if (!ok)
			{
				snprintf(why, sizeof(why), "%s", db_error());
				later = is(db_sqlstate(), "55000");	/* it reads one not yet refreshed */
				bad = i;
			}
			if (!reset_settings(&m->to))
				fail(m, "could not query the --to server: %s", db_error());
			if (ok)
			{
				done[i] = true;
				left--;
			}
			else if (!later)
				fail(m, "could not refresh materialized view %s on the --to server: %s", views[i], why);
		}
		progress_end();
		if (left == before)
			fail(m, "could not refresh materialized view %s on the --to server: %s", views[bad], why);
	}
	if (n > 0 && pass > 0)
		say("refreshed the materialized views of schema \"%s\" on the --to server", m->schema);
	for (i = 0; i < n; i++)
		free(views[i]);
	free(views);
	free(done);
}

void
step_close_gap(Move *m)
{
	char		b[32];

	m->step = "the catch-up before the freeze";
	close_gap(m);
	refresh_matviews(m);
	hash_before_freeze(m);
	pause_point("hashed");
	check_interrupt(m);
	close_gap(m);
	say("the --to server is within %s of the --from server: freezing", fmt_bytes(b, sizeof(b), (double) m->max_lag));
}

/*
 * Whether the subscription's apply worker on the --to server applied every
 * change the --from server committed before WAL position lsn: it processed
 * a keepalive of the walsender that carried lsn or beyond
 * (pg_stat_subscription.latest_end_lsn).  The apply worker handles the
 * walsender's messages one after another, in the order of the WAL, and
 * records a keepalive's position once every message before it was
 * applied (a transaction committed, a streamed one's commit waited for
 * on its parallel apply worker); a transaction that committed before lsn
 * was sent before it.  Its commits are asynchronous: the confirmed_flush_lsn
 * of the slot waits for the --to server's WAL writer and for the worker's
 * next report (up to a second when idle), which the pause need not; the
 * catch-up's commit on the --to server flushes them (step_carry_sequences()).
 * A new worker reads as not caught up until it processed a keepalive.
 * Relied on into PostgreSQL 18 only, whose apply worker this describes
 * (development versions hand transactions that were not streamed to
 * parallel workers without waiting for them): later, the slot alone.
 */
static bool
applied_through(Move *m, const char *lsn)
{
	char	   *v = NULL;
	bool		done;

	if (PQserverVersion(m->to.conn) >= 190000)
		return false;
	if (!get_value(&m->to, &v,
				   PQserverVersion(m->to.conn) >= 160000 ?
				   "SELECT pg_catalog.bool_or(latest_end_lsn >= $1::pg_lsn)::text FROM pg_catalog.pg_stat_subscription "
				   "WHERE subid = $2::oid AND relid IS NULL AND leader_pid IS NULL" :
				   "SELECT pg_catalog.bool_or(latest_end_lsn >= $1::pg_lsn)::text FROM pg_catalog.pg_stat_subscription "
				   "WHERE subid = $2::oid AND relid IS NULL",
				   2, lsn, m->sub_oid))
		return false;
	done = is(v, "true");
	free(v);
	return done;
}

/*
 * Every change of the frozen source applied on the target: its apply worker
 * says so (applied_through()), or the slot's confirmed_flush_lsn passed the
 * --from server's WAL position read once the source was frozen.  Polled
 * every FROZEN_NAP_MS: writes are refused meanwhile.
 */
void
step_catch_up(Move *m)
{
	char	   *lsn = NULL;
	double		deadline = now_seconds() + m->timeout;
	double		started = now_seconds();

	m->step = "the catch-up";
	need(m, &m->from);
	if (!get_value(&m->from, &lsn, "SELECT pg_catalog.pg_current_wal_lsn()::text", 0))
		fail(m, "could not read the WAL position of the --from server: %s", db_error());
	for (;;)
	{
		char	   *lag = NULL;
		PGresult   *res;

		check_interrupt(m);
		need(m, &m->to);
		if (m->sub_oid && applied_through(m, lsn))
			break;
		need(m, &m->from);
		res = query(&m->from,
					"SELECT confirmed_flush_lsn >= $1::pg_lsn, "
					"pg_catalog.pg_wal_lsn_diff($1::pg_lsn, confirmed_flush_lsn)::bigint "
					"FROM pg_catalog.pg_replication_slots WHERE slot_name = $2::name",
					2, lsn, m->name);
		if (res == NULL)
		{
			nap(RETRY_NAP_MS);
			continue;
		}
		if (PQntuples(res) == 0)
		{
			PQclear(res);
			fail(m, "replication slot \"%s\" disappeared from the --from server", m->name);
		}
		if (is(PQgetvalue(res, 0, 0), "t"))
		{
			PQclear(res);
			break;
		}
		lag = xstrdup(PQgetvalue(res, 0, 1));
		PQclear(res);
		if (now_seconds() > deadline)
			fail(m, "the --to server did not catch up within %d s (%s bytes behind)", m->timeout, lag);
		{
			char		b[32];

			progress("catching up: %s behind, waiting %.0f s",
					 fmt_bytes(b, sizeof(b), atof(lag[0] ? lag : "0")), now_seconds() - started);
		}
		free(lag);
		nap(FROZEN_NAP_MS);
	}
	progress_end();
	pause_part(m, "catch-up");
	say("the --to server caught up with the --from server (WAL %s)", lsn);
	pause_point("catch-up");
	check_interrupt(m);
}

/* sequences to the target, then the replication removed */
void
step_carry_sequences(Move *m)
{
	int			i;
	char	  **pos = xcalloc(m->nseqs + 1, sizeof(char *));
	bool		ok;

	m->step = "the cutover";
	check_interrupt(m);
	need(m, &m->from);
	need(m, &m->to);
	if (!sequence_positions(&m->from, m->seqs, m->nseqs, pos))
		fail(m, "could not read the sequences on the --from server: %s", db_error());
	/*
	 * Its commit flushes the --to server's WAL, and with it the apply's
	 * asynchronous commits (step_catch_up()), before the replication slot
	 * that could send their changes again is dropped
	 */
	ok = tx_begin(&m->to) &&
		exec_sql(&m->to, "SELECT pg_catalog.set_config('synchronous_commit', 'local', true) "
				 "WHERE pg_catalog.current_setting('synchronous_commit') = 'off'", 0);
	for (i = 0; ok && i < m->nseqs; i++)
	{
		char	   *last = xstrdup(pos[i]);
		char	   *called = strchr(last, ' ');

		*called++ = '\0';
		ok = exec_sql(&m->to, "SELECT pg_catalog.setval($1::pg_catalog.regclass, $2::bigint, $3::boolean)",
					  3, m->seqs[i].qname, last, called);
		free(last);
	}
	ok = ok && journal_write(m, &m->to, "target", "caught-up") && commit(m, &m->to);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->to);
		fail(m, "could not carry the sequences to the --to server: %s", why);
	}
	say("%s carried to the --to server", count_of(m->nseqs, "sequence position", "sequence positions"));
	if (!drop_subscription(&m->to, m->name))
		fail(m, "could not drop subscription %s on the --to server: %s", m->name, db_error());
	if (!unpublish(&m->from, m->name, m->sub_oid))
		fail(m, "could not drop the publication and replication slot %s on the --from server: %s", m->name, db_error());
	pause_part(m, "sequences and replication dropped");
	say("subscription, publication and replication slot %s dropped", m->name);
}
