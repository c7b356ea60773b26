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
 * src/move/shardid-move.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "move.h"

#ifndef SHARDID_VERSION
#define SHARDID_VERSION "unknown"
#endif

#define GUARD_TRIGGER "shardid_moving"
#define ACTIVE_PHASES_EXCLUDED "('done', 'moved-away', 'dropped', 'aborted')"

typedef struct Table
{
	char	   *name;
	char	   *qname;			/* "schema"."table", quoted */
	char		kind;			/* 'r' or 'p' */
	long long	estimate;		/* reltuples on the source */
	long long	rows;			/* counted on the source */
	long long	copied;			/* progress of its COPY */
	int			seen;			/* 1 while its COPY runs, 2 once it ended */
} Table;

typedef struct Seq
{
	char	   *name;
	char	   *qname;
} Seq;

typedef struct JournalRow
{
	bool		found;
	char	   *move_id;
	char	   *side;
	char	   *schema;
	char	   *method;
	char	   *phase;
	char	   *peer;
	char	   *schema_oid;
	char	   *sub_oid;
	char	   *started_at;
	char	   *started_by;
} JournalRow;

static struct
{
	/* command line */
	int			shard;
	char		shard_s[16];
	bool		online;
	bool		drop_source;
	bool		yes;
	bool		do_abort;
	bool		do_resume;
	int			timeout;
	Server		from;
	Server		to;

	/* the shard */
	char	   *schema;
	char	   *qschema;
	char	   *pattern;		/* for pg_dump --schema: exact */
	char	   *src_schema_oid;
	char	   *owner;
	Table	   *tables;
	int			ntables;
	Seq		   *seqs;
	int			nseqs;
	long long	rows_total;

	/* the move */
	char	   *move_id;
	const char *method;
	char		name[64];		/* publication, slot, subscription */
	char		src_phase[24];
	char		dst_phase[24];
	char	   *dst_schema_oid;
	char	   *sub_oid;
	bool		changed;
	bool		past_no_return;
	bool		dst_known;		/* the target's journal was read by the undo */
	bool		has_registry;

	/* the run */
	char	   *tmpdir;
	char	   *pg_dump;
	char	   *pg_restore;
	double		t0;
	const char *step;
	const char *outcome;
	char	   *error_text;
} M;

static void fail(const char *fmt,...) PRINTF_LIKE(1, 2) NORETURN;
static void finish(int code, const char *outcome) NORETURN;

/* ------------------------------------------------------------------ */
/* command line														  */
/* ------------------------------------------------------------------ */

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
	printf("  --drop-source       drop the frozen copy on the --from server, after this move\n"
		   "                      or after a move of the shard that finished earlier\n");
	printf("  --yes               drop without asking\n");
	printf("  --timeout=SECONDS   give up waiting (locks, initial copy, catch-up, clock)\n"
		   "                      after this long (default 300)\n");
	printf("  --resume            finish an interrupted move from the phase its journal records\n");
	printf("  --abort             undo an interrupted move\n");
	printf("  --json              print a JSON summary on standard output\n");
	printf("  -V, --version       print the version and exit\n");
	printf("  -h, --help          print this help and exit\n\n");
	printf("Exit status: 0 done, 1 failed (anything changed was undone), 2 bad command line,\n"
		   "3 unfinished (interrupted past the point of no return, or the undo failed):\n"
		   "run again with --resume or --abort.\n");
}

static void NORETURN
usage_error(const char *fmt,...) PRINTF_LIKE(1, 2);

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

static void
parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{"shard", required_argument, NULL, 's'},
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"online", no_argument, NULL, 'o'},
		{"drop-source", no_argument, NULL, 'd'},
		{"yes", no_argument, NULL, 'y'},
		{"timeout", required_argument, NULL, 'T'},
		{"resume", no_argument, NULL, 'r'},
		{"abort", no_argument, NULL, 'a'},
		{"json", no_argument, NULL, 'j'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	const char *shard = NULL;
	int			c;

	M.timeout = 300;
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
				break;
			case 'd':
				M.drop_source = true;
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
					if (errno || end == optarg || *end || v < 1 || v > 86400 * 7)
						usage_error("--timeout must be a number of seconds between 1 and 604800, not \"%s\"", optarg);
					M.timeout = (int) v;
				}
				break;
			case 'r':
				M.do_resume = true;
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
	snprintf(M.name, sizeof(M.name), "shardid_move_%d", M.shard);
}

/* ------------------------------------------------------------------ */
/* small helpers													  */
/* ------------------------------------------------------------------ */

static bool
is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

#define RANK_CHECKED 1
#define RANK_COPYING 2
#define RANK_COPIED 3			/* copied (offline), replicating (online) */
#define RANK_CAUGHT_UP 4
#define RANK_VERIFIED 5
#define RANK_CUT_OVER 6
#define RANK_DONE 7

/* the order of the target's phases; -1 for aborted */
static int
target_rank(const char *phase)
{
	if (phase == NULL || phase[0] == '\0')
		return 0;
	if (is(phase, "checked"))
		return RANK_CHECKED;
	if (is(phase, "copying"))
		return RANK_COPYING;
	if (is(phase, "copied") || is(phase, "replicating"))
		return RANK_COPIED;
	if (is(phase, "caught-up"))
		return RANK_CAUGHT_UP;
	if (is(phase, "verified"))
		return RANK_VERIFIED;
	if (is(phase, "cut-over"))
		return RANK_CUT_OVER;
	if (is(phase, "done"))
		return RANK_DONE;
	return -1;
}

/* "1 table", "2 tables" */
static char *
count_of(long long n, const char *one, const char *many)
{
	return xprintf("%lld %s", n, n == 1 ? one : many);
}

static void
set_phase(char *buf, const char *phase)
{
	snprintf(buf, sizeof(M.dst_phase), "%s", phase);
}

/*
 * A phase written inside a transaction counts once the transaction commits:
 * journal_write() keeps it pending until commit() below.
 */
static char pending_src[24],
			pending_dst[24];

static bool
commit(Server *s)
{
	char	   *pending = s == &M.from ? pending_src : pending_dst;
	bool		ok = tx_commit(s);

	if (ok && pending[0])
		set_phase(s == &M.from ? M.src_phase : M.dst_phase, pending);
	pending[0] = '\0';
	return ok;
}

static void
rollback(Server *s)
{
	(s == &M.from ? pending_src : pending_dst)[0] = '\0';
	tx_rollback(s);
}

static void
check_interrupt(void)
{
	if (interrupted_by)
		fail("interrupted");
}

/* value of a conninfo keyword, quoted when needed */
static char *
conninfo_value(const char *v)
{
	size_t		n = strlen(v),
				i,
				o = 0;
	char	   *r = malloc(2 * n + 3);

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

/* how the --to server reaches the --from server: what this program used */
static char *
source_conninfo_for_target(void)
{
	PGconn	   *c = M.from.conn;
	const char *host = PQhost(c);
	const char *pass = PQpass(c);
	char	   *h = conninfo_value(host && host[0] ? host : "localhost");
	char	   *p = conninfo_value(PQport(c));
	char	   *d = conninfo_value(PQdb(c));
	char	   *u = conninfo_value(PQuser(c));
	char	   *r;

	if (pass && pass[0])
	{
		char	   *pw = conninfo_value(pass);

		r = xprintf("host=%s port=%s dbname=%s user=%s password=%s", h, p, d, u, pw);
		free(pw);
	}
	else
		r = xprintf("host=%s port=%s dbname=%s user=%s", h, p, d, u);
	free(h);
	free(p);
	free(d);
	free(u);
	return r;
}

/*
 * The connection string for pg_dump / pg_restore: every setting this
 * program's connection uses, but the password, which goes to the child's
 * environment instead so that it never shows in a process list.
 */
static char *
child_conninfo(Server *s, const char **password)
{
	PQconninfoOption *opts = PQconninfo(s->conn);
	PQconninfoOption *o;
	char	   *r = xstrdup("");

	*password = PQpass(s->conn);
	if (opts == NULL)
		return xstrdup(s->conninfo);
	for (o = opts; o->keyword; o++)
	{
		char	   *v,
				   *n;

		if (o->val == NULL || o->val[0] == '\0' || strcmp(o->keyword, "password") == 0 ||
			strcmp(o->keyword, "fallback_application_name") == 0)
			continue;
		v = conninfo_value(o->val);
		n = xprintf("%s%s%s=%s", r, r[0] ? " " : "", o->keyword, v);
		free(r);
		free(v);
		r = n;
	}
	PQconninfoFree(opts);
	return r;
}

/*
 * The move lock: a session advisory lock on the shard, held on both servers
 * by the run working on it.  It goes with the session, so a run killed by
 * SIGKILL leaves it free, and a second run (even --abort) cannot act on a
 * move that is still running.
 */
#define MOVE_LOCK_CLASS "1936223606"

static bool
take_move_lock(Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v, "SELECT pg_catalog.pg_try_advisory_lock($1::integer, $2::integer)::text",
				   2, MOVE_LOCK_CLASS, M.shard_s))
		return false;
	if (!is(v, "true"))
	{
		free(v);
		return false;
	}
	free(v);
	s->locked = s->generation;
	return true;
}

/* a server answering again after a lost connection, or the move fails */
static void
need(Server *s)
{
	if (!server_ensure(s, M.timeout < 30 ? M.timeout : 30))
		fail("lost the connection to the %s server: %s", s->option, db_error());
	if (s->locked != s->generation && !take_move_lock(s))
		fail("another shardid-move took shard %d over on the %s server while this one reconnected",
			 M.shard, s->option);
}

/* ------------------------------------------------------------------ */
/* the journal														  */
/* ------------------------------------------------------------------ */

static void
journal_clear(JournalRow *j)
{
	memset(j, 0, sizeof(*j));
}

static bool
journal_fill(PGresult *res, JournalRow *j)
{
	journal_clear(j);
	if (PQntuples(res) == 0)
		return false;
	j->found = true;
	j->move_id = xstrdup(PQgetvalue(res, 0, 0));
	j->side = xstrdup(PQgetvalue(res, 0, 1));
	j->schema = xstrdup(PQgetvalue(res, 0, 2));
	j->method = xstrdup(PQgetvalue(res, 0, 3));
	j->phase = xstrdup(PQgetvalue(res, 0, 4));
	j->peer = xstrdup(PQgetvalue(res, 0, 5));
	j->schema_oid = PQgetisnull(res, 0, 6) ? NULL : xstrdup(PQgetvalue(res, 0, 6));
	j->sub_oid = PQgetisnull(res, 0, 7) ? NULL : xstrdup(PQgetvalue(res, 0, 7));
	j->started_at = xstrdup(PQgetvalue(res, 0, 8));
	j->started_by = xstrdup(PQgetvalue(res, 0, 9));
	return true;
}

#define JOURNAL_COLUMNS \
	"move_id, side, schema_name, method, phase, peer, schema_oid, subscription_oid, " \
	"pg_catalog.to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', started_by"

/* the unfinished move of the shard recorded on a server, if any */
static bool
journal_unfinished(Server *s, JournalRow *j)
{
	PGresult   *res = query(s,
							"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
							"WHERE shard = $1::integer AND phase NOT IN " ACTIVE_PHASES_EXCLUDED,
							1, M.shard_s);

	if (res == NULL)
		return false;
	journal_fill(res, j);
	PQclear(res);
	return true;
}

static bool
journal_by_id(Server *s, const char *move_id, const char *side, JournalRow *j)
{
	PGresult   *res = query(s,
							"SELECT " JOURNAL_COLUMNS " FROM shardid.move_journal "
							"WHERE move_id = $1 AND side = $2",
							2, move_id, side);

	if (res == NULL)
		return false;
	journal_fill(res, j);
	PQclear(res);
	return true;
}

/* record a phase: insert the row of this side, or move it on */
static bool
journal_write(Server *s, const char *side, const char *phase)
{
	Server	   *peer = s == &M.from ? &M.to : &M.from;

	if (!exec_sql(s,
				  "INSERT INTO shardid.move_journal AS j "
				  "(move_id, side, shard, schema_name, method, phase, peer) "
				  "VALUES ($1, $2, $3::integer, $4::name, $5, $6, $7) "
				  "ON CONFLICT (move_id, side) DO UPDATE "
				  "SET phase = EXCLUDED.phase, updated_at = pg_catalog.now()",
				  7, M.move_id, side, M.shard_s, M.schema, M.method, phase, peer->where))
		return false;
	if (PQtransactionStatus(s->conn) == PQTRANS_INTRANS)
		set_phase(s == &M.from ? pending_src : pending_dst, phase);
	else
		set_phase(s == &M.from ? M.src_phase : M.dst_phase, phase);
	return true;
}

static const char *
target_phase_meaning(const char *phase)
{
	if (is(phase, "checked"))
		return "nothing was changed there yet";
	if (is(phase, "copying"))
		return "a partial copy of the schema may exist there";
	if (is(phase, "copied"))
		return "a full copy exists there, refusing writes, not yet verified";
	if (is(phase, "replicating"))
		return "a copy refusing writes exists there, with a subscription replicating into it";
	if (is(phase, "caught-up"))
		return "a full copy exists there, refusing writes, with the sequences carried over";
	if (is(phase, "verified"))
		return "a verified copy exists there, refusing writes, not yet registered";
	if (is(phase, "cut-over"))
		return "the shard is registered there and takes writes (past the point of no return)";
	if (is(phase, "done"))
		return "the move is done";
	if (is(phase, "aborted"))
		return "its part of the move was undone";
	return "unknown phase";
}

static const char *
source_phase_meaning(const char *phase)
{
	if (is(phase, "publishing"))
		return "a publication and a replication slot of the move may exist there; the shard takes writes";
	if (is(phase, "frozen-for-move"))
		return "the shard's tables refuse writes there";
	if (is(phase, "handing-over"))
		return "the shard's tables refuse writes there, and the --to server may have taken the shard over";
	if (is(phase, "moved-away"))
		return "the shard moved away; its frozen copy stays until --drop-source";
	if (is(phase, "dropped"))
		return "the shard moved away and its copy was dropped";
	if (is(phase, "aborted"))
		return "its part of the move was undone";
	return "unknown phase";
}

/* ------------------------------------------------------------------ */
/* what a server holds of the shard									  */
/* ------------------------------------------------------------------ */

/* replication slots of the move on the source, "" when none */
static char *
slots_of_move(Server *s)
{
	char	   *v = NULL;

	if (!get_value(s, &v,
				   "SELECT pg_catalog.string_agg(slot_name::text, ' ' ORDER BY slot_name) "
				   "FROM pg_catalog.pg_replication_slots "
				   "WHERE slot_name = $1 OR ($2::text IS NOT NULL AND "
				   "pg_catalog.starts_with(slot_name::text, 'pg_' || $2 || '_sync_'))",
				   2, M.name, M.sub_oid))
		return NULL;
	return v ? v : xstrdup("");
}

static void
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
report_server(Server *s, const char *side, char **slots_out)
{
	PGresult   *res;
	char	   *registered = NULL;
	char	   *pub = NULL,
			   *sub = NULL,
			   *slots = NULL;
	char	   *schema_state;
	char	   *journal;

	*slots_out = NULL;
	if (!server_ensure(s, 3))
	{
		say("%s server (%s): unreachable (%s); it keeps what its journal records: phase \"%s\" (%s)",
			s->option, s->where, db_error(), side[0] == 's' ? M.src_phase : M.dst_phase,
			side[0] == 's' ? source_phase_meaning(M.src_phase) : target_phase_meaning(M.dst_phase));
		return;
	}
	if (M.has_registry)
		get_value(s, &registered, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
				  1, M.shard_s);
	else
		get_value(s, &registered, "SELECT shardid.shard_schema($1::integer)", 1, M.shard_s);

	res = query(s,
				"SELECT (SELECT pg_catalog.count(*) FROM pg_catalog.pg_class c "
				"        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')), "
				"       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_trigger t "
				"        JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
				"        WHERE c.relnamespace = n.oid AND t.tgname = '" GUARD_TRIGGER "') "
				"FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				1, M.schema);
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

	get_value(s, &pub, "SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = $1::name", 1, M.name);
	get_value(s, &sub,
			  "SELECT subname FROM pg_catalog.pg_subscription WHERE subname = $1::name "
			  "AND subdbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())",
			  1, M.name);
	slots = slots_of_move(s);
	if (M.move_id)
	{
		JournalRow	j;

		journal_by_id(s, M.move_id, side, &j);
		journal = j.found ? xprintf("journal phase \"%s\"", j.phase) : xstrdup("no journal row");
	}
	else
		journal = xstrdup("no journal row");

	say("%s server (%s): shard %d %s; %s%s%s%s%s%s", s->option, s->where, M.shard,
		registered ? "registered" : "not registered", schema_state,
		pub ? "; publication " : "", pub ? pub : "",
		sub ? "; subscription " : "", sub ? sub : "",
		slots && slots[0] ? "; replication slots of the move" : "");
	say("%s server: %s", s->option, journal);
	*slots_out = slots;
	free(schema_state);
	free(journal);
}

static void
report_state(void)
{
	char	   *slots_from = NULL,
			   *slots_to = NULL;

	if (M.schema == NULL)
		return;
	report_server(&M.from, "source", &slots_from);
	report_server(&M.to, "target", &slots_to);
	hint_drop_slots(&M.from, slots_from);
	hint_drop_slots(&M.to, slots_to);
}

/* ------------------------------------------------------------------ */
/* the end: summary, exit code										  */
/* ------------------------------------------------------------------ */

static void
json_summary(int code)
{
	int			i;
	long long	rows = 0;
	bool		first = true;

	printf("{\"shard\": %d, \"schema\": ", M.shard);
	json_string(stdout, M.schema);
	printf(", \"method\": ");
	json_string(stdout, M.method);
	printf(", \"move_id\": ");
	json_string(stdout, M.move_id);
	printf(", \"from\": ");
	json_string(stdout, M.from.conn || M.from.where[0] ? M.from.where : NULL);
	printf(", \"to\": ");
	json_string(stdout, M.to.conn || M.to.where[0] ? M.to.where : NULL);
	printf(", \"outcome\": ");
	json_string(stdout, M.outcome);
	printf(", \"exit_code\": %d, \"phase_from\": ", code);
	json_string(stdout, M.src_phase[0] ? M.src_phase : NULL);
	printf(", \"phase_to\": ");
	json_string(stdout, M.dst_phase[0] ? M.dst_phase : NULL);
	printf(", \"tables\": [");
	for (i = 0; i < M.ntables; i++)
	{
		if (M.tables[i].kind != 'r')
			continue;
		printf("%s{\"name\": ", first ? "" : ", ");
		first = false;
		json_string(stdout, M.tables[i].name);
		printf(", \"rows\": %lld}", M.tables[i].rows);
		rows += M.tables[i].rows;
	}
	printf("], \"rows\": %lld, \"sequences\": %d, \"seconds\": %.3f, \"error\": ",
		   rows, M.nseqs, now_seconds() - M.t0);
	json_string(stdout, M.error_text);
	printf("}\n");
	fflush(stdout);
}

static void
finish(int code, const char *outcome)
{
	progress_end();
	M.outcome = outcome;
	if (report_json)
		json_summary(code);
	server_close(&M.from);
	server_close(&M.to);
	private_dir_remove();
	exit(code);
}

static bool undo_target(void);
static bool undo_source(void);
static bool drop_subscription(void);
static bool drop_slots(bool main_slot);

/*
 * Give up: undo what this move changed, unless it passed the point of no
 * return, and say what state the servers are in.
 */
static void NORETURN
give_up(void)
{
	bool		ok;

	cancel_allow(false);
	if (M.past_no_return)
	{
		say("the move is past the point of no return: shard %d is registered on the --to server", M.shard);
		report_state();
		hint_msg("Run the same command with --resume to finish the move.");
		finish(EXIT_UNFINISHED, "unfinished");
	}
	if (!M.changed)
	{
		say("nothing was changed");
		finish(EXIT_FAILED, "failed");
	}
	say("undoing the move of shard %d", M.shard);
	ok = undo_target();
	if (M.dst_known && target_rank(M.dst_phase) >= RANK_CUT_OVER)
	{
		/* the cutover committed although its answer was lost */
		say("the move is past the point of no return: shard %d is registered on the --to server", M.shard);
		report_state();
		hint_msg("Run the same command with --resume to finish the move.");
		finish(EXIT_UNFINISHED, "unfinished");
	}
	ok = undo_source() && ok;
	report_state();
	if (ok)
	{
		say("the move was undone: shard %d stays on the --from server, which takes its writes", M.shard);
		finish(EXIT_FAILED, "undone");
	}
	error_msg("the move could not be fully undone");
	hint_msg("Once both servers answer, run the same command with --abort to finish the undo.");
	finish(EXIT_UNFINISHED, "unfinished");
}

static void
fail(const char *fmt,...)
{
	va_list		ap;
	char		buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (interrupted_by)
	{
		M.error_text = xprintf("interrupted by %s during %s", signal_name(interrupted_by),
							   M.step ? M.step : "the checks");
		error_msg("%s", M.error_text);
	}
	else
	{
		M.error_text = xstrdup(buf);
		error_msg("%s", buf);
	}
	give_up();
}

/* ------------------------------------------------------------------ */
/* freezing: the guard trigger on every table of the schema			  */
/* ------------------------------------------------------------------ */

/* in the current transaction: every table of the schema refuses writes */
static bool
freeze_tables(Server *s)
{
	char	   *sql;
	int			i;
	bool		ok = true;
	char	   *arg = quote_literal(s, M.shard_s);

	for (i = 0; i < M.ntables && ok; i++)
	{
		sql = xprintf("CREATE OR REPLACE TRIGGER " GUARD_TRIGGER
					  " BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s"
					  " FOR EACH STATEMENT EXECUTE FUNCTION shardid.move_guard(%s)",
					  M.tables[i].qname, arg);
		ok = exec_sql(s, sql, 0);
		free(sql);
	}
	free(arg);
	return ok;
}

/* in the current transaction: drop the guard triggers in a schema */
static bool
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
static bool
tx_with_lock_retry(Server *s, bool (*fn) (Server *), const char *what)
{
	double		deadline = now_seconds() + M.timeout;

	for (;;)
	{
		bool		ok;

		need(s);
		ok = tx_begin(s) &&
			exec_sql(s, "SET LOCAL lock_timeout = '2s'", 0) &&
			fn(s) &&
			commit(s);
		if (ok)
			return true;
		rollback(s);
		check_interrupt();
		if (!is(db_sqlstate(), "55P03") || now_seconds() > deadline)
		{
			error_msg("could not %s on the %s server: %s", what, s->option, db_error());
			return false;
		}
		nap(200);
	}
}

static bool
freeze_source_tx(Server *s)
{
	return journal_write(s, "source", "frozen-for-move") && freeze_tables(s);
}

/* source: record frozen-for-move and make every table refuse writes */
static void
step_freeze(void)
{
	bool		again = is(M.src_phase, "frozen-for-move");

	M.step = "the freeze";
	check_interrupt();
	if (!tx_with_lock_retry(&M.from, freeze_source_tx, "refuse writes to the shard"))
		fail("could not freeze shard %d on the --from server", M.shard);
	M.changed = true;
	say(again ? "writes to shard %d stay refused on the --from server" :
		"writes to shard %d are refused on the --from server from now on", M.shard);
	pause_point("freeze");
	check_interrupt();
}

/* ------------------------------------------------------------------ */
/* the shard on the source											  */
/* ------------------------------------------------------------------ */

/* tables, sequences and owner of the schema on the source */
static void
inspect_source(void)
{
	PGresult   *res;
	int			i;

	M.qschema = quote_ident(&M.from, M.schema);
	{
		/* pg_dump --schema takes a pattern: in double quotes a name is exact */
		size_t		n = strlen(M.schema),
					o = 0;

		M.pattern = malloc(2 * n + 3);
		M.pattern[o++] = '"';
		for (i = 0; i < (int) n; i++)
		{
			if (M.schema[i] == '"')
				M.pattern[o++] = '"';
			M.pattern[o++] = M.schema[i];
		}
		M.pattern[o++] = '"';
		M.pattern[o] = '\0';
	}
	res = query(&M.from,
				"SELECT n.oid, pg_catalog.pg_get_userbyid(n.nspowner) "
				"FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::name",
				1, M.schema);
	if (res == NULL)
		fail("could not read schema \"%s\" on the --from server: %s", M.schema, db_error());
	if (PQntuples(res) == 0)
		fail("schema \"%s\" of shard %d does not exist on the --from server", M.schema, M.shard);
	M.src_schema_oid = xstrdup(PQgetvalue(res, 0, 0));
	M.owner = xstrdup(PQgetvalue(res, 0, 1));
	PQclear(res);

	res = query(&M.from,
				"SELECT c.relname, c.relkind, GREATEST(c.reltuples, 0)::bigint "
				"FROM pg_catalog.pg_class c WHERE c.relnamespace = $1::oid AND c.relkind IN ('r', 'p') "
				"ORDER BY c.relname",
				1, M.src_schema_oid);
	if (res == NULL)
		fail("could not list the tables of schema \"%s\": %s", M.schema, db_error());
	M.ntables = PQntuples(res);
	M.tables = calloc(M.ntables + 1, sizeof(Table));
	for (i = 0; i < M.ntables; i++)
	{
		char	   *qt = quote_ident(&M.from, PQgetvalue(res, i, 0));

		M.tables[i].name = xstrdup(PQgetvalue(res, i, 0));
		M.tables[i].qname = xprintf("%s.%s", M.qschema, qt);
		M.tables[i].kind = PQgetvalue(res, i, 1)[0];
		M.tables[i].estimate = atoll(PQgetvalue(res, i, 2));
		free(qt);
	}
	PQclear(res);

	res = query(&M.from,
				"SELECT c.relname FROM pg_catalog.pg_class c "
				"WHERE c.relnamespace = $1::oid AND c.relkind = 'S' ORDER BY c.relname",
				1, M.src_schema_oid);
	if (res == NULL)
		fail("could not list the sequences of schema \"%s\": %s", M.schema, db_error());
	M.nseqs = PQntuples(res);
	M.seqs = calloc(M.nseqs + 1, sizeof(Seq));
	for (i = 0; i < M.nseqs; i++)
	{
		char	   *qn = quote_ident(&M.from, PQgetvalue(res, i, 0));

		M.seqs[i].name = xstrdup(PQgetvalue(res, i, 0));
		M.seqs[i].qname = xprintf("%s.%s", M.qschema, qn);
		free(qn);
	}
	PQclear(res);
}

/* row counts of the shard's tables on a server; false on error */
static bool
count_rows(Server *s, long long *counts)
{
	int			i;

	for (i = 0; i < M.ntables; i++)
	{
		char	   *sql,
				   *v = NULL;
		bool		ok;

		counts[i] = 0;
		if (M.tables[i].kind != 'r')
			continue;
		sql = xprintf("SELECT pg_catalog.count(*) FROM %s", M.tables[i].qname);
		ok = get_value(s, &v, sql, 0);
		free(sql);
		if (!ok)
			return false;
		counts[i] = atoll(v);
		free(v);
	}
	return true;
}

/* "last_value is_called" of each sequence */
static bool
sequence_positions(Server *s, char **pos)
{
	int			i;

	for (i = 0; i < M.nseqs; i++)
	{
		char	   *sql = xprintf("SELECT last_value::text || ' ' || is_called::text FROM %s", M.seqs[i].qname);
		bool		ok = get_value(s, &pos[i], sql, 0);

		free(sql);
		if (!ok)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* progress of a COPY (pg_dump, pg_restore, table sync)				  */
/* ------------------------------------------------------------------ */

typedef struct CopyProgress
{
	Server	   *server;
	const char *label;
	const char *command;		/* 'COPY TO' or 'COPY FROM' */
	double		started;
	long long	total;
	const char *extra;
	/* on the target, tables restored in an uncommitted transaction: by relid */
	bool		by_relid;
	int			nrel;
	char		relid[64][12];
	long long	reldone[64];
} CopyProgress;

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
			if (i == cp->nrel && cp->nrel < 64)
				snprintf(cp->relid[cp->nrel++], sizeof(cp->relid[0]), "%s", PQgetvalue(res, r, 0));
			if (i < 64)
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

static void
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

static void
copy_progress_reset(void)
{
	int			i;

	for (i = 0; i < M.ntables; i++)
	{
		M.tables[i].seen = 0;
		M.tables[i].copied = 0;
	}
}

/* ------------------------------------------------------------------ */
/* children: pg_dump and pg_restore									  */
/* ------------------------------------------------------------------ */

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

/*
 * Dump the schema (data too unless schema_only), restore it into the empty
 * schema this move created on the target, in one transaction.
 */
static void
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

			if (line[0] != ';' && p && strncmp(p + 2, skip, strlen(skip)) == 0)
				fprintf(out, ";%s", line);
			else
				fputs(line, out);
		}
		free(skip);
	}
	fclose(in);
	fclose(out);

	pause_point("restore");
	check_interrupt();
	{
		const char *argv[] = {M.pg_restore, "--single-transaction", "--exit-on-error",
		list_arg, to_db, dump, NULL};

		cp.server = &M.to;
		cp.label = "copy, writing to the --to server";
		cp.command = "COPY FROM";
		cp.by_relid = true;
		run_child(argv, NULL, schema_only ? NULL : &cp, "pg_restore into the --to server", to_pw);
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
static void
target_fresh_schema(void)
{
	char	   *sql;
	char	   *qowner = quote_ident(&M.to, M.owner);
	bool		ok;
	char	   *oid = NULL;
	char	   *old = NULL;

	need(&M.to);
	if (!drop_subscription())
		fail("could not drop subscription %s on the --to server: %s", M.name, db_error());
	sql = xprintf("CREATE SCHEMA %s AUTHORIZATION %s", M.qschema, qowner);
	ok = tx_begin(&M.to);
	if (ok && M.dst_schema_oid)
	{
		ok = get_value(&M.to, &old, "SELECT nspname FROM pg_catalog.pg_namespace WHERE oid = $1::oid",
					   1, M.dst_schema_oid);
		if (ok && old)
		{
			char	   *q = quote_ident(&M.to, old);
			char	   *drop = xprintf("DROP SCHEMA %s CASCADE", q);

			ok = exec_sql(&M.to, drop, 0);
			free(drop);
			free(q);
		}
	}
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
static void
step_copy_offline(void)
{
	long long  *counts = calloc(M.ntables + 1, sizeof(long long));
	int			i;
	double		t = now_seconds();
	char		a[32];

	M.step = "the copy";
	check_interrupt();
	target_fresh_schema();
	need(&M.from);
	if (!count_rows(&M.from, counts))
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

/* ------------------------------------------------------------------ */
/* online: publication, subscription, catch-up						  */
/* ------------------------------------------------------------------ */

static bool
publish_tx(Server *s)
{
	char	   *pub = NULL;
	bool		ok;

	ok = journal_write(s, "source", "publishing") &&
		get_value(s, &pub, "SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = $1::name", 1, M.name);
	if (ok && pub == NULL)
	{
		char	   *qpub = quote_ident(s, M.name);
		char	   *sql = xprintf("CREATE PUBLICATION %s FOR TABLES IN SCHEMA %s", qpub, M.qschema);

		ok = exec_sql(s, sql, 0);
		free(sql);
		free(qpub);
	}
	free(pub);
	return ok;
}

/* source: the publication of the schema and the replication slot */
static void
step_publish(void)
{
	char	   *slot = NULL;

	M.step = "the publication";
	check_interrupt();
	need(&M.from);
	if (!tx_begin(&M.from) || !publish_tx(&M.from) || !commit(&M.from))
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.from);
		fail("could not publish schema \"%s\" on the --from server: %s", M.schema, why);
	}
	M.changed = true;
	if (!get_value(&M.from, &slot, "SELECT slot_name FROM pg_catalog.pg_replication_slots WHERE slot_name = $1::name",
				   1, M.name))
		fail("could not read the replication slots of the --from server: %s", db_error());
	if (slot == NULL &&
		!exec_sql(&M.from, "SELECT pg_catalog.pg_create_logical_replication_slot($1::name, 'pgoutput')", 1, M.name))
		fail("could not create replication slot \"%s\" on the --from server: %s", M.name, db_error());
	free(slot);
	say("publication and replication slot %s created on the --from server", M.name);
}

static bool
subscribe_tx(Server *s)
{
	char	   *conn = source_conninfo_for_target();
	char	   *lconn = quote_literal(s, conn);
	char	   *qsub = quote_ident(s, M.name);
	char	   *lslot = quote_literal(s, M.name);
	char	   *sql = xprintf("CREATE SUBSCRIPTION %s CONNECTION %s PUBLICATION %s "
							  "WITH (create_slot = false, slot_name = %s, copy_data = true)",
							  qsub, lconn, qsub, lslot);
	char	   *oid = NULL;
	bool		ok;

	ok = freeze_tables(s) &&
		exec_sql(s, sql, 0) &&
		get_value(s, &oid,
				  "SELECT oid FROM pg_catalog.pg_subscription WHERE subname = $1::name AND subdbid = "
				  "(SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())",
				  1, M.name) &&
		journal_write(s, "target", "replicating") &&
		exec_sql(s, "UPDATE shardid.move_journal SET subscription_oid = $1::oid "
				 "WHERE move_id = $2 AND side = 'target'", 2, oid, M.move_id);
	if (ok)
		M.sub_oid = oid;
	free(conn);
	free(lconn);
	free(qsub);
	free(lslot);
	free(sql);
	return ok;
}

/* target: the definitions, frozen, and a subscription filling them */
static void
copy_online(void)
{
	M.step = "the copy";
	check_interrupt();
	target_fresh_schema();
	say("copying the definitions of schema \"%s\" (%s, %s)", M.schema, count_of(M.ntables, "table", "tables"),
		count_of(M.nseqs, "sequence", "sequences"));
	copy_schema(true);
	check_interrupt();
	need(&M.to);
	if (!tx_begin(&M.to) || !subscribe_tx(&M.to) || !commit(&M.to))
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.to);
		fail("could not subscribe the --to server to the --from server: %s", why);
	}
	need(&M.from);
	if (!exec_sql(&M.from, "UPDATE shardid.move_journal SET subscription_oid = $1::oid, updated_at = pg_catalog.now() "
				  "WHERE move_id = $2 AND side = 'source'", 2, M.sub_oid, M.move_id))
		fail("could not record the subscription on the --from server: %s", db_error());
	say("replicating schema \"%s\" while the --from server takes writes", M.schema);
}

static void
step_copy_online(void)
{
	copy_online();
	pause_point("copy");
	check_interrupt();
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
orphaned_syncs(void)
{
	char	   *copied = NULL;
	char	   *orphans = NULL;

	if (!get_value(&M.to, &copied,
				   "SELECT pg_catalog.string_agg(srrelid::text, ',' ORDER BY srrelid) "
				   "FROM pg_catalog.pg_subscription_rel WHERE srsubid = $1::oid AND srsubstate = 'f'",
				   1, M.sub_oid) || copied == NULL)
		return NULL;
	need(&M.from);
	if (!get_value(&M.from, &orphans,
				   "SELECT pg_catalog.string_agg(r, ',' ORDER BY r::oid) "
				   "FROM pg_catalog.unnest(pg_catalog.string_to_array($2, ',')) AS r "
				   "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_slots "
				   "WHERE pg_catalog.starts_with(slot_name::text, 'pg_' || $1 || '_sync_' || r || '_'))",
				   2, M.sub_oid, copied))
		orphans = NULL;
	free(copied);
	return orphans;
}

/* the subscription dropped with its slots, and the initial copy begun again */
static void
copy_online_again(void)
{
	need(&M.to);
	if (!drop_subscription())
		fail("could not drop subscription %s on the --to server: %s", M.name, db_error());
	need(&M.from);
	if (!drop_slots(true))
		fail("could not drop the replication slots of the move on the --from server: %s", db_error());
	M.sub_oid = NULL;
	step_publish();
	copy_online();
}

#define SYNC_CHECK_S 5.0		/* seconds between two looks for orphaned syncs */
#define SYNC_AGAIN_MAX 3		/* initial copies begun again, at most */

/* wait until every table of the subscription finished its initial copy */
static void
step_wait_sync(void)
{
	double		deadline = now_seconds() + M.timeout;
	CopyProgress cp = {0};
	long long	total = 0;
	int			i;
	int			again = 0;
	double		checked = now_seconds();
	char	   *suspects = NULL;

	M.step = "the initial copy";
	for (i = 0; i < M.ntables; i++)
		if (M.tables[i].kind == 'r')
			total += M.tables[i].estimate;
	cp.server = &M.to;
	cp.label = "initial copy";
	cp.command = "COPY FROM";
	cp.total = total;
	cp.started = now_seconds();
	copy_progress_reset();
	for (;;)
	{
		PGresult   *res;
		long		pending,
					all;
		static char extra[64];

		check_interrupt();
		need(&M.to);
		res = query(&M.to,
					"SELECT pg_catalog.count(*) FILTER (WHERE srsubstate <> 'r'), pg_catalog.count(*) "
					"FROM pg_catalog.pg_subscription_rel WHERE srsubid = $1::oid",
					1, M.sub_oid);
		if (res == NULL)
		{
			nap(200);
			continue;
		}
		pending = atol(PQgetvalue(res, 0, 0));
		all = atol(PQgetvalue(res, 0, 1));
		PQclear(res);
		if (pending == 0)
			break;
		if (now_seconds() > deadline)
		{
			char	   *errors = NULL;

			get_value(&M.to, &errors,
					  "SELECT sync_error_count::text FROM pg_catalog.pg_stat_subscription_stats WHERE subid = $1::oid",
					  1, M.sub_oid);
			fail("the initial copy did not finish within %d s (%ld of %ld tables ready, %s sync errors; "
				 "see the --to server's log)", M.timeout, all - pending, all, errors ? errors : "no count of");
		}
		/* an orphaned sync, seen twice SYNC_CHECK_S apart: copy again */
		if (now_seconds() - checked >= SYNC_CHECK_S)
		{
			char	   *orphans = orphaned_syncs();

			checked = now_seconds();
			if (orphans && suspects && strcmp(orphans, suspects) == 0)
			{
				progress_end();
				if (++again > SYNC_AGAIN_MAX)
					fail("the initial copy of table oid %s on the --to server cannot end: its sync slot is gone "
						 "from the --from server, %d times over", orphans, SYNC_AGAIN_MAX);
				warning_msg("the --to server keeps table oid %s copied but not synchronized, and its sync slot "
							"is gone from the --from server (the --to server stopped as the sync ended): "
							"starting the initial copy again", orphans);
				free(orphans);
				orphans = NULL;
				copy_online_again();
				M.step = "the initial copy";
				deadline = now_seconds() + M.timeout;
				copy_progress_reset();
				cp.started = now_seconds();
			}
			free(suspects);
			suspects = orphans;
		}
		snprintf(extra, sizeof(extra), ", %ld of %ld tables ready", all - pending, all);
		cp.extra = extra;
		copy_progress_tick(&cp);
		nap(100);
	}
	free(suspects);
	progress_end();
	say("initial copy done");
}

/* every change of the frozen source applied on the target */
static void
step_catch_up(void)
{
	char	   *lsn = NULL;
	double		deadline = now_seconds() + M.timeout;
	double		started = now_seconds();

	M.step = "the catch-up";
	need(&M.from);
	if (!get_value(&M.from, &lsn, "SELECT pg_catalog.pg_current_wal_lsn()::text", 0))
		fail("could not read the WAL position of the --from server: %s", db_error());
	for (;;)
	{
		char	   *lag = NULL;
		PGresult   *res;

		check_interrupt();
		need(&M.from);
		res = query(&M.from,
					"SELECT confirmed_flush_lsn >= $1::pg_lsn, "
					"pg_catalog.pg_wal_lsn_diff($1::pg_lsn, confirmed_flush_lsn)::bigint "
					"FROM pg_catalog.pg_replication_slots WHERE slot_name = $2::name",
					2, lsn, M.name);
		if (res == NULL)
		{
			nap(200);
			continue;
		}
		if (PQntuples(res) == 0)
		{
			PQclear(res);
			fail("replication slot \"%s\" disappeared from the --from server", M.name);
		}
		if (is(PQgetvalue(res, 0, 0), "t"))
		{
			PQclear(res);
			break;
		}
		lag = xstrdup(PQgetvalue(res, 0, 1));
		PQclear(res);
		if (now_seconds() > deadline)
			fail("the --to server did not catch up within %d s (%s bytes behind)", M.timeout, lag);
		{
			char		b[32];

			progress("catching up: %s behind, waiting %.0f s",
					 fmt_bytes(b, sizeof(b), atof(lag[0] ? lag : "0")), now_seconds() - started);
		}
		free(lag);
		nap(50);
	}
	progress_end();
	say("the --to server caught up with the --from server (WAL %s)", lsn);
	pause_point("catch-up");
	check_interrupt();
}

/* target: drop the subscription (never its slot through the --to server) */
static bool
drop_subscription(void)
{
	char	   *sub = NULL;
	char	   *qsub;
	bool		ok;

	if (!get_value(&M.to, &sub,
				   "SELECT subname FROM pg_catalog.pg_subscription WHERE subname = $1::name AND subdbid = "
				   "(SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())",
				   1, M.name))
		return false;
	if (sub == NULL)
		return true;
	qsub = quote_ident(&M.to, sub);
	{
		char	   *a = xprintf("ALTER SUBSCRIPTION %s DISABLE", qsub);
		char	   *b = xprintf("ALTER SUBSCRIPTION %s SET (slot_name = NONE)", qsub);
		char	   *c = xprintf("DROP SUBSCRIPTION %s", qsub);

		ok = exec_sql(&M.to, a, 0) && exec_sql(&M.to, b, 0) && exec_sql(&M.to, c, 0);
		free(a);
		free(b);
		free(c);
	}
	free(qsub);
	free(sub);
	return ok;
}

/* source: drop the move's replication slots, stopping their senders */
static bool
drop_slots(bool main_slot)
{
	double		deadline = now_seconds() + 15;

	for (;;)
	{
		PGresult   *res = query(&M.from,
								"SELECT slot_name, active_pid FROM pg_catalog.pg_replication_slots "
								"WHERE (slot_name = $1 AND $3) OR ($2::text IS NOT NULL AND "
								"pg_catalog.starts_with(slot_name::text, 'pg_' || $2 || '_sync_'))",
								3, M.name, M.sub_oid, main_slot ? "true" : "false");
		int			i,
					n;

		if (res == NULL)
			return false;
		n = PQntuples(res);
		for (i = 0; i < n; i++)
		{
			const char *slot = PQgetvalue(res, i, 0);

			if (!PQgetisnull(res, i, 1))
				exec_sql(&M.from, "SELECT pg_catalog.pg_terminate_backend($1::integer)", 1, PQgetvalue(res, i, 1));
			else
				exec_sql(&M.from, "SELECT pg_catalog.pg_drop_replication_slot($1::name)", 1, slot);
		}
		PQclear(res);
		if (n == 0)
			return true;
		if (now_seconds() > deadline)
			return false;
		nap_always(100);
	}
}

/* source: publication and slots gone */
static bool
unpublish(void)
{
	char	   *qpub = quote_ident(&M.from, M.name);
	char	   *sql = xprintf("DROP PUBLICATION IF EXISTS %s", qpub);
	bool		ok = drop_slots(true) && exec_sql(&M.from, sql, 0);

	free(sql);
	free(qpub);
	return ok;
}

/* sequences to the target, then the replication removed */
static void
step_carry_sequences(void)
{
	int			i;
	char	  **pos = calloc(M.nseqs + 1, sizeof(char *));
	bool		ok;

	M.step = "the cutover";
	check_interrupt();
	need(&M.from);
	need(&M.to);
	if (!sequence_positions(&M.from, pos))
		fail("could not read the sequences on the --from server: %s", db_error());
	ok = tx_begin(&M.to);
	for (i = 0; ok && i < M.nseqs; i++)
	{
		char	   *last = xstrdup(pos[i]);
		char	   *called = strchr(last, ' ');

		*called++ = '\0';
		ok = exec_sql(&M.to, "SELECT pg_catalog.setval($1::pg_catalog.regclass, $2::bigint, $3::boolean)",
					  3, M.seqs[i].qname, last, called);
		free(last);
	}
	ok = ok && journal_write(&M.to, "target", "caught-up") && commit(&M.to);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.to);
		fail("could not carry the sequences to the --to server: %s", why);
	}
	say("%s carried to the --to server", count_of(M.nseqs, "sequence position", "sequence positions"));
	if (!drop_subscription())
		fail("could not drop subscription %s on the --to server: %s", M.name, db_error());
	if (!unpublish())
		fail("could not drop the publication and replication slot %s on the --from server: %s", M.name, db_error());
	say("subscription, publication and replication slot %s dropped", M.name);
}

/* ------------------------------------------------------------------ */
/* verify, cutover, finish											  */
/* ------------------------------------------------------------------ */

static void
step_verify(void)
{
	long long  *a = calloc(M.ntables + 1, sizeof(long long));
	long long  *b = calloc(M.ntables + 1, sizeof(long long));
	char	  **pa = calloc(M.nseqs + 1, sizeof(char *));
	char	  **pb = calloc(M.nseqs + 1, sizeof(char *));
	int			i;
	long long	rows = 0;
	char		buf[32];

	M.step = "the verification";
	pause_point("verify");
	check_interrupt();
	need(&M.from);
	need(&M.to);
	if (!count_rows(&M.from, a))
		fail("could not count rows on the --from server: %s", db_error());
	if (!count_rows(&M.to, b))
		fail("could not count rows on the --to server: %s", db_error());
	for (i = 0; i < M.ntables; i++)
	{
		M.tables[i].rows = a[i];
		rows += a[i];
		if (a[i] != b[i])
			fail("table %s has %lld rows on the --from server but %lld on the --to server",
				 M.tables[i].qname, a[i], b[i]);
	}
	if (!sequence_positions(&M.from, pa))
		fail("could not read the sequences on the --from server: %s", db_error());
	if (!sequence_positions(&M.to, pb))
		fail("could not read the sequences on the --to server: %s", db_error());
	for (i = 0; i < M.nseqs; i++)
		if (!is(pa[i], pb[i]))
			fail("sequence %s is at %s on the --from server but at %s on the --to server",
				 M.seqs[i].qname, pa[i], pb[i]);
	M.rows_total = rows;
	if (!journal_write(&M.to, "target", "verified"))
		fail("could not record the verification on the --to server: %s", db_error());
	say("verified: the row counts of %s (%s rows) and %s match", count_of(M.ntables, "table", "tables"),
		fmt_count(buf, sizeof(buf), rows), count_of(M.nseqs, "sequence position", "sequence positions"));
	free(a);
	free(b);
}

/* the target's clock past the newest id of the shard */
static void
wait_clock(void)
{
	PGresult   *res;
	char	   *sql = NULL,
			   *newest = NULL;
	int			i;
	double		deadline = now_seconds() + M.timeout;

	res = query(&M.to, "SELECT table_name, column_name FROM shardid.id_defaults WHERE schema_name = $1::name",
				1, M.schema);
	if (res == NULL)
		fail("could not read the id columns of schema \"%s\" on the --to server: %s", M.schema, db_error());
	for (i = 0; i < PQntuples(res); i++)
	{
		char	   *qt = quote_ident(&M.to, PQgetvalue(res, i, 0));
		char	   *qc = quote_ident(&M.to, PQgetvalue(res, i, 1));
		char	   *part = xprintf("SELECT shardid.id_millis(pg_catalog.max(%s)) FROM %s.%s", qc, M.qschema, qt);
		char	   *joined = sql ? xprintf("%s UNION ALL %s", sql, part) : xstrdup(part);

		free(sql);
		sql = joined;
		free(part);
		free(qt);
		free(qc);
	}
	PQclear(res);
	if (sql == NULL)
		return;
	{
		char	   *full = xprintf("SELECT pg_catalog.max(m)::text FROM (%s) v(m)", sql);

		if (!get_value(&M.to, &newest, full, 0))
			fail("could not find the newest id of shard %d: %s", M.shard, db_error());
		free(full);
		free(sql);
	}
	if (newest == NULL)
		return;
	for (;;)
	{
		char	   *behind = NULL;

		check_interrupt();
		if (!get_value(&M.to, &behind,
					   "SELECT ($1::bigint - (pg_catalog.floor(EXTRACT(epoch FROM pg_catalog.clock_timestamp()) * 1000)::bigint "
					   "- (SELECT epoch_ms FROM shardid.info())))::text",
					   1, newest))
			fail("could not read the clock of the --to server: %s", db_error());
		if (atoll(behind) < 0)
		{
			free(behind);
			break;
		}
		if (now_seconds() > deadline)
			fail("the --to server's clock is %s ms behind the newest id of shard %d", behind, M.shard);
		progress("waiting for the --to server's clock to pass the newest id: %s ms to go", behind);
		nap(atoll(behind) > 100 ? 100 : (int) atoll(behind) + 1);
		free(behind);
	}
	progress_end();
	say("the --to server's clock is past the newest id of shard %d: its ids sort after all of them", M.shard);
}

/* target: one transaction lets the copy take writes and registers the shard */
static void
step_cutover(void)
{
	bool		ok;

	M.step = "the cutover";
	check_interrupt();
	need(&M.to);
	wait_clock();
	check_interrupt();
	need(&M.from);
	if (!journal_write(&M.from, "source", "handing-over"))
		fail("could not record the hand-over on the --from server: %s", db_error());
	pause_point("handover");
	check_interrupt();
	need(&M.to);
	ok = tx_begin(&M.to) && unfreeze_tables(&M.to, M.schema);
	if (ok && M.has_registry)
		ok = exec_sql(&M.to, "SELECT shardid.register_shard($1::integer, $2::name)", 2, M.shard_s, M.schema);
	ok = ok && journal_write(&M.to, "target", "cut-over") && commit(&M.to);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.to);
		fail("could not register shard %d on the --to server: %s", M.shard, why);
	}
	M.past_no_return = true;
	say("cut over: shard %d is registered on the --to server, which takes its writes", M.shard);
	pause_point("cutover");
	check_interrupt();
}

/* source: unregister the shard, keep the frozen copy; target: done */
static void
step_finish(void)
{
	bool		ok;

	M.step = "the end of the move";
	need(&M.from);
	ok = tx_begin(&M.from);
	if (ok && M.has_registry)
		ok = exec_sql(&M.from, "SELECT shardid.unregister_shard($1::integer)", 1, M.shard_s);
	ok = ok && journal_write(&M.from, "source", "moved-away") && commit(&M.from);
	if (!ok)
	{
		char	   *why = xstrdup(db_error());

		rollback(&M.from);
		fail("could not unregister shard %d on the --from server: %s", M.shard, why);
	}
	need(&M.to);
	if (!journal_write(&M.to, "target", "done"))
		fail("could not record the end of the move on the --to server: %s", db_error());
	say("shard %d now lives on the --to server: route it there", M.shard);
}

/* ------------------------------------------------------------------ */
/* undo																  */
/* ------------------------------------------------------------------ */

/* target: subscription, the schema this move created, journal aborted */
static bool
undo_target(void)
{
	bool		ok;
	char	   *name = NULL;

	JournalRow	j;

	M.dst_known = false;
	if (M.to.conn == NULL || !server_ensure(&M.to, 5))
	{
		if (M.dst_phase[0] == '\0' || is(M.dst_phase, "aborted"))
			return true;
		error_msg("could not reach the --to server to undo its part: %s", db_error());
		return false;
	}
	rollback(&M.to);
	/* what the journal there says, not what this run believes it committed */
	if (M.move_id && journal_by_id(&M.to, M.move_id, "target", &j))
	{
		M.dst_known = true;
		set_phase(M.dst_phase, j.found ? j.phase : "");
		if (j.found)
		{
			M.dst_schema_oid = j.schema_oid;
			if (j.sub_oid)
				M.sub_oid = j.sub_oid;
		}
	}
	if (M.dst_phase[0] == '\0' || is(M.dst_phase, "aborted"))
		return true;
	if (target_rank(M.dst_phase) >= RANK_CUT_OVER)
		return false;
	ok = drop_subscription();
	if (!ok)
		error_msg("could not drop subscription %s on the --to server: %s", M.name, db_error());
	ok = ok && tx_begin(&M.to);
	if (ok && M.dst_schema_oid)
	{
		ok = get_value(&M.to, &name, "SELECT nspname FROM pg_catalog.pg_namespace WHERE oid = $1::oid",
					   1, M.dst_schema_oid);
		if (ok && name)
		{
			char	   *q = quote_ident(&M.to, name);
			char	   *sql = xprintf("DROP SCHEMA %s CASCADE", q);

			ok = exec_sql(&M.to, sql, 0);
			free(sql);
			free(q);
		}
	}
	ok = ok && exec_sql(&M.to,
						"UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
						"WHERE move_id = $1 AND side = 'target'", 1, M.move_id) &&
		commit(&M.to);
	if (!ok)
	{
		error_msg("could not undo the move on the --to server: %s", db_error());
		rollback(&M.to);
		return false;
	}
	set_phase(M.dst_phase, "aborted");
	say("--to server: %s", name ? "the partial copy was dropped" : "nothing was left to drop");
	free(name);
	return true;
}

/* source: writes allowed again, publication and slots dropped, journal aborted */
static bool
undo_source(void)
{
	bool		ok;

	JournalRow	j;

	if (M.from.conn == NULL || !server_ensure(&M.from, 5))
	{
		if (M.src_phase[0] == '\0' || is(M.src_phase, "aborted"))
			return true;
		error_msg("could not reach the --from server to undo its part: %s", db_error());
		return false;
	}
	rollback(&M.from);
	if (M.move_id && journal_by_id(&M.from, M.move_id, "source", &j))
	{
		set_phase(M.src_phase, j.found ? j.phase : "");
		if (j.found && j.sub_oid && !M.sub_oid)
			M.sub_oid = j.sub_oid;
	}
	if (M.src_phase[0] == '\0' || is(M.src_phase, "aborted"))
		return true;
	if (is(M.src_phase, "moved-away") || is(M.src_phase, "dropped"))
		return false;
	if (is(M.src_phase, "handing-over") && (!M.dst_known || target_rank(M.dst_phase) >= RANK_CUT_OVER))
	{
		error_msg("the --from server's part is not undone: %s",
				  M.dst_known ? "the --to server took the shard over" :
				  "only the --to server knows whether it took the shard over, and it did not answer");
		return false;
	}
	if (!drop_slots(true))
	{
		error_msg("could not drop the replication slots of the move on the --from server: %s", db_error());
		return false;
	}
	{
		char	   *qpub = quote_ident(&M.from, M.name);
		char	   *sql = xprintf("DROP PUBLICATION IF EXISTS %s", qpub);

		ok = tx_begin(&M.from) &&
			unfreeze_tables(&M.from, M.schema) &&
			exec_sql(&M.from, sql, 0) &&
			exec_sql(&M.from,
					 "UPDATE shardid.move_journal SET phase = 'aborted', updated_at = pg_catalog.now() "
					 "WHERE move_id = $1 AND side = 'source'", 1, M.move_id) &&
			commit(&M.from);
		free(sql);
		free(qpub);
	}
	if (!ok)
	{
		error_msg("could not undo the move on the --from server: %s", db_error());
		rollback(&M.from);
		return false;
	}
	set_phase(M.src_phase, "aborted");
	say("--from server: shard %d takes writes again", M.shard);
	return true;
}

/* ------------------------------------------------------------------ */
/* checks before anything changes									  */
/* ------------------------------------------------------------------ */

/* --abort: undo what can be undone on the server that answers */
static void
connect_for_abort(void)
{
	Server	   *s[] = {&M.from, &M.to};
	int			i,
				up = 0;

	for (i = 0; i < 2; i++)
	{
		if (server_connect(s[i]))
			up++;
		else
			warning_msg("cannot connect to the %s server: %s", s[i]->option, db_error());
	}
	if (up == 0)
	{
		error_msg("neither server answers: nothing can be undone");
		finish(EXIT_UNFINISHED, "unfinished");
	}
}

static void
connect_both(void)
{
	Server	   *s[] = {&M.from, &M.to};
	int			i;

	for (i = 0; i < 2; i++)
	{
		if (!server_connect(s[i]))
		{
			error_msg("cannot connect to the %s server: %s", s[i]->option, db_error());
			finish(EXIT_FAILED, "failed");
		}
	}
}

static void
refuse(const char *fmt,...) PRINTF_LIKE(1, 2) NORETURN;

static void
refuse(const char *fmt,...)
{
	va_list		ap;
	char		buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	M.error_text = xstrdup(buf);
	error_msg("%s", buf);
	finish(EXIT_FAILED, "refused");
}

/* what both servers must offer for any run */
static void
check_servers(void)
{
	Server	   *s[] = {&M.from, &M.to};
	char	   *epoch[2] = {NULL, NULL};
	char	   *ident[2] = {NULL, NULL};
	int			i;

	for (i = 0; i < 2; i++)
	{
		char	   *v = NULL;
		const char *su = PQparameterStatus(s[i]->conn, "is_superuser");

		if (!is(su, "on"))
			refuse("shardid-move must connect to the %s server as a superuser (it writes the move journal, "
				   "freezes other roles' tables and manages replication)", s[i]->option);
		if (!get_value(s[i], &v, "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'shardid'", 0))
			refuse("could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse("shardid is not installed in the %s database (%s); run CREATE EXTENSION shardid there",
				   s[i]->option, s[i]->where);
		if (!get_value(s[i], &v, "SELECT pg_catalog.to_regclass('shardid.move_journal')::text", 0))
			refuse("could not query the %s server: %s", s[i]->option, db_error());
		if (v == NULL)
			refuse("shardid on the %s server has no move journal; run ALTER EXTENSION shardid UPDATE there",
				   s[i]->option);
		if (PQserverVersion(s[i]->conn) / 10000 > PQlibVersion() / 10000)
			refuse("the %s server runs PostgreSQL %d, newer than this shardid-move's pg_dump (%d)",
				   s[i]->option, PQserverVersion(s[i]->conn) / 10000, PQlibVersion() / 10000);
		if (!get_value(s[i], &epoch[i], "SELECT epoch_ms::text FROM shardid.info()", 0))
			refuse("could not read shardid.info() on the %s server: %s", s[i]->option, db_error());
		if (!get_value(s[i], &ident[i],
					   "SELECT system_identifier::text || '/' || pg_catalog.current_database() "
					   "FROM pg_catalog.pg_control_system()", 0))
			refuse("could not identify the %s server: %s", s[i]->option, db_error());
	}
	if (is(ident[0], ident[1]))
		refuse("--from and --to name the same database");
	if (!is(epoch[0], epoch[1]))
		refuse("shardid.epoch differs: %s on the --from server, %s on the --to server; "
			   "ids would decode wrongly on one of them", epoch[0], epoch[1]);
	{
		char	   *v = NULL;

		if (!get_value(&M.from, &v, "SELECT pg_catalog.to_regclass('shardid.shard_registry')::text", 0))
			refuse("could not query the --from server: %s", db_error());
		M.has_registry = v != NULL;
		if (!M.has_registry)
			refuse("shardid on the --from server has no shard registry; run ALTER EXTENSION shardid UPDATE there");
	}
}

/* a new move: everything is checked before anything changes */
static void
check_new_move(void)
{
	char	   *v = NULL;
	char	   *max_shard = NULL;

	if (!get_value(&M.from, &max_shard, "SELECT max_shard::text FROM shardid.info()", 0))
		refuse("could not read shardid.info(): %s", db_error());
	if (M.shard > atoi(max_shard))
		refuse("shard %d is out of range: a shard must be between 0 and %s", M.shard, max_shard);

	if (M.has_registry)
	{
		if (!get_value(&M.from, &M.schema, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
					   1, M.shard_s))
			refuse("could not read the shard registry of the --from server: %s", db_error());
	}
	else if (!get_value(&M.from, &M.schema, "SELECT shardid.shard_schema($1::integer)", 1, M.shard_s))
		refuse("could not find shard %d on the --from server: %s", M.shard, db_error());
	if (M.schema == NULL)
		refuse("shard %d does not live in the --from database (see SELECT * FROM shardid.shards there)", M.shard);

	if (M.has_registry)
	{
		if (!get_value(&M.to, &v, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
					   1, M.shard_s))
			refuse("could not read the shard registry of the --to server: %s", db_error());
	}
	else if (!get_value(&M.to, &v, "SELECT shardid.shard_schema($1::integer)", 1, M.shard_s))
		refuse("could not query the --to server: %s", db_error());
	if (v != NULL)
		refuse("shard %d already lives on the --to server (schema \"%s\"); nothing was changed", M.shard, v);
	if (!get_value(&M.to, &v, "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = $1::name", 1, M.schema))
		refuse("could not query the --to server: %s", db_error());
	if (v != NULL)
		refuse("schema \"%s\" already exists on the --to server; nothing was changed", M.schema);

	inspect_source();

	/* every role owning something in the schema exists on the target */
	{
		PGresult   *res = query(&M.from,
								"SELECT pg_catalog.array_agg(DISTINCT r)::text FROM ("
								" SELECT pg_catalog.pg_get_userbyid(nspowner) FROM pg_catalog.pg_namespace WHERE oid = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(relowner) FROM pg_catalog.pg_class WHERE relnamespace = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(proowner) FROM pg_catalog.pg_proc WHERE pronamespace = $1::oid"
								" UNION SELECT pg_catalog.pg_get_userbyid(typowner) FROM pg_catalog.pg_type WHERE typnamespace = $1::oid"
								") o(r)",
								1, M.src_schema_oid);
		char	   *missing = NULL;

		if (res == NULL)
			refuse("could not read the owners in schema \"%s\": %s", M.schema, db_error());
		if (!get_value(&M.to, &missing,
					   "SELECT pg_catalog.string_agg(r, ', ') FROM pg_catalog.unnest($1::text[]) r "
					   "WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r)",
					   1, PQgetvalue(res, 0, 0)))
			refuse("could not read the roles of the --to server: %s", db_error());
		PQclear(res);
		if (missing)
			refuse("roles owning objects of schema \"%s\" do not exist on the --to server: %s", M.schema, missing);
	}

	if (M.online)
	{
		char	   *bad = NULL;
		char	   *free_slots = NULL;

		if (!get_value(&M.from, &v, "SELECT pg_catalog.current_setting('wal_level')", 0))
			refuse("could not query the --from server: %s", db_error());
		if (!is(v, "logical"))
			refuse("--online needs wal_level = logical on the --from server (it is %s); nothing was changed", v);
		if (!get_value(&M.from, &bad,
					   "SELECT pg_catalog.string_agg(pg_catalog.quote_ident(c.relname), ', ') FROM pg_catalog.pg_class c "
					   "WHERE c.relnamespace = $1::oid AND c.relkind = 'r' AND (c.relreplident = 'n' OR "
					   "(c.relreplident = 'd' AND NOT EXISTS (SELECT FROM pg_catalog.pg_index i "
					   " WHERE i.indrelid = c.oid AND i.indisprimary)))",
					   1, M.src_schema_oid))
			refuse("could not query the --from server: %s", db_error());
		if (bad)
			refuse("--online cannot carry updates and deletes of tables without a primary key or replica identity: %s",
				   bad);
		if (!get_value(&M.from, &free_slots,
					   "SELECT (pg_catalog.current_setting('max_replication_slots')::integer - "
					   "(SELECT pg_catalog.count(*) FROM pg_catalog.pg_replication_slots))::text", 0))
			refuse("could not query the --from server: %s", db_error());
		if (atoi(free_slots) < 1 + (M.ntables > 2 ? 2 : M.ntables))
			refuse("--online needs %d free replication slots on the --from server, it has %s (max_replication_slots)",
				   1 + (M.ntables > 2 ? 2 : M.ntables), free_slots);
	}
	if (!get_value(&M.from, &M.move_id, "SELECT pg_catalog.gen_random_uuid()::text", 0))
		refuse("could not make a move id: %s", db_error());
	M.method = M.online ? "online" : "offline";
}

/* ------------------------------------------------------------------ */
/* the journal at start: an unfinished move, abort, resume			  */
/* ------------------------------------------------------------------ */

static JournalRow jsrc,
			jdst;

/* read both journals; true when an unfinished move of the shard exists */
static bool
load_unfinished(void)
{
	JournalRow	a,
				b;

	journal_clear(&a);
	journal_clear(&b);
	if ((M.from.conn && !journal_unfinished(&M.from, &a)) || (M.to.conn && !journal_unfinished(&M.to, &b)))
		refuse("could not read the move journal: %s", db_error());
	if (a.found && !is(a.side, "source"))
		refuse("the --from server records an unfinished move of shard %d to it, started %s: "
			   "give the servers the other way round", M.shard, a.started_at);
	if (b.found && !is(b.side, "target"))
		refuse("the --to server records an unfinished move of shard %d away from it, started %s: "
			   "give the servers the other way round", M.shard, b.started_at);
	if (a.found && b.found && !is(a.move_id, b.move_id))
		refuse("the two servers record different unfinished moves of shard %d (%s on the --from server, "
			   "%s on the --to server); finish or abort each with the server it names (column peer of "
			   "shardid.move_journal)", M.shard, a.move_id, b.move_id);
	if (!a.found && !b.found)
		return false;
	/* the other side's row of the same move, whatever its phase */
	if (!a.found && M.from.conn)
		journal_by_id(&M.from, b.move_id, "source", &a);
	if (!b.found && M.to.conn)
		journal_by_id(&M.to, a.move_id, "target", &b);
	jsrc = a;
	jdst = b;
	{
		const JournalRow *j = b.found ? &b : &a;

		M.move_id = xstrdup(j->move_id);
		M.schema = xstrdup(j->schema);
		M.method = xstrdup(j->method);
		M.online = is(M.method, "online");
	}
	/* "?": the server did not answer, its phase is unknown */
	set_phase(M.src_phase, a.found ? a.phase : M.from.conn ? "" : "?");
	set_phase(M.dst_phase, b.found ? b.phase : M.to.conn ? "" : "?");
	M.dst_schema_oid = b.found ? b.schema_oid : NULL;
	M.sub_oid = b.found && b.sub_oid ? b.sub_oid : (a.found ? a.sub_oid : NULL);
	return true;
}

static void
describe_unfinished(void)
{
	const JournalRow *j = jdst.found ? &jdst : &jsrc;
	char	   *slots;

	error_msg("shard %d has an unfinished %s move (schema \"%s\", started %s by %s)",
			  M.shard, M.method, M.schema, j->started_at, j->started_by);
	if (jsrc.found)
		detail_msg("The --from server records phase \"%s\": %s.", jsrc.phase, source_phase_meaning(jsrc.phase));
	else
		detail_msg("The --from server records nothing of this move.");
	if (jdst.found)
		detail_msg("The --to server records phase \"%s\": %s.", jdst.phase, target_phase_meaning(jdst.phase));
	else
		detail_msg("The --to server records nothing of this move.");
	slots = slots_of_move(&M.from);
	hint_drop_slots(&M.from, slots);
	if (target_rank(M.dst_phase) >= RANK_CUT_OVER)
		hint_msg("Run the same command with --resume to finish the move (it is past the point of no return).");
	else
		hint_msg("Run the same command with --resume to finish the move, or with --abort to undo it.");
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

/* ------------------------------------------------------------------ */
/* the move, from wherever it stands									  */
/* ------------------------------------------------------------------ */

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
			if (is(db_sqlstate(), "23505"))
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
			{
				/* an earlier attempt's subscription and slots go first */
				need(&M.to);
				if (!drop_subscription())
					fail("could not drop subscription %s on the --to server: %s", M.name, db_error());
				need(&M.from);
				if (!drop_slots(true))
					fail("could not drop the replication slots of the move on the --from server: %s", db_error());
				M.sub_oid = NULL;
			}
			step_publish();
			step_copy_online();
		}
		if (rank <= RANK_COPIED)
		{
			if (!is(M.src_phase, "frozen-for-move"))
			{
				step_wait_sync();
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

/* ------------------------------------------------------------------ */
/* --drop-source														  */
/* ------------------------------------------------------------------ */

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
	journal_fill(res, &jsrc);
	PQclear(res);
	if (!jsrc.found)
		refuse("the --from server records no finished move of shard %d away from it: nothing to drop", M.shard);
	M.move_id = jsrc.move_id;
	M.schema = jsrc.schema;
	M.method = jsrc.method;
	set_phase(M.src_phase, jsrc.phase);
	if (!journal_by_id(&M.to, M.move_id, "target", &t))
		refuse("could not read the move journal of the --to server: %s", db_error());
	if (!t.found || !is(t.phase, "done"))
		refuse("the --to server does not record the move of shard %d as done (move %s); the --from server's "
			   "copy is the only sure one", M.shard, M.move_id);
	set_phase(M.dst_phase, t.phase);
	if (M.has_registry)
	{
		if (!get_value(&M.to, &v, "SELECT schema_name FROM shardid.shard_registry WHERE shard = $1::integer",
					   1, M.shard_s))
			refuse("could not read the shard registry of the --to server: %s", db_error());
		if (v == NULL)
			refuse("shard %d is not registered on the --to server; the --from server's copy is kept", M.shard);
	}
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

		ok = tx_begin(&M.from) && exec_sql(&M.from, sql, 0);
		if (ok && M.has_registry)
			ok = exec_sql(&M.from,
						  "SELECT shardid.unregister_shard($1::integer) "
						  "WHERE EXISTS (SELECT FROM shardid.shard_registry WHERE shard = $1::integer "
						  "AND schema_name = $2::name)", 2, M.shard_s, M.schema);
		ok = ok && journal_write(&M.from, "source", "dropped") && commit(&M.from);
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

/* does the --from server hold a finished move of the shard, not dropped yet? */
static bool
moved_away_pending(void)
{
	char	   *v = NULL;

	if (!get_value(&M.from, &v,
				   "SELECT move_id FROM shardid.move_journal WHERE shard = $1::integer AND side = 'source' "
				   "AND phase = 'moved-away' LIMIT 1", 1, M.shard_s))
		refuse("could not read the move journal of the --from server: %s", db_error());
	return v != NULL;
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
	else
		M.has_registry = true;	/* shardid 1.1, whose journal the undo reads */
	{
		Server	   *s[] = {&M.from, &M.to};
		int			i;

		for (i = 0; i < 2; i++)
			if (s[i]->conn && !take_move_lock(s[i]))
				refuse("another shardid-move is working on shard %d with the %s server right now; "
					   "nothing was changed", M.shard, s[i]->option);
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
	else if (M.drop_source && moved_away_pending())
	{
		/* the move finished earlier: only the drop is left */
	}
	else
	{
		check_new_move();
		say("moving shard %d (schema \"%s\": %s, %s) %s", M.shard, M.schema,
			count_of(M.ntables, "table", "tables"), count_of(M.nseqs, "sequence", "sequences"),
			M.online ? "online, with logical replication" : "offline");
		run_move();
	}
	if (M.drop_source)
		run_drop_source();
	else if (M.schema)
		say("schema \"%s\" stays on the --from server, refusing writes; drop it with --drop-source --yes "
			"once the application routes shard %d to the --to server", M.schema, M.shard);
	finish(EXIT_DONE, "done");
}
