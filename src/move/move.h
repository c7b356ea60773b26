/*-------------------------------------------------------------------------
 *
 * move.h
 *	  Shared declarations of shardid-move, the client program that moves a
 *	  logical shard (one schema) from one PostgreSQL server to another.
 *
 * The files below depend only downward: report.c (messages, progress, JSON),
 * proc.c (signals, child processes, the private directory), db.c (libpq
 * connections and queries), and shardid-move.c (the move itself).
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

/* exit codes */
#define EXIT_DONE		0		/* the move (or what was asked) is done */
#define EXIT_FAILED		1		/* failed; nothing is left changed */
#define EXIT_USAGE		2		/* malformed command line */
#define EXIT_UNFINISHED 3		/* interrupted or failed and not undone */

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))

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

/* db.c */
typedef struct Server
{
	const char *option;			/* "--from" or "--to" */
	const char *conninfo;		/* as given on the command line */
	PGconn	   *conn;
	char		where[300];		/* host, port and database */
	int			generation;		/* connections made so far */
	int			locked;			/* the generation that holds the move lock */
} Server;

extern void cancel_arm(PGconn *conn);
extern void cancel_disarm(void);
extern void cancel_from_signal(void);
extern void cancel_allow(bool allow);
extern bool server_connect(Server *s);
extern bool server_ensure(Server *s, int timeout_s);
extern void server_close(Server *s);
extern PGresult *query(Server *s, const char *sql, int nparams,...);
extern bool exec_sql(Server *s, const char *sql, int nparams,...);
extern bool get_value(Server *s, char **out, const char *sql, int nparams,...);
extern bool tx_begin(Server *s);
extern bool tx_commit(Server *s);
extern void tx_rollback(Server *s);
extern const char *db_error(void);
extern const char *db_sqlstate(void);
extern char *quote_ident(Server *s, const char *name);
extern char *quote_literal(Server *s, const char *value);

#endif							/* SHARDID_MOVE_H */
