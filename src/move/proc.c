/*-------------------------------------------------------------------------
 *
 * proc.c
 *	  The process side of shardid-move: signals and the query cancel they
 *	  fire, child processes (pg_dump,
 *	  pg_restore), the private directory for the dump, and the test hook
 *	  that pauses the move at a named phase.
 *
 * SIGINT, SIGTERM and SIGHUP only set a flag and cancel the query running
 * at that moment; the move notices the flag at its next step and undoes
 * what it did (or, past the point of no return, stops and says so).
 * Children run in a process group of their own, so that a Ctrl-C on the
 * terminal reaches only shardid-move, which then stops its child itself.
 *
 * src/move/proc.c
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "move.h"

/*
 * The process's, not a move's, so file-scope: the signal that interrupted
 * the run, set by on_signal(), which a handler can reach no other way.
 */
volatile sig_atomic_t interrupted_by = 0;

/*
 * The private directory of the process (and the process that made it, not
 * a child): atexit() removes it through a handler that takes no argument.
 */
static char *private_dir = NULL;
static pid_t private_dir_owner = 0;

/*
 * The query cancel a signal may fire: armed only while a query runs, and
 * read by on_signal(), hence file-scope.
 */
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

/* the query about to run on conn is the one a signal cancels */
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

/* the undo must not be cancelled by a second signal */
void
cancel_allow(bool allow)
{
	cancel_allowed = allow ? 1 : 0;
}

/* set a flag, and cancel the running query: PQcancel is safe here */
static void
on_signal(int sig)
{
	char		buf[256];

	if (interrupted_by == 0)
		interrupted_by = sig;
	if (armed_cancel != NULL && cancel_allowed)
		PQcancel(armed_cancel, buf, sizeof(buf));
}

void
signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;			/* no SA_RESTART: a sleep ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

const char *
signal_name(int sig)
{
	switch (sig)
	{
		case SIGINT:
			return "SIGINT";
		case SIGTERM:
			return "SIGTERM";
		case SIGHUP:
			return "SIGHUP";
		default:
			return "a signal";
	}
}

/* sleep, cut short by a signal */
void
nap(int ms)
{
	struct timespec ts;

	if (interrupted_by)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* sleep even after a signal: for the waits of an undo */
void
nap_always(int ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long) (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

static void
remove_dir_files(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char	   *path;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		path = xprintf("%s/%s", dir, e->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
}

/*
 * Private directories of earlier runs killed by SIGKILL or a power loss:
 * ours (same user), named after a process that no longer exists.
 */
static void
remove_stale_dirs(const char *base)
{
	DIR		   *d = opendir(base);
	struct dirent *e;
	size_t		plen = strlen(PROGNAME ".");

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
	{
		char	   *end;
		long		pid;
		char	   *path;
		struct stat st;

		if (strncmp(e->d_name, PROGNAME ".", plen) != 0)
			continue;
		pid = strtol(e->d_name + plen, &end, 10);
		if (pid <= 0 || *end != '.' || strlen(end) != 7)
			continue;
		if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
			continue;
		path = xprintf("%s/%s", base, e->d_name);
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid())
		{
			remove_dir_files(path);
			rmdir(path);
		}
		free(path);
	}
	closedir(d);
}

/*
 * A directory only this user can enter, for the dump and children's output,
 * named after our pid so that a later run can remove it if we are killed.
 */
char *
private_dir_make(void)
{
	const char *base = getenv("TMPDIR");
	char	   *tmpl;

	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	remove_stale_dirs(base);
	tmpl = xprintf("%s/" PROGNAME ".%d.XXXXXX", base, (int) getpid());
	if (mkdtemp(tmpl) == NULL)		/* mode 0700 */
	{
		error_msg("could not create a private directory in \"%s\": %s", base, strerror(errno));
		free(tmpl);
		return NULL;
	}
	private_dir = tmpl;
	private_dir_owner = getpid();
	return private_dir;
}

/* remove the private directory and the files in it (it holds no subdirectory) */
void
private_dir_remove(void)
{
	if (private_dir == NULL || getpid() != private_dir_owner)
		return;
	remove_dir_files(private_dir);
	if (rmdir(private_dir) != 0 && errno != ENOENT)
		warning_msg("could not remove directory \"%s\": %s", private_dir, strerror(errno));
	free(private_dir);
	private_dir = NULL;
}

/*
 * A PostgreSQL program: the one next to this program (installed in the same
 * bindir), else the first one on PATH.
 */
char *
find_program(const char *name)
{
	char		self[PATH_MAX];
	ssize_t		n;
	const char *path;
	char	   *copy,
			   *dir,
			   *save = NULL;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
	{
		char	   *slash;
		char	   *candidate;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL)
		{
			*slash = '\0';
			candidate = xprintf("%s/%s", self, name);
			if (access(candidate, X_OK) == 0)
				return candidate;
			free(candidate);
		}
	}
	path = getenv("PATH");
	if (path == NULL)
		return NULL;
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
	{
		char	   *candidate = xprintf("%s/%s", dir[0] ? dir : ".", name);

		if (access(candidate, X_OK) == 0)
		{
			free(copy);
			return candidate;
		}
		free(candidate);
	}
	free(copy);
	return NULL;
}

/*
 * Start argv[0] with standard output and error in files of the private
 * directory and standard input from /dev/null; no shell is involved.
 */
pid_t
child_start(const char *const argv[], const char *out_path,
			const char *err_path, const char *password)
{
	pid_t		pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
	{
		error_msg("could not start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0)
	{
		int			fd;
		sigset_t	none;

		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		if (out_path)
		{
			fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0)
				dup2(fd, 1);
		}
		if (err_path)
		{
			fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd >= 0)
				dup2(fd, 2);
		}
		if (password && password[0])
			setenv("PGPASSWORD", password, 1);
		execv(argv[0], (char *const *) argv);
		fprintf(stderr, "could not run \"%s\": %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

/*
 * Wait for a child, calling tick every 200 ms.  Returns its exit status,
 * 128 + the signal that killed it, or -2 when we were interrupted (the child
 * is then stopped and reaped).
 */
int
child_wait(pid_t pid, void (*tick) (void *), void *arg)
{
	int			status;
	double		next_tick = now_seconds() + 0.2;

	for (;;)
	{
		pid_t		r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (interrupted_by)
		{
			kill(-pid, SIGTERM);
			kill(pid, SIGTERM);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -2;
		}
		if (tick && now_seconds() >= next_tick)
		{
			tick(arg);
			next_tick = now_seconds() + 0.2;
		}
		nap(CHILD_NAP_MS);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* the last lines of a file, joined by "; ", for a detail message */
char *
file_tail(const char *path, int max_lines)
{
	FILE	   *f = fopen(path, "r");
	char	  **lines;
	char		line[2048];
	int			n = 0,
				i;
	char	   *out;
	size_t		len = 1;

	if (f == NULL)
		return xstrdup("");
	lines = xcalloc(max_lines, sizeof(char *));
	while (fgets(line, sizeof(line), f))
	{
		chomp(line);
		if (line[0] == '\0')
			continue;
		if (n == max_lines)
		{
			free(lines[0]);
			memmove(lines, lines + 1, (max_lines - 1) * sizeof(char *));
			n--;
		}
		lines[n++] = xstrdup(line);
	}
	fclose(f);
	for (i = 0; i < n; i++)
		len += strlen(lines[i]) + 2;
	out = xcalloc(1, len);
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			strcat(out, "; ");
		strcat(out, lines[i]);
		free(lines[i]);
	}
	free(lines);
	return out;
}

/*
 * Test hook: with SHARDID_MOVE_PAUSE_AT=<point>, stop at that point until a
 * signal arrives or the file SHARDID_MOVE_PAUSE_FILE (written with our pid
 * on arrival) is removed.  Tests use it to interrupt a move in a known phase.
 */
void
pause_point(const char *point)
{
	const char *at = getenv("SHARDID_MOVE_PAUSE_AT");
	const char *file = getenv("SHARDID_MOVE_PAUSE_FILE");
	FILE	   *f;

	if (at == NULL || strcmp(at, point) != 0 || interrupted_by)
		return;
	progress_end();
	fprintf(stderr, PROGNAME ": paused at %s (SHARDID_MOVE_PAUSE_AT)\n", point);
	if (file && file[0] && (f = fopen(file, "w")) != NULL)
	{
		fprintf(f, "%d\n", (int) getpid());
		fclose(f);
	}
	while (!interrupted_by)
	{
		if (file && file[0] && access(file, F_OK) != 0)
			break;
		nap(CHILD_NAP_MS);
	}
}
