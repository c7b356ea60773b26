/*-------------------------------------------------------------------------
 *
 * move.h
 *	  Shared declarations of shardid-move, the client program that moves a
 *	  logical shard (one schema) from one PostgreSQL server to another.
 *
 * The files depend only downward, each using only the ones listed before it:
 *
 *	 report.c		messages, progress line, JSON pieces, checked allocation
 *	 proc.c			signals, query cancel, child processes, private directory
 *	 db.c			libpq connections, queries with $n parameters, quoting,
 *					connection strings for children and subscriptions, COPY
 *					from one connection to another
 *	 state.c		the move's state (Move), the move lock, how a run ends
 *					(finish, refuse, fail)
 *	 journal.c		phases and their order, rows of shardid.move_journal; the
 *					shard's row of shardid.shard_registry
 *	 objects.c		what the move makes on a server: guard triggers, slots,
 *					publication, subscription, the target's schema; row counts,
 *					sequence positions
 *	 undo.c			give up: undo each side, say what is left
 *	 checks.c		connect, preflight, unfinished moves
 *	 copy.c			pg_dump / pg_restore with progress, the offline rows
 *					written by their tables' owners
 *	 verify.c		the rows compared by content on both servers: hashes
 *					before the freeze (online), and in the verification
 *	 online.c		publication, subscription, initial sync, catch-up
 *	 cutover.c		freeze, verify, the clock, cutover, finish
 *	 shardid-move.c	command line and the order of the steps
 *
 * A move's state is one Move, which main() holds and passes down as m to
 * every function that reads or writes it; no file keeps a move's state in a
 * variable of its own.  The few file-scope variables left are the process's
 * (report.c, proc.c, db.c: each says why).
 *
 * fail() (state.c) undoes the move through the handler that main() installs
 * (give_up() of undo.c), the way pg_dump's exit_nicely() runs callbacks: the
 * lower files report a failure without calling up.
 *
 * src/move/move.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_MOVE_H
#define SHARDID_MOVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "libpq-fe.h"

#define PROGNAME "shardid-move"

#ifndef SHARDID_VERSION
#define SHARDID_VERSION "unknown"
#endif

/*
 * What every connection sets first (server_connect()), and sets again after
 * other roles' code ran in it.  The owner of a database may set any of these
 * as its default (ALTER DATABASE ... SET): a read-only default, a timeout or
 * exit_on_error would end the move's sessions or refuse their writes.
 * idle_session_timeout (PostgreSQL 14) and transaction_timeout (17) only
 * where the server has them.
 */
#define SESSION_SETTINGS_SQL \
	"SELECT pg_catalog.set_config('search_path', '', false), " \
	"pg_catalog.set_config('client_min_messages', 'warning', false), " \
	"pg_catalog.set_config('lock_timeout', '0', false), " \
	"pg_catalog.set_config('statement_timeout', '0', false), " \
	"pg_catalog.set_config('idle_in_transaction_session_timeout', '0', false), " \
	"pg_catalog.set_config('default_transaction_read_only', 'off', false), " \
	"pg_catalog.set_config('exit_on_error', 'off', false), " \
	"pg_catalog.set_config('role', 'none', false), " \
	"CASE WHEN pg_catalog.current_setting('idle_session_timeout', true) IS NOT NULL " \
	"THEN pg_catalog.set_config('idle_session_timeout', '0', false) END, " \
	"CASE WHEN pg_catalog.current_setting('transaction_timeout', true) IS NOT NULL " \
	"THEN pg_catalog.set_config('transaction_timeout', '0', false) END"

/* exit codes */
#define EXIT_DONE		0		/* the move (or what was asked) is done */
#define EXIT_FAILED		1		/* failed; nothing is left changed */
#define EXIT_USAGE		2		/* malformed command line */
#define EXIT_UNFINISHED 3		/* interrupted or failed and not undone */

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))

/* SQLSTATEs the move acts on */
#define SQLSTATE_LOCK_NOT_AVAILABLE "55P03"
#define SQLSTATE_UNIQUE_VIOLATION	"23505"
#define SQLSTATE_DEADLOCK_DETECTED	"40P01"
#define SQLSTATE_CONNECTION_FAILURE "08006"
#define SQLSTATE_NO_CONNECTION		"08003"

/* waits, in seconds */
#define DEFAULT_TIMEOUT_S	300		/* --timeout */
#define DEFAULT_MAX_LAG (16LL * 1024 * 1024)	/* --max-lag, bytes */
#define DEFAULT_MAX_LAG_S 2		/* --max-lag-seconds */
#define LAG_REPORT_S	10		/* between two reports of a target behind */
#define MAX_TIMEOUT_S	(7 * 86400)	/* the largest --timeout */
#define RECONNECT_MAX_S 30		/* reconnecting to a server during a step */
#define UNDO_REACH_S	5		/* reaching a server to undo its part */
#define REPORT_REACH_S	3		/* reaching a server to report its state */
#define SLOT_DROP_WAIT_S 15		/* stopping the senders of the move's slots */

/*
 * The room a copy needs on the target, by estimate: the shard's size on the
 * source (tables with their TOAST and indexes, sequences) plus this margin,
 * plus as much again for the WAL the copy writes, at most the target's
 * max_wal_size (checkpoints recycle the rest).
 */
#define ROOM_MARGIN_PERCENT 20
#define MAX_SIZE_ARG	(1024.0 * 1024 * 1024 * 1024 * 1024)	/* 1 PB */

/* naps between two looks, in milliseconds */
#define RETRY_NAP_MS	200		/* after a failed query or a lock timeout */
#define POLL_NAP_MS		100		/* waiting for the sync, the clock, slots */
#define PAUSE_PARTS_MAX 8	/* parts of the pause told apart */
#define CATCH_UP_NAP_MS 50		/* waiting for the target to confirm WAL */
#define FROZEN_NAP_MS	10		/* the same, and the clock, in the freeze */
#define CHILD_NAP_MS	20		/* waiting for a child process */
#define RECONNECT_NAP_MS 250	/* between two connection attempts */

/*
 * The freeze's lock_timeout: FREEZE_LOCK_WAIT_MS, or half the server's
 * deadlock_timeout if that is shorter.  Short, so that a freeze waiting
 * behind a writer does not queue every other writer behind it for long, and
 * below deadlock_timeout, so that a writer waiting for a table the freeze
 * holds never finds a deadlock (freeze_tables()).
 */
#define FREEZE_LOCK_WAIT_MS "200"
#define FREEZE_LOCK_TIMEOUT_SQL \
	"SELECT pg_catalog.set_config('lock_timeout', LEAST(" FREEZE_LOCK_WAIT_MS ", GREATEST(1, " \
	"(EXTRACT(epoch FROM pg_catalog.current_setting('deadlock_timeout')::pg_catalog.interval) * 500)::integer))" \
	"::pg_catalog.text || 'ms', true)"

/*
 * The move lock's class: the first key of the session advisory lock
 * (pg_try_advisory_lock(class, shard)) held on both servers by the run
 * working on a shard; 1936223606 is 0x73686d76, "shmv" in ASCII.
 */
#define MOVE_LOCK_CLASS "1936223606"

#define GUARD_TRIGGER "shardid_moving"
#define ACTIVE_PHASES_EXCLUDED "('done', 'moved-away', 'dropped', 'aborted')"

/* tables whose COPY progress the restore follows by relid, at most */
#define MAX_TRACKED_RELS 64

#define PHASE_LEN		24		/* the longest phase, "frozen-for-move", and more */
#define OBJECT_NAME_LEN 64		/* NAMEDATALEN: slot, publication, subscription */

/* report.c */
extern bool report_json;
extern void say(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void error_msg(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void warning_msg(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void detail_msg(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void hint_msg(const char *fmt,...) PRINTF_LIKE(1, 2);
extern bool progress_enabled(void);
extern void progress(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void progress_end(void);
extern char *fmt_count(char *buf, size_t size, double n);
extern char *fmt_bytes(char *buf, size_t size, double n);
extern char *fmt_seconds(char *buf, size_t size, double s);
extern void json_string(FILE *f, const char *s);
extern double now_seconds(void);
extern char *chomp(char *s);
extern char *xstrdup(const char *s);
extern char *xprintf(const char *fmt,...) PRINTF_LIKE(1, 2);
extern void *xcalloc(size_t n, size_t size);
extern char *random_name(const char *prefix);

/* proc.c */
extern volatile sig_atomic_t interrupted_by;
extern void signals_install(void);
extern const char *signal_name(int sig);
extern void nap(int ms);
extern void nap_always(int ms);
extern char *private_dir_make(void);
extern void private_dir_remove(void);
extern char *find_program(const char *name);
extern pid_t child_start(const char *const argv[], const char *out_path,
						 const char *err_path, const char *password);
extern int	child_wait(pid_t pid, void (*tick) (void *), void *arg);
extern char *file_tail(const char *path, int max_lines);
extern void pause_point(const char *point);
extern void cancel_arm(PGconn *conn);
extern void cancel_disarm(void);
extern void cancel_allow(bool allow);

/* db.c */
typedef struct Server
{
	const char *option;			/* "--from" or "--to" */
	const char *conninfo;		/* as given on the command line */
	PGconn	   *conn;
	char		where[300];		/* host, port and database */
	int			generation;		/* connections made so far */
	int			locked;			/* the generation that holds the move lock */
	char		lock_pid[16];	/* the session that took it: pid, */
	char		lock_start[64];	/* and backend start ("" before) */
} Server;

extern bool server_connect(Server *s);
extern bool server_ensure(Server *s, int timeout_s);
extern void server_close(Server *s);
extern PGresult *query(Server *s, const char *sql, int nparams,...);
extern bool exec_sql(Server *s, const char *sql, int nparams,...);
extern bool get_value(Server *s, char **out, const char *sql, int nparams,...);
extern bool batch_start(Server *s);
extern bool batch_add(Server *s, const char *sql, int nparams, const char *const *params);
extern bool batch_end(Server *s);
extern void batch_abandon(Server *s);
extern bool batch_send(Server *s, int n, const char *sql, int nparams, const char *const *params);
extern bool batch_add_reset(Server *s);
extern bool batch_recv(Server *s, int n, PGresult **res);
extern bool copy_stream(Server *from, const char *out_sql, Server *to, const char *in_sql,
						long long *rows, void (*tick) (void *, long long), void *arg);
extern bool tx_begin(Server *s);
extern bool tx_commit(Server *s);
extern void tx_rollback(Server *s);
extern const char *db_error(void);
extern const char *db_sqlstate(void);
extern char *quote_ident(Server *s, const char *name);
extern char *quote_literal(Server *s, const char *value);
extern const char *const value_settings[][2];
extern bool pin_values(Server *s);
extern bool reset_settings(Server *s);
extern char *conninfo_value(const char *v);
extern char *subscription_conninfo(Server *s);
extern char *child_conninfo(Server *s, const char **password);

/* state.c */
typedef struct Table
{
	char	   *name;
	char	   *qname;			/* "schema"."table", quoted */
	char		kind;			/* 'r' or 'p' */
	char	   *owner;			/* its owner's role name */
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

/* a row of shardid.move_journal (journal.c) */
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

/* verify.c's part of a move, private to it */
typedef struct Verify Verify;
typedef struct NewestRead NewestRead;

/* owner_values() sent, its answers not read yet (owner_values_send()) */
typedef struct OwnerBatch
{
	Server		c;				/* its own session */
	int			n;
	bool		sent;
} OwnerBatch;

typedef struct Move
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
	long long	max_lag;		/* --max-lag: bytes behind at the freeze */
	int			max_lag_s;		/* --max-lag-seconds: seconds behind */
	long long	to_free;		/* --to-free: bytes free on the target, or -1 */
	Server		from;
	Server		to;

	/*
	 * --drop-source drops the frozen copy a finished move left, and moves
	 * nothing; --move-and-drop-source moves the shard (or, with --resume,
	 * finishes its move) and then drops it.  A mistyped cleanup of a shard
	 * that has not moved is refused, never turned into a move.
	 */
	bool		drop_only;
	bool		move_and_drop;

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
	long long	size_bytes;		/* on the source, or -1 when not read */
	long long	room_needed;	/* on the target, by estimate, or -1 */

	/* the move */
	char	   *move_id;
	const char *method;
	char		name[OBJECT_NAME_LEN];	/* publication, slot, subscription */
	char		src_phase[PHASE_LEN];
	char		dst_phase[PHASE_LEN];
	/* a phase written in a transaction counts once it commits (commit()) */
	char		pending_src[PHASE_LEN];
	char		pending_dst[PHASE_LEN];
	char	   *dst_schema_oid;
	char	   *sub_oid;
	bool		changed;
	bool		past_no_return;
	bool		dst_known;		/* the target's journal was read by the undo */
	/* the journal rows of an unfinished move (checks.c) */
	JournalRow	jsrc;			/* source */
	JournalRow	jdst;			/* target */
	/* hold_target_tables() found a table changed on the --to server */
	bool		target_changed;
	/* an id of the shard beyond the bound was reported (once a move) */
	bool		beyond_reported;

	/* the run */
	char	   *tmpdir;
	char	   *pg_dump;
	char	   *pg_restore;
	double		t0;
	double		frozen_at;		/* when this run froze the source, or 0 */
	/* the parts of the pause since frozen_at (pause_part()) */
	int			nparts;
	const char *part_name[PAUSE_PARTS_MAX];
	double		part_secs[PAUSE_PARTS_MAX];
	double		part_mark;		/* the end of the last part */
	const char *step;
	const char *outcome;
	char	   *error_text;
	void		(*on_failure) (struct Move *m); /* what fail() runs: give_up() */
	/* the connections of copy_rows_as_owners() (copy.c) */
	Server		rows_src;
	Server		rows_dst;
	/* the verification's sessions and forms, made by its first step */
	Verify	   *verify;
	/* the newest id of the shard on the --to server, being read (cutover.c) */
	NewestRead *newest;
} Move;

extern bool is(const char *a, const char *b);
extern char *count_of(long long n, const char *one, const char *many);
extern void set_phase(char *buf, const char *phase);
extern void name_move(Move *m, bool legacy);
extern bool commit(Move *m, Server *s);
extern void rollback(Move *m, Server *s);
extern void check_interrupt(Move *m);
extern int	take_move_lock(Move *m, Server *s);
extern char *move_lock_holder(Move *m, Server *s);
extern void need(Move *m, Server *s);
extern void finish(Move *m, int code, const char *outcome) NORETURN;
extern void fail(Move *m, const char *fmt,...) PRINTF_LIKE(2, 3) NORETURN;
extern void refuse(Move *m, const char *fmt,...) PRINTF_LIKE(2, 3) NORETURN;

/* journal.c */
#define RANK_CHECKED 1
#define RANK_COPYING 2
#define RANK_COPIED 3			/* copied (offline), replicating (online) */
#define RANK_CAUGHT_UP 4
#define RANK_VERIFIED 5
#define RANK_CUT_OVER 6
#define RANK_DONE 7

#define JOURNAL_COLUMNS \
	"move_id, side, schema_name, method, phase, peer, schema_oid, subscription_oid, " \
	"pg_catalog.to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', started_by"

extern int	target_rank(const char *phase);
extern void journal_clear(JournalRow *j);
extern bool journal_fill(PGresult *res, JournalRow *j);
extern bool journal_unfinished(Server *s, const char *shard, JournalRow *j);
extern bool journal_by_id(Server *s, const char *move_id, const char *side, JournalRow *j);
extern bool journal_write(Move *m, Server *s, const char *side, const char *phase);
extern const char *target_phase_meaning(const char *phase);
extern const char *source_phase_meaning(const char *phase);
extern bool registered_schema(Server *s, const char *shard, char **schema);

/* objects.c */
extern void inspect_source(Move *m);
extern bool lock_tables(Move *m, Server *s, const char *mode);
extern bool freeze_tables(Move *m, Server *s);
extern bool give_back_owners(Move *m, Server *s);
extern bool unfreeze_tables(Server *s, const char *schema);
extern bool tx_with_lock_retry(Move *m, Server *s, bool (*fn) (Move *m, Server *s), const char *what);
extern bool owner_values(Server *s, int n, char *const *owners, char *const *sqls, char **out);
extern bool owner_values_send(Server *s, int n, char *const *owners, char *const *sqls, OwnerBatch *b);
extern bool owner_values_recv(OwnerBatch *b, char **out);
extern void owner_values_abandon(OwnerBatch *b);
extern bool count_rows(Server *s, const Table *tables, int ntables, long long *counts);
extern bool sequence_positions(Server *s, const Seq *seqs, int nseqs, char **pos);
extern bool subscription_oid(Server *s, const char *name, char **oid);
extern bool drop_subscription(Server *s, const char *name);
extern bool keeps_legacy_ids(Server *s, bool *keeps);
extern bool delete_legacy_ids(Server *s, const char *schema);
extern bool drop_schema_by_oid(Server *s, const char *oid, char **name);
extern bool drop_publication(Server *s, const char *name);
extern bool drop_slots(Server *s, const char *name, const char *sub_oid, bool main_slot);
extern bool unpublish(Server *s, const char *name, const char *sub_oid);
extern char *slots_of_move(Server *s, const char *name, const char *sub_oid);
extern void hint_drop_slots(Server *s, const char *slots);
extern void report_state(Move *m);

/* undo.c */
extern void give_up(Move *m) NORETURN;
extern bool undo_target(Move *m);
extern bool undo_source(Move *m);

/* checks.c */
extern void connect_for_abort(Move *m);
extern void connect_both(Move *m);
extern void check_servers(Move *m);
extern void check_new_move(Move *m);
extern bool load_unfinished(Move *m);
extern void describe_unfinished(Move *m);
extern bool moved_away_pending(Move *m);
extern int	check_event_triggers(Move *m, Server *s, const char *what);
extern void say_room(Move *m);
extern bool hold_target_tables(Move *m, Server *s, bool apply_as_superuser, bool *changed);

/* copy.c */
typedef struct CopyProgress
{
	Move	   *move;			/* whose tables it follows */
	Server	   *server;
	const char *label;
	const char *command;		/* 'COPY TO' or 'COPY FROM' */
	double		started;
	long long	total;
	const char *extra;
	/* on the target, tables restored in an uncommitted transaction: by relid */
	bool		by_relid;
	int			nrel;
	char		relid[MAX_TRACKED_RELS][12];
	long long	reldone[MAX_TRACKED_RELS];
} CopyProgress;

extern void copy_progress_tick(void *arg);
extern void copy_progress_reset(Move *m);
extern void copy_schema(Move *m, bool schema_only);
extern void target_fresh_schema(Move *m);
extern void step_copy_offline(Move *m);

/* verify.c */
extern void hash_before_freeze(Move *m);
extern long long verify_rows(Move *m);
extern int	check_large_objects(Move *m, bool moving);

/* online.c */
extern void step_publish(Move *m);
extern void step_copy_online(Move *m);
extern void step_wait_sync(Move *m);
extern void step_close_gap(Move *m);
extern void refresh_matviews(Move *m);
extern void step_catch_up(Move *m);
extern void step_carry_sequences(Move *m);
extern void drop_replication(Move *m);

/* cutover.c */
extern void step_freeze(Move *m);
extern void step_verify(Move *m);
extern void step_cutover(Move *m);
extern void step_finish(Move *m);
extern void pause_part(Move *m, const char *what);
extern void start_newest_read(Move *m);
extern void abandon_newest_read(Move *m);

#endif							/* SHARDID_MOVE_H */
