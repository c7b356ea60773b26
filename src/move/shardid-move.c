/*-------------------------------------------------------------------------
 *
 * shardid-move.c
 *	  Move logical shard N (one schema) from one PostgreSQL server to
 *	  another, offline (pg_dump / pg_restore while writes are refused) or
 *	  online (logical replication while the source keeps taking writes),
 *	  without ever stranding the shard.
 *
 * Every step is recorded in shardid.move_journal on the server it changes,
 * in the same transaction as the change where one transaction can hold
 * both.  On SIGINT, SIGTERM, SIGHUP or any error the move is undone, unless
 * it had passed the point of no return (the target registered the shard);
 * after a SIGKILL, a power loss or a lost connection the next run finds the
 * journal and offers --abort (undo) or --resume (go on from the recorded
 * phase).
 *
 *	 target phases: checked -> copying -> copied (offline) or replicating
 *					(online) -> caught-up (online) -> verified -> cut-over
 *					-> done, or aborted
 *	 source phases: publishing (online) -> frozen-for-move -> handing-over
 *					-> moved-away -> dropped, or aborted
 *
 * The point of no return is the target's cut-over: one transaction there
 * lets its copy take writes and registers the shard.  The source records
 * handing-over first: from then on its part is undone only once the target
 * has confirmed that it did not cut over.
 *
 * This file holds the command line and the order of the steps; the steps
 * live in the files that move.h lists, each using only the ones below it.
 *
 * src/move/shardid-move.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "move.h"

static void usage_error(const char *fmt,...) PRINTF_LIKE(1, 2) NORETURN;

static void
usage(void)
{
	printf("%s moves logical shard N (one schema) from one PostgreSQL server to another.\n\n", PROGNAME);
	printf("Usage:\n");
	printf("  %s --shard=N --from=CONNINFO --to=CONNINFO [OPTION]...\n\n", PROGNAME);
	printf("Options:\n");
	printf("  --shard=N           the logical shard to move\n");
	printf("  --from=CONNINFO     the server the shard lives on (connection string or URI)\n");
	printf("  --to=CONNINFO       the server it moves to\n");
	printf("  --online            copy with logical replication while the --from server\n"
		   "                      keeps taking writes; writes pause only for the cutover\n");
	printf("  --drop-source       drop the frozen copy that a finished move of the shard left\n"
		   "                      on the --from server; moves nothing\n");
	printf("  --move-and-drop-source\n"
		   "                      move the shard, then drop its copy on the --from server\n");
	printf("  --yes               drop without asking\n");
	printf("  --timeout=SECONDS   give up waiting (locks, initial copy, catch-up, clock)\n"
		   "                      after this long (default 300)\n");
	printf("  --max-lag=SIZE      online: freeze the --from server only once the --to server\n"
		   "                      is at most this far behind (bytes, kB, MB, GB; default 16MB)\n");
	printf("  --max-lag-seconds=S online: ... and at most this many seconds behind (default 2)\n");
	printf("  --to-free=SIZE      the free space on the --to server's disk (PostgreSQL cannot\n"
		   "                      report it): refuse up front when the shard needs more\n");
	printf("  --resume            finish an interrupted move from the phase its journal records\n");
	printf("  --abort             undo an interrupted move\n");
	printf("  --json              print a JSON summary on standard output\n");
	printf("  -V, --version       print the version and exit\n");
	printf("  -h, --help          print this help and exit\n\n");
	printf("Exit status: 0 done, 1 failed (anything changed was undone), 2 bad command line,\n"
		   "3 unfinished (interrupted past the point of no return, or the undo failed):\n"
		   "run again with --resume or --abort.\n");
}

static void
usage_error(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "%s: error: ", PROGNAME);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s: hint: Try \"%s --help\" for more information.\n", PROGNAME, PROGNAME);
	exit(EXIT_USAGE);
}

/* a size: bytes, or with kB, MB, GB or TB; -1 when malformed */
static long long
parse_size(const char *arg)
{
	const char *units[] = {"kB", "MB", "GB", "TB"};
	char	   *end;
	double		v;
	int			i;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || v < 0)
		return -1;
	if (*end)
	{
		for (i = 0; i < 4 && strcmp(end, units[i]) != 0; i++)
			;
		if (i == 4)
			return -1;
		for (; i >= 0; i--)
			v *= 1024;
	}
	if (v > MAX_SIZE_ARG)
		return -1;
	return (long long) v;
}

static void
parse_args(Move *m, int argc, char **argv)
{
	static const struct option options[] = {
		{"shard", required_argument, NULL, 's'},
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"online", no_argument, NULL, 'o'},
		{"drop-source", no_argument, NULL, 'd'},
		{"move-and-drop-source", no_argument, NULL, 'D'},
		{"yes", no_argument, NULL, 'y'},
		{"timeout", required_argument, NULL, 'T'},
		{"max-lag", required_argument, NULL, 'L'},
		{"max-lag-seconds", required_argument, NULL, 'S'},
		{"to-free", required_argument, NULL, 'F'},
		{"resume", no_argument, NULL, 'r'},
		{"abort", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	const char *shard = NULL;
	const char *move_option = NULL;	/* an option of a move, for --drop-source */
	int			c;

	m->timeout = DEFAULT_TIMEOUT_S;
	m->max_lag = DEFAULT_MAX_LAG;
	m->max_lag_s = DEFAULT_MAX_LAG_S;
	m->to_free = -1;
	m->size_bytes = -1;
	m->room_needed = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", options, NULL)) != -1)
	{
		switch (c)
		{
			case 's':
				shard = optarg;
				break;
			case 'f':
				m->from.conninfo = optarg;
				break;
			case 't':
				m->to.conninfo = optarg;
				break;
			case 'o':
				m->online = true;
				move_option = "--online";
				break;
			case 'd':
				m->drop_only = true;
				break;
			case 'D':
				m->move_and_drop = true;
				break;
			case 'y':
				m->yes = true;
				break;
			case 'T':
				{
					char	   *end;
					long		v;

					errno = 0;
					v = strtol(optarg, &end, 10);
					if (errno || end == optarg || *end || v < 1 || v > MAX_TIMEOUT_S)
						usage_error("--timeout must be a number of seconds between 1 and 604800, not \"%s\"", optarg);
					m->timeout = (int) v;
				}
				break;
			case 'L':
				if ((m->max_lag = parse_size(optarg)) < 0)
					usage_error("--max-lag must be a size in bytes, kB, MB, GB or TB, not \"%s\"", optarg);
				move_option = "--max-lag";
				break;
			case 'F':
				if ((m->to_free = parse_size(optarg)) < 0)
					usage_error("--to-free must be a size in bytes, kB, MB, GB or TB, not \"%s\"", optarg);
				move_option = "--to-free";
				break;
			case 'S':
				{
					char	   *end;
					long		v;

					errno = 0;
					v = strtol(optarg, &end, 10);
					if (errno || end == optarg || *end || v < 0 || v > MAX_TIMEOUT_S)
						usage_error("--max-lag-seconds must be a number of seconds between 0 and %d, not \"%s\"",
									MAX_TIMEOUT_S, optarg);
					m->max_lag_s = (int) v;
				}
				move_option = "--max-lag-seconds";
				break;
			case 'r':
				m->do_resume = true;
				move_option = "--resume";
				break;
			case 'a':
				m->do_abort = true;
				break;
			case 'j':
				report_json = true;
				break;
			case 'V':
				printf("%s (shardid) %s\n", PROGNAME, SHARDID_VERSION);
				exit(EXIT_DONE);
			case 'h':
				usage();
				exit(EXIT_DONE);
			case ':':
				usage_error("option \"%s\" needs a value", argv[optind - 1]);
			default:
				if (optopt)
					usage_error("unknown option \"-%c\"", optopt);
				usage_error("unknown option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("too many command-line arguments (first is \"%s\")", argv[optind]);
	if (shard == NULL || m->from.conninfo == NULL || m->to.conninfo == NULL)
		usage_error("--shard, --from and --to are required");
	if (m->do_abort && m->do_resume)
		usage_error("--abort and --resume cannot be used together");
	if (m->drop_only && m->move_and_drop)
		usage_error("--drop-source and --move-and-drop-source cannot be used together");
	if ((m->drop_only || m->move_and_drop) && m->do_abort)
		usage_error("--abort drops nothing: it cannot be used with %s",
					m->drop_only ? "--drop-source" : "--move-and-drop-source");
	if (m->drop_only && move_option)
		usage_error("--drop-source only drops the copy a finished move left, so %s does not apply; "
					"to move the shard and then drop its copy, use --move-and-drop-source", move_option);
	m->drop_source = m->drop_only || m->move_and_drop;
	{
		char	   *end;
		long		v;

		errno = 0;
		v = strtol(shard, &end, 10);
		if (errno || end == shard || *end || shard[0] == '-' || shard[0] == '+' || v > INT_MAX)
			usage_error("--shard must be a shard number, not \"%s\"", shard);
		m->shard = (int) v;
		snprintf(m->shard_s, sizeof(m->shard_s), "%d", m->shard);
	}
	m->from.option = "--from";
	m->to.option = "--to";
	name_move(m, true);			/* until the move id is known */
}

static void
run_abort(Move *m)
{
	bool		ok;

	if (!load_unfinished(m))
	{
		if (m->from.conn == NULL || m->to.conn == NULL)
		{
			error_msg("the %s server records no unfinished move of shard %d, and the %s server did not answer",
					  m->from.conn ? "--from" : "--to", m->shard, m->from.conn ? "--to" : "--from");
			hint_msg("Run the same command with --abort again once both servers answer.");
			finish(m, EXIT_UNFINISHED, "unfinished");
		}
		say("no unfinished move of shard %d between these servers: nothing to undo", m->shard);
		finish(m, EXIT_DONE, "nothing to do");
	}
	if (target_rank(m->dst_phase) >= RANK_CUT_OVER || is(m->src_phase, "moved-away"))
	{
		m->error_text = xstrdup("the move is past the point of no return");
		error_msg("the move of shard %d is past the point of no return: the --to server took over the shard",
				  m->shard);
		hint_msg("Run the same command with --resume to finish it.");
		finish(m, EXIT_FAILED, "refused");
	}
	m->step = "the undo";
	cancel_allow(false);
	say("undoing the unfinished %s move of shard %d (--from: %s, --to: %s)", m->method, m->shard,
		m->src_phase[0] ? m->src_phase : "no journal", m->dst_phase[0] ? m->dst_phase : "no journal");
	ok = undo_target(m);
	ok = undo_source(m) && ok;
	report_state(m);
	if (!ok)
	{
		error_msg("the move could not be fully undone");
		hint_msg("Once both servers answer, run the same command with --abort again.");
		finish(m, EXIT_UNFINISHED, "unfinished");
	}
	say("the move was undone: shard %d stays on the --from server, which takes its writes", m->shard);
	finish(m, EXIT_DONE, "aborted");
}

static void
run_move(Move *m)
{
	int			rank = target_rank(m->dst_phase);

	if (rank < RANK_CHECKED)
	{
		need(m, &m->to);
		m->changed = true;
		if (!journal_write(m, &m->to, "target", "checked"))
		{
			if (is(db_sqlstate(), SQLSTATE_UNIQUE_VIOLATION))
				refuse(m, "another move of shard %d to the --to server has started; nothing was changed", m->shard);
			refuse(m, "could not write the move journal on the --to server: %s", db_error());
		}
		rank = RANK_CHECKED;
	}
	if (!m->online)
	{
		if (rank <= RANK_COPYING)
		{
			step_freeze(m);
			step_copy_offline(m);
		}
		if (rank < RANK_VERIFIED)
			step_verify(m);
	}
	else
	{
		if (rank <= RANK_COPYING)
		{
			if (rank == RANK_COPYING)
				drop_replication(m);	/* an earlier attempt's go first */
			step_publish(m);
			step_copy_online(m);
		}
		if (rank <= RANK_COPIED)
		{
			if (!is(m->src_phase, "frozen-for-move"))
			{
				step_wait_sync(m);
				step_close_gap(m);
				step_freeze(m);
			}
			step_catch_up(m);
		}
		if (rank < RANK_VERIFIED)
		{
			step_carry_sequences(m);
			step_verify(m);
		}
	}
	if (rank < RANK_CUT_OVER)
		step_cutover(m);
	else
		m->past_no_return = true;
	step_finish(m);
}

static void
run_drop_source(Move *m)
{
	PGresult   *res;
	JournalRow	t;
	char	   *v = NULL;
	bool		ok;

	m->step = "--drop-source";
	need(m, &m->from);
	res = query(&m->from,
				"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
				"WHERE shard = $1::integer AND side = 'source' AND phase = 'moved-away' "
				"ORDER BY updated_at DESC LIMIT 1",
				1, m->shard_s);
	if (res == NULL)
		refuse(m, "could not read the move journal of the --from server: %s", db_error());
	journal_fill(res, &m->jsrc);
	PQclear(res);
	if (!m->jsrc.found)
		refuse(m, "the --from server records no finished move of shard %d away from it: nothing to drop", m->shard);
	m->move_id = m->jsrc.move_id;
	m->schema = m->jsrc.schema;
	m->method = m->jsrc.method;
	set_phase(m->src_phase, m->jsrc.phase);
	if (!journal_by_id(&m->to, m->move_id, "target", &t))
		refuse(m, "could not read the move journal of the --to server: %s", db_error());
	if (!t.found || !is(t.phase, "done"))
		refuse(m, "the --to server does not record the move of shard %d as done (move %s); the --from server's "
			   "copy is the only sure one", m->shard, m->move_id);
	set_phase(m->dst_phase, t.phase);
	if (!registered_schema(&m->to, m->shard_s, &v))
		refuse(m, "could not read the shard registry of the --to server: %s", db_error());
	if (v == NULL)
		refuse(m, "shard %d is not registered on the --to server; the --from server's copy is kept", m->shard);
	/* only the frozen copy the move left: every table still refuses writes */
	if (!get_value(&m->from, &v,
				   "SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_class c "
				   "        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND NOT EXISTS "
				   "        (SELECT FROM pg_catalog.pg_trigger g WHERE g.tgrelid = c.oid "
				   "         AND g.tgname = '" GUARD_TRIGGER "'))::text "
				   "FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				   1, m->schema))
		refuse(m, "could not read schema \"%s\" on the --from server: %s", m->schema, db_error());
	if (v == NULL)
	{
		say("schema \"%s\" no longer exists on the --from server", m->schema);
	}
	else if (atoi(v) != 0)
		refuse(m, "%s tables of schema \"%s\" on the --from server take writes: it is not the frozen copy "
			   "this move left, so it is kept", v, m->schema);
	/* the DROP fires the --from server's event triggers, as the superuser */
	if (check_event_triggers(m, &m->from, "the DROP SCHEMA of --drop-source") > 0)
	{
		detail_msg("shardid-move runs no code of other roles with a superuser's rights.");
		hint_msg("Disable these event triggers for the drop (ALTER EVENT TRIGGER ... DISABLE), or have a "
				 "superuser own the functions they call; then run --drop-source again.");
		refuse(m, "schema \"%s\" was not dropped on the --from server", m->schema);
	}
	if (!m->yes)
	{
		char		answer[16] = "";

		if (!isatty(STDIN_FILENO))
			refuse(m, "--drop-source needs --yes when not run at a terminal; nothing was dropped");
		fprintf(stderr, "%s: drop schema \"%s\" and all its rows on the --from server (%s)? Type yes: ",
				PROGNAME, m->schema, m->from.where);
		if (fgets(answer, sizeof(answer), stdin) == NULL || strcmp(chomp(answer), "yes") != 0)
		{
			say("schema \"%s\" kept on the --from server", m->schema);
			finish(m, EXIT_FAILED, "kept");
		}
	}
	m->qschema = quote_ident(&m->from, m->schema);
	{
		char	   *sql = xprintf("DROP SCHEMA IF EXISTS %s CASCADE", m->qschema);
		bool		keeps;

		/* the legacy boundaries of its converted tables go with them */
		if (!keeps_legacy_ids(&m->from, &keeps))
			fail(m, "could not query the --from server: %s", db_error());
		ok = tx_begin(&m->from) &&
			(!keeps || delete_legacy_ids(&m->from, m->schema)) &&
			exec_sql(&m->from, sql, 0) &&
			exec_sql(&m->from,
					 "SELECT shardid.unregister_shard($1::integer) "
					 "WHERE EXISTS (SELECT FROM shardid.shard_registry WHERE shard = $1::integer "
					 "AND schema_name = $2::name)", 2, m->shard_s, m->schema) &&
			journal_write(m, &m->from, "source", "dropped") && commit(m, &m->from);
		free(sql);
	}
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(m, &m->from);
		refuse(m, "could not drop schema \"%s\" on the --from server: %s", m->schema, why);
	}
	say("dropped schema \"%s\" on the --from server", m->schema);
}

/* is the shard registered on the --from server? */
static bool
registered_on_source(Move *m)
{
	char	   *v = NULL;

	if (!registered_schema(&m->from, m->shard_s, &v))
		refuse(m, "could not read the shard registry of the --from server: %s", db_error());
	if (v == NULL)
		return false;
	free(v);
	return true;
}

static void
atexit_cleanup(void)
{
	private_dir_remove();
}

int
main(int argc, char **argv)
{
	Move		move = {0};	/* the move: every step reads and writes it by m */
	Move	   *m = &move;

	m->t0 = now_seconds();
	m->on_failure = give_up;
	parse_args(m, argc, argv);
	signals_install();
	atexit(atexit_cleanup);
	m->pg_dump = find_program("pg_dump");
	m->pg_restore = find_program("pg_restore");
	if (m->pg_dump == NULL || m->pg_restore == NULL)
	{
		error_msg("pg_dump and pg_restore are needed: neither next to %s nor on PATH", PROGNAME);
		finish(m, EXIT_FAILED, "failed");
	}
	m->tmpdir = private_dir_make();
	if (m->tmpdir == NULL)
		finish(m, EXIT_FAILED, "failed");
	if (m->do_abort)
		connect_for_abort(m);
	else
		connect_both(m);
	if (m->from.conn && m->to.conn)
		check_servers(m);
	{
		Server	   *s[] = {&m->from, &m->to};
		int			i;

		for (i = 0; i < 2; i++)
		{
			int			r = s[i]->conn ? take_move_lock(m, s[i]) : 1;

			if (r < 0)
				refuse(m, "could not take the move lock of shard %d on the %s server: %s; nothing was changed",
					   m->shard, s[i]->option, db_error());
			if (r == 0)
				refuse(m, "another shardid-move is working on shard %d with the %s server right now "
					   "(its session there: %s); nothing was changed", m->shard, s[i]->option,
					   move_lock_holder(m, s[i]));
		}
	}

	if (m->do_abort)
		run_abort(m);

	if (load_unfinished(m))
	{
		if (!m->do_resume)
		{
			describe_unfinished(m);
			m->error_text = xstrdup("an unfinished move of the shard exists");
			finish(m, EXIT_FAILED, "refused");
		}
		say("resuming the %s move of shard %d (--from: %s, --to: %s)", m->method, m->shard,
			m->src_phase[0] ? m->src_phase : "no journal", m->dst_phase[0] ? m->dst_phase : "no journal");
		if (is(m->src_phase, "aborted") || (m->src_phase[0] == '\0' && target_rank(m->dst_phase) > RANK_CHECKED))
			refuse(m, "the --from server's part of this move was undone or is missing: it cannot be resumed; "
				   "run the same command with --abort");
		inspect_source(m);
		if (target_rank(m->dst_phase) < RANK_CUT_OVER)
			m->changed = true;
		run_move(m);
	}
	else if (m->do_resume)
	{
		say("no unfinished move of shard %d between these servers: nothing to resume", m->shard);
		finish(m, EXIT_FAILED, "nothing to resume");
	}
	else if (m->drop_only)
	{
		/* only the source of a finished move: never a move */
		char	   *v = NULL;

		if (!registered_schema(&m->from, m->shard_s, &v))
			refuse(m, "could not read the shard registry of the --from server: %s", db_error());
		if (v != NULL)
		{
			m->schema = v;
			error_msg("shard %d has not moved away: it lives on the --from server (schema \"%s\"), and "
					  "--drop-source drops only the copy that a finished move left there", m->shard, v);
			hint_msg("To move the shard and then drop its copy on the --from server, use --move-and-drop-source.");
			m->error_text = xstrdup("the shard has not moved away from the --from server");
			finish(m, EXIT_FAILED, "refused");
		}
	}
	else if (m->move_and_drop && moved_away_pending(m) && !registered_on_source(m))
	{
		/* the move finished earlier: only the drop is left */
	}
	else
	{
		check_new_move(m);
		say("moving shard %d (schema \"%s\": %s, %s) %s", m->shard, m->schema,
			count_of(m->ntables, "table", "tables"), count_of(m->nseqs, "sequence", "sequences"),
			m->online ? "online, with logical replication" : "offline");
		say_room(m);
		run_move(m);
	}
	if (m->drop_source)
		run_drop_source(m);
	else if (m->schema)
		say("schema \"%s\" stays on the --from server, refusing writes; drop it with --drop-source --yes "
			"once the application routes shard %d to the --to server", m->schema, m->shard);
	finish(m, EXIT_DONE, "done");
}
