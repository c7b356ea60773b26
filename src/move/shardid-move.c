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
parse_args(int argc, char **argv)
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

	M.timeout = DEFAULT_TIMEOUT_S;
	M.max_lag = DEFAULT_MAX_LAG;
	M.max_lag_s = DEFAULT_MAX_LAG_S;
	M.to_free = -1;
	M.size_bytes = -1;
	M.room_needed = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", options, NULL)) != -1)
	{
		switch (c)
		{
			case 's':
				shard = optarg;
				break;
			case 'f':
				M.from.conninfo = optarg;
				break;
			case 't':
				M.to.conninfo = optarg;
				break;
			case 'o':
				M.online = true;
				move_option = "--online";
				break;
			case 'd':
				M.drop_only = true;
				break;
			case 'D':
				M.move_and_drop = true;
				break;
			case 'y':
				M.yes = true;
				break;
			case 'T':
				{
					char	   *end;
					long		v;

					errno = 0;
					v = strtol(optarg, &end, 10);
					if (errno || end == optarg || *end || v < 1 || v > MAX_TIMEOUT_S)
						usage_error("--timeout must be a number of seconds between 1 and 604800, not \"%s\"", optarg);
					M.timeout = (int) v;
				}
				break;
			case 'L':
				if ((M.max_lag = parse_size(optarg)) < 0)
					usage_error("--max-lag must be a size in bytes, kB, MB, GB or TB, not \"%s\"", optarg);
				move_option = "--max-lag";
				break;
			case 'F':
				if ((M.to_free = parse_size(optarg)) < 0)
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
					M.max_lag_s = (int) v;
				}
				move_option = "--max-lag-seconds";
				break;
			case 'r':
				M.do_resume = true;
				move_option = "--resume";
				break;
			case 'a':
				M.do_abort = true;
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
	if (shard == NULL || M.from.conninfo == NULL || M.to.conninfo == NULL)
		usage_error("--shard, --from and --to are required");
	if (M.do_abort && M.do_resume)
		usage_error("--abort and --resume cannot be used together");
	if (M.drop_only && M.move_and_drop)
		usage_error("--drop-source and --move-and-drop-source cannot be used together");
	if ((M.drop_only || M.move_and_drop) && M.do_abort)
		usage_error("--abort drops nothing: it cannot be used with %s",
					M.drop_only ? "--drop-source" : "--move-and-drop-source");
	if (M.drop_only && move_option)
		usage_error("--drop-source only drops the copy a finished move left, so %s does not apply; "
					"to move the shard and then drop its copy, use --move-and-drop-source", move_option);
	M.drop_source = M.drop_only || M.move_and_drop;
	{
		char	   *end;
		long		v;

		errno = 0;
		v = strtol(shard, &end, 10);
		if (errno || end == shard || *end || shard[0] == '-' || shard[0] == '+' || v > INT_MAX)
			usage_error("--shard must be a shard number, not \"%s\"", shard);
		M.shard = (int) v;
		snprintf(M.shard_s, sizeof(M.shard_s), "%d", M.shard);
	}
	M.from.option = "--from";
	M.to.option = "--to";
	name_move(true);			/* until the move id is known */
}

static void
run_abort(void)
{
	bool		ok;

	if (!load_unfinished())
	{
		if (M.from.conn == NULL || M.to.conn == NULL)
		{
			error_msg("the %s server records no unfinished move of shard %d, and the %s server did not answer",
					  M.from.conn ? "--from" : "--to", M.shard, M.from.conn ? "--to" : "--from");
			hint_msg("Run the same command with --abort again once both servers answer.");
			finish(EXIT_UNFINISHED, "unfinished");
		}
		say("no unfinished move of shard %d between these servers: nothing to undo", M.shard);
		finish(EXIT_DONE, "nothing to do");
	}
	if (target_rank(M.dst_phase) >= RANK_CUT_OVER || is(M.src_phase, "moved-away"))
	{
		M.error_text = xstrdup("the move is past the point of no return");
		error_msg("the move of shard %d is past the point of no return: the --to server took over the shard",
				  M.shard);
		hint_msg("Run the same command with --resume to finish it.");
		finish(EXIT_FAILED, "refused");
	}
	M.step = "the undo";
	cancel_allow(false);
	say("undoing the unfinished %s move of shard %d (--from: %s, --to: %s)", M.method, M.shard,
		M.src_phase[0] ? M.src_phase : "no journal", M.dst_phase[0] ? M.dst_phase : "no journal");
	ok = undo_target();
	ok = undo_source() && ok;
	report_state();
	if (!ok)
	{
		error_msg("the move could not be fully undone");
		hint_msg("Once both servers answer, run the same command with --abort again.");
		finish(EXIT_UNFINISHED, "unfinished");
	}
	say("the move was undone: shard %d stays on the --from server, which takes its writes", M.shard);
	finish(EXIT_DONE, "aborted");
}

static void
run_move(void)
{
	int			rank = target_rank(M.dst_phase);

	if (rank < RANK_CHECKED)
	{
		need(&M.to);
		M.changed = true;
		if (!journal_write(&M.to, "target", "checked"))
		{
			if (is(db_sqlstate(), SQLSTATE_UNIQUE_VIOLATION))
				refuse("another move of shard %d to the --to server has started; nothing was changed", M.shard);
			refuse("could not write the move journal on the --to server: %s", db_error());
		}
		rank = RANK_CHECKED;
	}
	if (!M.online)
	{
		if (rank <= RANK_COPYING)
		{
			step_freeze();
			step_copy_offline();
		}
		if (rank < RANK_VERIFIED)
			step_verify();
	}
	else
	{
		if (rank <= RANK_COPYING)
		{
			if (rank == RANK_COPYING)
				drop_replication();	/* an earlier attempt's go first */
			step_publish();
			step_copy_online();
		}
		if (rank <= RANK_COPIED)
		{
			if (!is(M.src_phase, "frozen-for-move"))
			{
				step_wait_sync();
				step_close_gap();
				step_freeze();
			}
			step_catch_up();
		}
		if (rank < RANK_VERIFIED)
		{
			step_carry_sequences();
			step_verify();
		}
	}
	if (rank < RANK_CUT_OVER)
		step_cutover();
	else
		M.past_no_return = true;
	step_finish();
}

static void
run_drop_source(void)
{
	PGresult   *res;
	JournalRow	t;
	char	   *v = NULL;
	bool		ok;

	M.step = "--drop-source";
	need(&M.from);
	res = query(&M.from,
				"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
				"WHERE shard = $1::integer AND side = 'source' AND phase = 'moved-away' "
				"ORDER BY updated_at DESC LIMIT 1",
				1, M.shard_s);
	if (res == NULL)
		refuse("could not read the move journal of the --from server: %s", db_error());
	journal_fill(res, &M.jsrc);
	PQclear(res);
	if (!M.jsrc.found)
		refuse("the --from server records no finished move of shard %d away from it: nothing to drop", M.shard);
	M.move_id = M.jsrc.move_id;
	M.schema = M.jsrc.schema;
	M.method = M.jsrc.method;
	set_phase(M.src_phase, M.jsrc.phase);
	if (!journal_by_id(&M.to, M.move_id, "target", &t))
		refuse("could not read the move journal of the --to server: %s", db_error());
	if (!t.found || !is(t.phase, "done"))
		refuse("the --to server does not record the move of shard %d as done (move %s); the --from server's "
			   "copy is the only sure one", M.shard, M.move_id);
	set_phase(M.dst_phase, t.phase);
	if (!registered_schema(&M.to, M.shard_s, &v))
		refuse("could not read the shard registry of the --to server: %s", db_error());
	if (v == NULL)
		refuse("shard %d is not registered on the --to server; the --from server's copy is kept", M.shard);
	/* only the frozen copy the move left: every table still refuses writes */
	if (!get_value(&M.from, &v,
				   "SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_class c "
				   "        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p') AND NOT EXISTS "
				   "        (SELECT FROM pg_catalog.pg_trigger g WHERE g.tgrelid = c.oid "
				   "         AND g.tgname = '" GUARD_TRIGGER "'))::text "
				   "FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				   1, M.schema))
		refuse("could not read schema \"%s\" on the --from server: %s", M.schema, db_error());
	if (v == NULL)
	{
		say("schema \"%s\" no longer exists on the --from server", M.schema);
	}
	else if (atoi(v) != 0)
		refuse("%s tables of schema \"%s\" on the --from server take writes: it is not the frozen copy "
			   "this move left, so it is kept", v, M.schema);
	/* the DROP fires the --from server's event triggers, as the superuser */
	if (check_event_triggers(&M.from, "the DROP SCHEMA of --drop-source") > 0)
	{
		detail_msg("shardid-move runs no code of other roles with a superuser's rights.");
		hint_msg("Disable these event triggers for the drop (ALTER EVENT TRIGGER ... DISABLE), or have a "
				 "superuser own the functions they call; then run --drop-source again.");
		refuse("schema \"%s\" was not dropped on the --from server", M.schema);
	}
	if (!M.yes)
	{
		char		answer[16] = "";

		if (!isatty(STDIN_FILENO))
			refuse("--drop-source needs --yes when not run at a terminal; nothing was dropped");
		fprintf(stderr, "%s: drop schema \"%s\" and all its rows on the --from server (%s)? Type yes: ",
				PROGNAME, M.schema, M.from.where);
		if (fgets(answer, sizeof(answer), stdin) == NULL || strcmp(chomp(answer), "yes") != 0)
		{
			say("schema \"%s\" kept on the --from server", M.schema);
			finish(EXIT_FAILED, "kept");
		}
	}
	M.qschema = quote_ident(&M.from, M.schema);
	{
		char	   *sql = xprintf("DROP SCHEMA IF EXISTS %s CASCADE", M.qschema);
		bool		keeps;

		/* the legacy boundaries of its converted tables go with them */
		if (!keeps_legacy_ids(&M.from, &keeps))
			fail("could not query the --from server: %s", db_error());
		ok = tx_begin(&M.from) &&
			(!keeps || delete_legacy_ids(&M.from, M.schema)) &&
			exec_sql(&M.from, sql, 0) &&
			exec_sql(&M.from,
					 "SELECT shardid.unregister_shard($1::integer) "
					 "WHERE EXISTS (SELECT FROM shardid.shard_registry WHERE shard = $1::integer "
					 "AND schema_name = $2::name)", 2, M.shard_s, M.schema) &&
			journal_write(&M.from, "source", "dropped") && commit(&M.from);
		free(sql);
	}
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.from);
		refuse("could not drop schema \"%s\" on the --from server: %s", M.schema, why);
	}
	say("dropped schema \"%s\" on the --from server", M.schema);
}

/* is the shard registered on the --from server? */
static bool
registered_on_source(void)
{
	char	   *v = NULL;

	if (!registered_schema(&M.from, M.shard_s, &v))
		refuse("could not read the shard registry of the --from server: %s", db_error());
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
	M.t0 = now_seconds();
	M.on_failure = give_up;
	parse_args(argc, argv);
	signals_install();
	atexit(atexit_cleanup);
	M.pg_dump = find_program("pg_dump");
	M.pg_restore = find_program("pg_restore");
	if (M.pg_dump == NULL || M.pg_restore == NULL)
	{
		error_msg("pg_dump and pg_restore are needed: neither next to %s nor on PATH", PROGNAME);
		finish(EXIT_FAILED, "failed");
	}
	M.tmpdir = private_dir_make();
	if (M.tmpdir == NULL)
		finish(EXIT_FAILED, "failed");
	if (M.do_abort)
		connect_for_abort();
	else
		connect_both();
	if (M.from.conn && M.to.conn)
		check_servers();
	{
		Server	   *s[] = {&M.from, &M.to};
		int			i;

		for (i = 0; i < 2; i++)
		{
			int			r = s[i]->conn ? take_move_lock(s[i]) : 1;

			if (r < 0)
				refuse("could not take the move lock of shard %d on the %s server: %s; nothing was changed",
					   M.shard, s[i]->option, db_error());
			if (r == 0)
				refuse("another shardid-move is working on shard %d with the %s server right now "
					   "(its session there: %s); nothing was changed", M.shard, s[i]->option,
					   move_lock_holder(s[i]));
		}
	}

	if (M.do_abort)
		run_abort();

	if (load_unfinished())
	{
		if (!M.do_resume)
		{
			describe_unfinished();
			M.error_text = xstrdup("an unfinished move of the shard exists");
			finish(EXIT_FAILED, "refused");
		}
		say("resuming the %s move of shard %d (--from: %s, --to: %s)", M.method, M.shard,
			M.src_phase[0] ? M.src_phase : "no journal", M.dst_phase[0] ? M.dst_phase : "no journal");
		if (is(M.src_phase, "aborted") || (M.src_phase[0] == '\0' && target_rank(M.dst_phase) > RANK_CHECKED))
			refuse("the --from server's part of this move was undone or is missing: it cannot be resumed; "
				   "run the same command with --abort");
		inspect_source();
		if (target_rank(M.dst_phase) < RANK_CUT_OVER)
			M.changed = true;
		run_move();
	}
	else if (M.do_resume)
	{
		say("no unfinished move of shard %d between these servers: nothing to resume", M.shard);
		finish(EXIT_FAILED, "nothing to resume");
	}
	else if (M.drop_only)
	{
		/* only the source of a finished move: never a move */
		char	   *v = NULL;

		if (!registered_schema(&M.from, M.shard_s, &v))
			refuse("could not read the shard registry of the --from server: %s", db_error());
		if (v != NULL)
		{
			M.schema = v;
			error_msg("shard %d has not moved away: it lives on the --from server (schema \"%s\"), and "
					  "--drop-source drops only the copy that a finished move left there", M.shard, v);
			hint_msg("To move the shard and then drop its copy on the --from server, use --move-and-drop-source.");
			M.error_text = xstrdup("the shard has not moved away from the --from server");
			finish(EXIT_FAILED, "refused");
		}
	}
	else if (M.move_and_drop && moved_away_pending() && !registered_on_source())
	{
		/* the move finished earlier: only the drop is left */
	}
	else
	{
		check_new_move();
		say("moving shard %d (schema \"%s\": %s, %s) %s", M.shard, M.schema,
			count_of(M.ntables, "table", "tables"), count_of(M.nseqs, "sequence", "sequences"),
			M.online ? "online, with logical replication" : "offline");
		say_room();
		run_move();
	}
	if (M.drop_source)
		run_drop_source();
	else if (M.schema)
		say("schema \"%s\" stays on the --from server, refusing writes; drop it with --drop-source --yes "
			"once the application routes shard %d to the --to server", M.schema, M.shard);
	finish(EXIT_DONE, "done");
}
