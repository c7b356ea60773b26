/*-------------------------------------------------------------------------
 *
 * report.c
 *	  What shardid-move tells the operator: messages in the style of
 *	  PostgreSQL's client programs ("shardid-move: error: ..."), a progress
 *	  line on a terminal, and the pieces of the JSON summary.
 *
 * Plain messages go to standard output, or to standard error with --json so
 * that standard output holds the JSON summary alone.  Errors, details and
 * hints always go to standard error.  The progress line is drawn on standard
 * error only when it is a terminal, and is erased before any message.
 *
 * src/move/report.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "move.h"

/*
 * The process's output, not a move's state, and file-scope so that every
 * message reaches them without a move (report.c knows none): --json sends
 * the messages to standard error, which parse_args() sets once; and
 * whether the progress line is on the terminal now.
 */
bool		report_json = false;

static bool progress_shown = false;

static void
progress_clear(void)
{
	if (progress_shown)
	{
		fputs("\r\033[K", stderr);
		progress_shown = false;
	}
}

void
say(const char *fmt,...)
{
	FILE	   *f = report_json ? stderr : stdout;
	va_list		ap;

	progress_clear();
	fputs(PROGNAME ": ", f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

static void message(const char *level, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);

static void
message(const char *level, const char *fmt, va_list ap)
{
	progress_clear();
	fflush(stdout);
	fprintf(stderr, "%s: %s: ", PROGNAME, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
}

void
error_msg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	message("error", fmt, ap);
	va_end(ap);
}

void
warning_msg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	message("warning", fmt, ap);
	va_end(ap);
}

void
detail_msg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	message("detail", fmt, ap);
	va_end(ap);
}

void
hint_msg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	message("hint", fmt, ap);
	va_end(ap);
}

bool
progress_enabled(void)
{
	static int	tty = -1;		/* standard error's, asked once */

	if (tty < 0)
		tty = isatty(STDERR_FILENO) ? 1 : 0;
	return tty == 1;
}

void
progress(const char *fmt,...)
{
	va_list		ap;

	if (!progress_enabled())
		return;
	fputs("\r\033[K" PROGNAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	progress_shown = true;
}

void
progress_end(void)
{
	progress_clear();
}

/* 1234567 -> "1,234,567" */
char *
fmt_count(char *buf, size_t size, double n)
{
	char		digits[32];
	int			len,
				i,
				o = 0;

	snprintf(digits, sizeof(digits), "%.0f", n < 0 ? 0 : n);
	len = strlen(digits);
	for (i = 0; i < len && o < (int) size - 1; i++)
	{
		if (i > 0 && (len - i) % 3 == 0 && o < (int) size - 2)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

char *
fmt_bytes(char *buf, size_t size, double n)
{
	const char *units[] = {"bytes", "kB", "MB", "GB", "TB"};
	int			u = 0;

	while (n >= 1024 && u < 4)
	{
		n /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%.0f %s", n, units[u]);
	else
		snprintf(buf, size, "%.1f %s", n, units[u]);
	return buf;
}

char *
fmt_seconds(char *buf, size_t size, double s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, size, "%.0f s", s);
	else if (s < 3600)
		snprintf(buf, size, "%d min %02d s", (int) s / 60, (int) s % 60);
	else
		snprintf(buf, size, "%d h %02d min", (int) s / 3600, ((int) s % 3600) / 60);
	return buf;
}

void
json_string(FILE *f, const char *s)
{
	if (s == NULL)
	{
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* drop trailing newlines and spaces, in place */
char *
chomp(char *s)
{
	size_t		n;

	if (s == NULL)
		return s;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

char *
xstrdup(const char *s)
{
	char	   *r = strdup(s ? s : "");

	if (r == NULL)
	{
		fputs(PROGNAME ": error: out of memory\n", stderr);
		exit(EXIT_UNFINISHED);
	}
	return r;
}

char *
xprintf(const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *r;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	r = n < 0 ? NULL : malloc(n + 1);
	if (n < 0 || r == NULL)
	{
		fputs(PROGNAME ": error: out of memory\n", stderr);
		exit(EXIT_UNFINISHED);
	}
	va_start(ap, fmt);
	vsnprintf(r, n + 1, fmt, ap);
	va_end(ap);
	return r;
}

/* zeroed memory, or the program ends: nothing of the move is half-built */
void *
xcalloc(size_t n, size_t size)
{
	void	   *r = calloc(n ? n : 1, size ? size : 1);

	if (r == NULL)
	{
		fputs(PROGNAME ": error: out of memory\n", stderr);
		exit(EXIT_UNFINISHED);
	}
	return r;
}

/*
 * prefix followed by 32 random hex digits: the name of something the move
 * makes where other roles' code runs (its scratch schema), which nobody can
 * take before the move makes it.  From /dev/urandom; the program ends when
 * it cannot be read, rather than make a name someone could guess.
 */
char *
random_name(const char *prefix)
{
	unsigned char bytes[16];
	char		hex[2 * sizeof(bytes) + 1];
	FILE	   *f = fopen("/dev/urandom", "rb");
	size_t		i;

	if (f == NULL || fread(bytes, 1, sizeof(bytes), f) != sizeof(bytes))
	{
		fputs(PROGNAME ": error: could not read /dev/urandom\n", stderr);
		exit(EXIT_UNFINISHED);
	}
	fclose(f);
	for (i = 0; i < sizeof(bytes); i++)
		snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
	return xprintf("%s%s", prefix, hex);
}
