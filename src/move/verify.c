/*-------------------------------------------------------------------------
 *
 * verify.c
 *	  The rows of the shard's tables compared by content on both servers,
 *	  before the hand-over: per table, the number of rows and the sum of a
 *	  hash of each row's text, read by the table's owner under the settings
 *	  every session of the move pins (value_settings, db.c), so that the
 *	  same values give the same text on both servers.
 *
 * A row's text is that of ROW(its columns, by name): record_out() calls
 * the output function of each column's type, which only superusers write
 * (a base type's) or PostgreSQL gives (enums, composites, ranges, domains:
 * their base type's); an anonymous record, whose cast to text nobody can
 * choose.  A bytea column stands there as the MD5 of its bytes (half the
 * text of bytea_output hex to hash, and as telling), an xml column as its
 * text as stored (XML_DEPTH_SQL).  A row's hash is the first 64 bits of the
 * MD5 of its text (SHA-256 where MD5 is refused, as in FIPS mode; of its
 * UTF-8 bytes when the servers' encodings differ and neither is SQL_ASCII,
 * into or out of which nothing is converted): the same on every machine,
 * unlike hash_any().  The sum does not depend on the
 * order of the rows and counts each copy of a duplicate row.  Each query
 * runs as the table's owner in a SECURITY DEFINER function of hers in a
 * schema the work session's transaction makes with a random name and never
 * commits, as owner_values() of objects.c runs the counts, for the same
 * reasons (planning the scan evaluates her index expressions; her policies
 * do not filter her reads; her code can neither take the name of the next
 * function nor drop it).
 *
 * Offline and on a resumed move, the verification hashes every row.  An
 * online move hashes every row before the freeze, each server under a
 * snapshot X that a session of its own exports and keeps (holding no
 * lock), and in the freeze only the row versions written or
 * deleted since.  With F the snapshot of the verification:
 *
 *	 sum over F = sum over X + sum over F where q - sum over X where q
 *
 * q(t): t's xmin or xmax lies between X's xmin and the next xid, or its
 * xmax between the table's relminmxid and the next MultiXactId (SQL shows
 * no xid from a MultiXactId: both windows are tried; delta_sql()); the
 * bounds are read once the session that keeps X holds the tables in
 * EXCLUSIVE mode (no write, no row lock, no VACUUM), and q reads nothing
 * else of the row.  A row version that X and F both see is counted in both
 * sums where q or in neither: the two scans read the same tuple, whose
 * header cannot change.  One that X sees and F does not was deleted or
 * updated by a transaction X did not see: its xmax, that transaction's xid
 * or a MultiXactId, is in a window.  One that F sees and X does not was written by a
 * transaction X did not see, whose xid is in the window.  Whatever else q
 * takes in (a row locked since X, a frozen row whose original xid falls in
 * the window) is counted twice and cancels out; a row version q leaves out
 * is seen by both snapshots or by neither.  The scan with X needs the
 * relation X read: a table whose file changed since (TRUNCATE, VACUUM
 * FULL, CLUSTER, a rewrite), or whose counts do not add up, is hashed in
 * full in the freeze.  A failure of the sessions that keep X (a lost
 * connection) leaves every row to the freeze.  The freeze's part grows
 * with the rows written while the rows were hashed before it.
 *
 * src/move/verify.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"

typedef struct Side
{
	Server	   *server;			/* the move's from or to */
	Server		work;			/* where the owners' queries run */
	Server		hold;			/* keeps snapshot X, exported */
	char	   *snapshot;		/* X, as pg_export_snapshot() named it */
	char	   *xmin;			/* X's xmin, 32 bits */
	char	  **before;			/* per table: "rows sum filenode" under X */
	char	  **texts;			/* per table: what its rows' text depends
								 * on besides the rows, when last read
								 * (read_columns()) */
	int			made;			/* functions made in work's transaction */
	char	   *scratch;		/* the schema of work's transaction, random */
} Side;

/* the verification's part of a move (Move.verify), made by its first step */
struct Verify
{
	Side		sides[2];
	char	  **row_of;			/* per table: ROW(t.col, ...) by name */
	bool	   *by_name;		/* per table: its text names catalog objects
								 * (NAMES_SQL): hashed in the freeze only */
	const char *hash_form;		/* the hash of a row's text, %s the row */
	bool		have_md5;
	bool		prepared;
	char	   *to_owner;		/* the --to server's queries run as this role
								 * instead of the tables' owners, or NULL */
	char		why[2048];		/* the error of the last failed query */
};

#define MD5_SAME_FORM \
	"('x'::pg_catalog.text OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.md5(" \
	"%s::pg_catalog.text), 1, 16))::pg_catalog.bit(64)::pg_catalog.int8"
#define MD5_UTF8_FORM \
	"('x'::pg_catalog.text OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.md5(" \
	"pg_catalog.convert_to(%s::pg_catalog.text, 'UTF8')), 1, 16))::pg_catalog.bit(64)::pg_catalog.int8"
#define SHA256_RAW_FORM \
	"('x'::pg_catalog.text OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.encode(pg_catalog.sha256(" \
	"pg_catalog.convert_to(%s::pg_catalog.text, 'SQL_ASCII')), 'hex'), 1, 16))::pg_catalog.bit(64)::pg_catalog.int8"
#define SHA256_FORM \
	"('x'::pg_catalog.text OPERATOR(pg_catalog.||) pg_catalog.substr(pg_catalog.encode(pg_catalog.sha256(" \
	"pg_catalog.convert_to(%s::pg_catalog.text, 'UTF8')), 'hex'), 1, 16))::pg_catalog.bit(64)::pg_catalog.int8"

static void
close_side(Side *s)
{
	tx_rollback(&s->work);
	server_close(&s->work);
	tx_rollback(&s->hold);
	server_close(&s->hold);
	free(s->snapshot);
	s->snapshot = NULL;
}

/* the sessions of the verification closed: their locks must not hold the undo */
static void vfail(Move *m, const char *fmt,...) PRINTF_LIKE(2, 3) NORETURN;

static void
vfail(Move *m, const char *fmt,...)
{
	va_list		ap;
	char		msg[8192];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	close_side(&m->verify->sides[0]);
	close_side(&m->verify->sides[1]);
	fail(m, "%s", msg);
}

/*
 * s's session conn, connected: the work session is made again when lost
 * (a server's idle_session_timeout ends it between the hashes before the
 * freeze and those in it); the one that keeps X is not, X goes with it
 */
static bool
side_connect(Side *s, Server *conn)
{
	if (conn->conn && PQstatus(conn->conn) == CONNECTION_OK)
		return conn == &s->hold || server_ensure(conn, UNDO_REACH_S);
	memset(conn, 0, sizeof(*conn));
	conn->option = s->server->option;
	conn->conninfo = s->server->conninfo;
	return server_connect(conn);
}

/* the hash both servers can compute alike */
static void
prepare(Move *m)
{
	char	   *enc[2] = {NULL, NULL};
	int			i;
	bool		raw;

	if (m->verify == NULL)
		m->verify = xcalloc(1, sizeof(Verify));
	if (m->verify->prepared)
		return;
	m->verify->have_md5 = true;
	for (i = 0; i < 2; i++)
	{
		Server	   *s = i == 0 ? &m->from : &m->to;
		PGresult   *res;

		need(m, s);
		if (!get_value(s, &enc[i], "SELECT pg_catalog.current_setting('server_encoding')", 0))
			fail(m, "could not query the %s server: %s", s->option, db_error());
		/* MD5 is refused in FIPS mode */
		res = query(s, "SELECT pg_catalog.md5('')", 0);
		if (res == NULL)
			m->verify->have_md5 = false;
		PQclear(res);
	}
	/*
	 * Into or out of SQL_ASCII nothing is converted: the copy holds the
	 * bytes of the source, which need not be UTF-8 (convert_to() of them
	 * fails), and its bytes are compared
	 */
	raw = is(enc[0], enc[1]) || is(enc[0], "SQL_ASCII") || is(enc[1], "SQL_ASCII");
	m->verify->hash_form = !m->verify->have_md5 ? (raw ? SHA256_RAW_FORM : SHA256_FORM) :
		raw ? MD5_SAME_FORM : MD5_UTF8_FORM;
	free(enc[0]);
	free(enc[1]);
	m->verify->row_of = xcalloc(m->ntables + 1, sizeof(char *));
	m->verify->by_name = xcalloc(m->ntables + 1, sizeof(bool));
	m->verify->sides[0].server = &m->from;
	m->verify->sides[1].server = &m->to;
	for (i = 0; i < 2; i++)
	{
		if (m->verify->sides[i].before == NULL)
			m->verify->sides[i].before = xcalloc(m->ntables + 1, sizeof(char *));
		if (m->verify->sides[i].texts == NULL)
			m->verify->sides[i].texts = xcalloc(m->ntables + 1, sizeof(char *));
	}
	m->verify->prepared = true;
}

/*
 * The composite types that the columns of table $1 hold, at any depth
 * (through domains, arrays, ranges, multiranges and the attributes of
 * composites), each with its attributes in order: a composite's text lists
 * its attributes' values by position, so a type outside the schema made
 * otherwise on the --to server (its attributes in another order, or named
 * otherwise) reads the same text into other attributes, and the hashes of
 * the rows agree while the values do not.  Types are named by
 * format_type() (qualified: the search_path is empty); "" when none.
 */
#define COLUMN_TYPES_CTE \
	"WITH RECURSIVE ty(oid) AS (SELECT a.atttypid FROM pg_catalog.pg_attribute a " \
	"WHERE a.attrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass AND a.attnum OPERATOR(pg_catalog.>) 0 " \
	"AND NOT a.attisdropped UNION SELECT n.x FROM ty JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) ty.oid, " \
	"LATERAL (SELECT y.typbasetype WHERE y.typbasetype OPERATOR(pg_catalog.<>) 0 " \
	"UNION ALL SELECT y.typelem WHERE y.typelem OPERATOR(pg_catalog.<>) 0 " \
	"UNION ALL SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid OPERATOR(pg_catalog.=) y.oid " \
	"UNION ALL SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid OPERATOR(pg_catalog.=) y.oid " \
	"UNION ALL SELECT c.atttypid FROM pg_catalog.pg_attribute c WHERE c.attrelid OPERATOR(pg_catalog.=) y.typrelid " \
	"AND y.typrelid OPERATOR(pg_catalog.<>) 0 AND c.attnum OPERATOR(pg_catalog.>) 0 AND NOT c.attisdropped) n(x)) "
#define COMPOSITES_OF(attr) \
	"(" COLUMN_TYPES_CTE \
	"SELECT COALESCE(pg_catalog.string_agg(pg_catalog.format('%s(%s)', pg_catalog.format_type(y.oid, NULL), " \
	"(SELECT pg_catalog.string_agg(" attr ", " \
	"', ' ORDER BY c.attnum) FROM pg_catalog.pg_attribute c WHERE c.attrelid OPERATOR(pg_catalog.=) y.typrelid " \
	"AND c.attnum OPERATOR(pg_catalog.>) 0 AND NOT c.attisdropped)), ', ' ORDER BY pg_catalog.format_type(y.oid, NULL)), '') " \
	"FROM ty JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) ty.oid WHERE y.typrelid OPERATOR(pg_catalog.<>) 0)"
#define COMPOSITES_SQL \
	COMPOSITES_OF("pg_catalog.format('%I %s', c.attname, pg_catalog.format_type(c.atttypid, c.atttypmod))")

/*
 * The same with each attribute's number, which the servers need not share
 * (pg_restore makes a type without the attributes dropped before): an
 * attribute dropped and added again (ALTER TYPE ... DROP ATTRIBUTE, ADD
 * ATTRIBUTE, which PostgreSQL allows while a column holds the type) reads
 * NULL in every row without a write, and the type's attributes in order
 * stay as they were.
 */
#define COMPOSITE_NUMBERS_SQL \
	COMPOSITES_OF("pg_catalog.format('%s %I %s', c.attnum, c.attname, pg_catalog.format_type(c.atttypid, c.atttypmod))")

/*
 * The enums that the columns of table $1 hold, at any depth, each with its
 * labels in their order: an enum's text is its label, which its owner may
 * rename (ALTER TYPE ... RENAME VALUE) on either server at any time without
 * touching a row, so that rows hashed before the freeze read otherwise in
 * it, and no row version tells.  "" when none.
 */
#define ENUMS_SQL \
	"(" COLUMN_TYPES_CTE \
	"SELECT COALESCE(pg_catalog.string_agg(pg_catalog.format('%s(%s)', pg_catalog.format_type(y.oid, NULL), " \
	"(SELECT pg_catalog.string_agg(pg_catalog.quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) " \
	"FROM pg_catalog.pg_enum e WHERE e.enumtypid OPERATOR(pg_catalog.=) y.oid)), ', ' " \
	"ORDER BY pg_catalog.format_type(y.oid, NULL)), '') " \
	"FROM ty JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) ty.oid WHERE y.typtype OPERATOR(pg_catalog.=) 'e')"

/*
 * Whether the columns of table $1 hold, at any depth, a type whose text
 * names a catalog object by its OID: a reg* type (regclass, regrole, ...)
 * or aclitem (roles).  Renaming the object (its owner may, on either
 * server, at any time) changes the text of rows that no write touched.
 */
#define NAMES_SQL \
	"(" COLUMN_TYPES_CTE \
	"SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) 0 FROM ty WHERE ty.oid OPERATOR(pg_catalog.=) ANY (" \
	"'{pg_catalog.regproc,pg_catalog.regprocedure,pg_catalog.regoper,pg_catalog.regoperator," \
	"pg_catalog.regclass,pg_catalog.regtype,pg_catalog.regrole,pg_catalog.regnamespace,pg_catalog.regconfig," \
	"pg_catalog.regdictionary,pg_catalog.regcollation,pg_catalog.aclitem}'::pg_catalog.regtype[]))"

/*
 * How deep the column of the outer query (atttypid) holds xml: 0 when its
 * type is xml or a domain over it, 1 an array of either (or a domain over
 * one), NULL otherwise.  xml keeps its input as given, and x::text reads it
 * so, but its output function drops an XML declaration that says nothing
 * but the version 1.0 and an encoding (and the newline after it): COPY and
 * logical replication carry '<doc/>' for '<?xml version="1.0"?>\n<doc/>',
 * and a hash of the output would see no difference.  The hash reads such a
 * column as text (text[]), and a composite's xml attributes by their paths
 * (XML_PATHS_SQL).
 */
#define XML_DEPTH_SQL \
	"(WITH RECURSIVE b(t, n) AS (SELECT atttypid, 0 UNION ALL SELECT CASE WHEN y.typbasetype " \
	"OPERATOR(pg_catalog.<>) 0 THEN y.typbasetype ELSE y.typelem END, b.n OPERATOR(pg_catalog.+) " \
	"(y.typbasetype OPERATOR(pg_catalog.=) 0)::pg_catalog.int4 FROM b JOIN pg_catalog.pg_type y " \
	"ON y.oid OPERATOR(pg_catalog.=) b.t WHERE y.typbasetype OPERATOR(pg_catalog.<>) 0 OR (y.typelem " \
	"OPERATOR(pg_catalog.<>) 0 AND y.typcategory OPERATOR(pg_catalog.=) 'A' AND b.n OPERATOR(pg_catalog.=) 0)) " \
	"SELECT pg_catalog.max(b.n) FROM b WHERE b.t OPERATOR(pg_catalog.=) 'pg_catalog.xml'::pg_catalog.regtype)"

/*
 * The xml attributes that the column of the outer query (attname,
 * atttypid) holds through composites (and domains over them), as text: a
 * composite's text is record_out()'s, which reads an xml attribute by its
 * output (XML_DEPTH_SQL tells why that does not do), so each such attribute
 * is read again by its path, "((t.col).attr)::pg_catalog.text" (text[] for
 * an array of xml), ", "-separated; NULL when none.  An xml attribute of a
 * composite in an array is not reached.
 */
#define XML_PATHS_SQL \
	"(WITH RECURSIVE p(e, t) AS (SELECT '(t.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(attname) " \
	"OPERATOR(pg_catalog.||) ')', atttypid UNION ALL SELECT CASE WHEN y.typbasetype OPERATOR(pg_catalog.<>) 0 " \
	"THEN p.e ELSE '(' OPERATOR(pg_catalog.||) p.e OPERATOR(pg_catalog.||) '.' OPERATOR(pg_catalog.||) " \
	"pg_catalog.quote_ident(c.attname) OPERATOR(pg_catalog.||) ')' END, CASE WHEN y.typbasetype " \
	"OPERATOR(pg_catalog.<>) 0 THEN y.typbasetype ELSE c.atttypid END FROM p JOIN pg_catalog.pg_type y " \
	"ON y.oid OPERATOR(pg_catalog.=) p.t LEFT JOIN pg_catalog.pg_attribute c ON y.typbasetype OPERATOR(pg_catalog.=) 0 " \
	"AND c.attrelid OPERATOR(pg_catalog.=) y.typrelid AND c.attnum OPERATOR(pg_catalog.>) 0 AND NOT c.attisdropped " \
	"WHERE y.typbasetype OPERATOR(pg_catalog.<>) 0 OR c.attrelid IS NOT NULL) " \
	"SELECT pg_catalog.string_agg(p.e OPERATOR(pg_catalog.||) CASE WHEN p.t OPERATOR(pg_catalog.=) " \
	"'pg_catalog.xml'::pg_catalog.regtype THEN '::pg_catalog.text' ELSE '::pg_catalog.text[]' END, ', ' ORDER BY p.e) " \
	"FROM p WHERE p.e OPERATOR(pg_catalog.<>) ('(t.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(attname) " \
	"OPERATOR(pg_catalog.||) ')') AND p.t OPERATOR(pg_catalog.=) ANY ('{pg_catalog.xml,pg_catalog.xml[]}'::pg_catalog.regtype[]))"

/*
 * The text of a row of each table: ROW(its columns, by name; pg_restore may
 * order an inherited table's columns otherwise), a bytea column by the hash
 * of its bytes (half the text, the same test), an xml column as text
 * (XML_DEPTH_SQL), followed by the xml attributes of a composite column
 * (XML_PATHS_SQL).  A table whose columns (names and types) differ between
 * the servers, by a migration during the move, is compared by its count
 * only: the cutover refuses it, naming it (copy_unchanged_legacy_rows() of
 * cutover.c).  One whose columns agree but whose composite types do not
 * (COMPOSITES_SQL), which the cutover does not compare, fails the move
 * here.  The hashes taken before the freeze of
 * a table whose columns changed since are dropped, and so are those of a
 * table whose text changed since on either server without a write: its
 * columns by number (ALTER TABLE ... RENAME COLUMN swapping two columns'
 * names, a column dropped and added again with a DEFAULT, neither of which
 * rewrites the table or changes the columns' names and types), the
 * expressions of its virtual generated columns (ALTER TABLE ... SET
 * EXPRESSION rewrites no row of them), its composite types' attributes by
 * number (COMPOSITE_NUMBERS_SQL) or its enums' labels (ENUMS_SQL); a
 * table whose text names catalog objects (NAMES_SQL) has none.
 */
static void
read_columns(Move *m)
{
	int			i,
				k,
				n = 0,
				j;
	const char **params = xcalloc(2 * m->ntables + 1, sizeof(char *));
	int		   *table = xcalloc(m->ntables + 1, sizeof(int));
	PGresult  **res[2] = {NULL, NULL};
	bool		sent[2] = {false, false},
				ok[2] = {false, false};
	char		why[2048] = "";
	const char *sql =
		"SELECT pg_catalog.string_agg(pg_catalog.format('%I %s', attname, "
		"pg_catalog.format_type(atttypid, atttypmod)), ', ' ORDER BY attname), "
		"'ROW(' OPERATOR(pg_catalog.||) COALESCE(pg_catalog.string_agg("
		"CASE WHEN atttypid OPERATOR(pg_catalog.=) 'pg_catalog.bytea'::pg_catalog.regtype "
		"THEN pg_catalog.format($2, 't.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(attname)) "
		"ELSE 't.' OPERATOR(pg_catalog.||) pg_catalog.quote_ident(attname) OPERATOR(pg_catalog.||) "
		"COALESCE((ARRAY['::pg_catalog.text', '::pg_catalog.text[]'])[" XML_DEPTH_SQL " OPERATOR(pg_catalog.+) 1], '') "
		"OPERATOR(pg_catalog.||) COALESCE(', ' OPERATOR(pg_catalog.||) " XML_PATHS_SQL ", '') "
		"END, ', ' ORDER BY attname), '') "
		"OPERATOR(pg_catalog.||) ')', " COMPOSITES_SQL ", " ENUMS_SQL " OPERATOR(pg_catalog.||) '; ' "
		"OPERATOR(pg_catalog.||) pg_catalog.string_agg(pg_catalog.format('%s %I %s %s', attnum, attname, "
		"pg_catalog.format_type(atttypid, atttypmod), (SELECT d.adbin::pg_catalog.text FROM pg_catalog.pg_attrdef d "
		"WHERE attgenerated OPERATOR(pg_catalog.=) 'v' AND d.adrelid OPERATOR(pg_catalog.=) attrelid "
		"AND d.adnum OPERATOR(pg_catalog.=) attnum)), ', ' ORDER BY attnum) OPERATOR(pg_catalog.||) '; ' "
		"OPERATOR(pg_catalog.||) " COMPOSITE_NUMBERS_SQL ", " NAMES_SQL " "
		"FROM pg_catalog.pg_attribute "
		"WHERE attrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass "
		"AND attnum OPERATOR(pg_catalog.>) 0 AND NOT attisdropped";

	/* one statement a table, all sent to both servers at once */
	for (i = 0; i < m->ntables; i++)
		if (m->tables[i].kind == 'r')
		{
			params[2 * n] = m->tables[i].qname;
			params[2 * n + 1] = m->verify->have_md5 ? "pg_catalog.md5(%s)" : "pg_catalog.sha256(%s)";
			table[n++] = i;
		}
	/* both answer before either has a batch under way, which fail() could not end */
	need(m, &m->from);
	need(m, &m->to);
	for (k = 0; k < 2; k++)
	{
		res[k] = xcalloc(n + 1, sizeof(PGresult *));
		sent[k] = batch_send(k == 0 ? &m->from : &m->to, n, sql, 2, params);
		if (!sent[k])
			break;
	}
	for (k = 0; k < 2; k++)
	{
		Server	   *s = k == 0 ? &m->from : &m->to;

		if (sent[k])
			ok[k] = batch_recv(s, n, res[k]);
		if (!ok[k] && why[0] == '\0')
		{
			/* the first statement that failed stopped the batch: its table */
			for (j = 0; sent[k] && j < n - 1 && res[k][j] != NULL; j++)
				;
			snprintf(why, sizeof(why), "could not read the columns of table %s on the %s server: %s",
					 n > 0 ? m->tables[table[j]].qname : m->qschema, s->option, db_error());
		}
	}
	free(params);
	free(table);
	if (!ok[0] || !ok[1])
	{
		for (k = 0; k < 2; k++)
		{
			for (j = 0; res[k] && j < n; j++)
				PQclear(res[k][j]);
			free(res[k]);
		}
		vfail(m, "%s", why);
	}
	for (i = 0, j = 0; i < m->ntables; i++)
	{
		char	   *sig[2] = {NULL, NULL},
				   *shape[2] = {NULL, NULL},
				   *row = NULL;
		bool		relabeled = false,
					by_name = false;

		if (m->tables[i].kind != 'r')
			continue;
		for (k = 0; k < 2; k++)
		{
			PGresult   *r = res[k][j];

			sig[k] = xstrdup(PQgetvalue(r, 0, 0));
			shape[k] = xstrdup(PQgetvalue(r, 0, 2));
			if (m->verify->sides[k].texts[i] != NULL && !is(m->verify->sides[k].texts[i], PQgetvalue(r, 0, 3)))
				relabeled = true;
			free(m->verify->sides[k].texts[i]);
			m->verify->sides[k].texts[i] = xstrdup(PQgetvalue(r, 0, 3));
			if (is(PQgetvalue(r, 0, 4), "t"))
				by_name = true;
			if (k == 0)
				row = xstrdup(PQgetvalue(r, 0, 1));
			PQclear(r);
		}
		j++;
		if (is(sig[0], sig[1]) && !is(shape[0], shape[1]))
		{
			char	   *a = shape[0],
					   *b = shape[1];

			for (; j < n; j++)
				for (k = 0; k < 2; k++)
					PQclear(res[k][j]);
			vfail(m, "the composite types in the columns of table %s differ between the --from server and the "
				  "--to server, whose text their values share: %s on the --from server, %s on the --to server; "
				  "make them the same on both servers and move the shard again",
				  m->tables[i].qname, a, b);
		}
		free(shape[0]);
		free(shape[1]);
		if (!is(sig[0], sig[1]))
		{
			free(row);
			row = NULL;
		}
		m->verify->by_name[i] = by_name;
		if (row == NULL || m->verify->row_of[i] == NULL || !is(row, m->verify->row_of[i]) || relabeled || by_name)
			for (k = 0; k < 2; k++)
			{
				free(m->verify->sides[k].before[i]);
				m->verify->sides[k].before[i] = NULL;
			}
		free(m->verify->row_of[i]);
		m->verify->row_of[i] = row;
		free(sig[0]);
		free(sig[1]);
	}
	free(res[0]);
	free(res[1]);
}

/* the hash of a row of table i (t); 0 for a table compared by its count */
static char *
hash_of(Move *m, int i)
{
	return m->verify->row_of[i] ? xprintf(m->verify->hash_form, m->verify->row_of[i]) : xstrdup("0::pg_catalog.int8");
}

/* "rows sum filenode" of every row of table i */
static char *
full_sql(Move *m, Side *s, int i)
{
	char	   *h = hash_of(m, i);
	char	   *lname = quote_literal(&s->work, m->tables[i].qname);
	char	   *r = xprintf("SELECT pg_catalog.concat_ws(' ', pg_catalog.count(*), COALESCE(pg_catalog.sum(%s), 0), "
							"pg_catalog.pg_relation_filenode(%s::pg_catalog.regclass)) FROM ONLY %s t",
							h, lname, m->tables[i].qname);

	free(h);
	free(lname);
	return r;
}

/*
 * "rows rows-where-q sum-where-q filenode" of table i, q the row versions
 * written or deleted since X: their xmin, or their xmax, in the xids from
 * X's xmin up to next, or their xmax in the MultiXactIds from the table's
 * relminmxid (below which the table holds none) up to next_multi: an
 * update of a row that others lock leaves a MultiXactId, which may be
 * older than X when the update came before X from a transaction X did not
 * see.  SQL tells no xid from a MultiXactId, so both windows are tried;
 * whatever else q takes in is counted on both scans and cancels out.
 */
static char *
delta_sql(Move *m, Side *s, int i, long long next, long long min_multi, long long next_multi)
{
	char	   *h = hash_of(m, i);
	char	   *lname = quote_literal(&s->work, m->tables[i].qname);
	long long	x = atoll(s->xmin);
	const char *xmax = "t.xmax::pg_catalog.text::pg_catalog.int8";
	char	   *q = xprintf("((pg_catalog.age(t.xmin) OPERATOR(pg_catalog.>=) (SELECT pg_catalog.age('%lld'::pg_catalog.xid)) "
							"AND pg_catalog.age(t.xmin) OPERATOR(pg_catalog.<=) (SELECT pg_catalog.age('%lld'::pg_catalog.xid))) "
							"OR (t.xmax OPERATOR(pg_catalog.<>) '0'::pg_catalog.xid "
							"AND ((%s OPERATOR(pg_catalog.-) %lld) OPERATOR(pg_catalog.&) 4294967295 OPERATOR(pg_catalog.<=) %lld "
							"OR (%s OPERATOR(pg_catalog.-) %lld) OPERATOR(pg_catalog.&) 4294967295 OPERATOR(pg_catalog.<=) %lld)))",
							next, x,
							xmax, x, (next - x) & 0xFFFFFFFFLL,
							xmax, min_multi, (next_multi - min_multi) & 0xFFFFFFFFLL);
	/* q and the hash once a row: OFFSET 0 keeps the subquery's column */
	char	   *r = xprintf("SELECT pg_catalog.concat_ws(' ', pg_catalog.count(*), pg_catalog.count(v.h), "
							"COALESCE(pg_catalog.sum(v.h), 0), pg_catalog.pg_relation_filenode(%s::pg_catalog.regclass)) "
							"FROM (SELECT CASE WHEN %s THEN %s END AS h FROM ONLY %s t OFFSET 0) v",
							lname, q, h, m->tables[i].qname);

	free(h);
	free(lname);
	free(q);
	return r;
}

/*
 * Send sql to s's work session, to run as owner (owner_values() of
 * objects.c tells why so); the answer comes by owner_recv()
 */
static bool
owner_send(Move *m, Side *s, const char *owner, const char *sql)
{
	char	   *fn = xprintf("%s.shardid_move_hash_%d", s->scratch, s->made++);
	char	   *qowner = quote_ident(&s->work, owner);
	char	   *create = xprintf("CREATE FUNCTION %s(pg_catalog.text) RETURNS pg_catalog.text "
								 "LANGUAGE plpgsql SECURITY DEFINER "
								 "SET search_path = pg_catalog, pg_temp SET row_security = off "
								 "AS $f$DECLARE r pg_catalog.text; "
								 "BEGIN EXECUTE $1 INTO r; RETURN r; END$f$", fn);
	char	   *own = xprintf("ALTER FUNCTION %s(pg_catalog.text) OWNER TO %s", fn, qowner);
	char	   *call = xprintf("SELECT %s($1::pg_catalog.text)", fn);
	const char *params[1] = {sql};
	bool		ok;

	ok = exec_sql(&s->work, create, 0) && exec_sql(&s->work, own, 0);
	if (!ok)
		snprintf(m->verify->why, sizeof(m->verify->why), "%s", db_error());
	else if (PQsendQueryParams(s->work.conn, call, 1, NULL, params, NULL, NULL, 0) != 1)
	{
		snprintf(m->verify->why, sizeof(m->verify->why), "%s", PQerrorMessage(s->work.conn));
		chomp(m->verify->why);
		ok = false;
	}
	free(fn);
	free(qowner);
	free(create);
	free(own);
	free(call);
	return ok;
}

/*
 * The answer of owner_send() into *out (a signal cancels it), then the
 * session's settings made again: a plain SET in the owner's code outlives
 * her function
 */
static bool
owner_recv(Move *m, Side *s, char **out)
{
	PGresult   *res;
	bool		ok = false;

	*out = NULL;
	cancel_arm(s->work.conn);
	if (interrupted_by)
	{
		PGcancel   *c = PQgetCancel(s->work.conn);
		char		buf[256];

		if (c)
		{
			PQcancel(c, buf, sizeof(buf));
			PQfreeCancel(c);
		}
	}
	while ((res = PQgetResult(s->work.conn)) != NULL)
	{
		if (PQresultStatus(res) == PGRES_TUPLES_OK && !ok)
		{
			ok = true;
			if (PQntuples(res) > 0 && !PQgetisnull(res, 0, 0))
				*out = xstrdup(PQgetvalue(res, 0, 0));
		}
		else if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			ok = false;
			snprintf(m->verify->why, sizeof(m->verify->why), "%s",
					 PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) ?
					 PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQerrorMessage(s->work.conn));
			chomp(m->verify->why);
		}
		PQclear(res);
	}
	cancel_disarm();
	if (ok && *out == NULL)
	{
		snprintf(m->verify->why, sizeof(m->verify->why), "no result");
		ok = false;
	}
	if (ok && !reset_settings(&s->work))
	{
		snprintf(m->verify->why, sizeof(m->verify->why), "%s", db_error());
		ok = false;
	}
	return ok;
}

/*
 * Table i's sql_from on the --from server and sql_to on the --to server
 * (either NULL: none there), both at once, each as the table's owner; fails
 * the move naming what
 */
static void
run_both(Move *m, int i, const char *what, char *sql_from, char *sql_to, char **from_out, char **to_out)
{
	char	   *sql[2] = {sql_from, sql_to};
	char	  **out[2] = {from_out, to_out};
	bool		sent[2] = {false, false};
	int			k;

	const char *owner[2] = {m->tables[i].owner,
	m->verify->to_owner ? m->verify->to_owner : m->tables[i].owner};

	for (k = 0; k < 2; k++)
	{
		if (sql[k] == NULL)
			continue;
		if (!owner_send(m, &m->verify->sides[k], owner[k], sql[k]))
			break;
		sent[k] = true;
	}
	for (k = 0; k < 2; k++)
	{
		char		msg[2048];

		if (sql[k] == NULL)
			continue;
		if (!sent[k])
		{
			snprintf(msg, sizeof(msg), "%s", m->verify->why);
			vfail(m, "could not %s table %s on the %s server as %s %s: %s", what, m->tables[i].qname,
				  m->verify->sides[k].server->option, owner[k] == m->tables[i].owner ? "its owner" : "the move's role",
				  owner[k], msg);
		}
		if (!owner_recv(m, &m->verify->sides[k], out[k]))
		{
			snprintf(msg, sizeof(msg), "%s", m->verify->why);
			if (k == 0 && sent[1])
			{
				char	   *other = NULL;

				(void) owner_recv(m, &m->verify->sides[1], &other);
				free(other);
			}
			if (interrupted_by)
				vfail(m, "interrupted");
			vfail(m, "could not %s table %s on the %s server as %s %s: %s", what, m->tables[i].qname,
				  m->verify->sides[k].server->option, owner[k] == m->tables[i].owner ? "its owner" : "the move's role",
				  owner[k], msg);
		}
	}
}

/*
 * A new transaction of s's work session, under snapshot (or its own), and
 * in it the schema of the owners' functions, with a new random name
 */
static bool
work_begin(Side *s, const char *snapshot)
{
	char	   *make;
	bool		ok;

	s->made = 0;
	free(s->scratch);
	s->scratch = random_name("shardid_move_");
	if (!side_connect(s, &s->work) ||
		!exec_sql(&s->work, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0))
		return false;
	if (snapshot)
	{
		char	   *l = quote_literal(&s->work, snapshot);
		char	   *sql = xprintf("SET TRANSACTION SNAPSHOT %s", l);

		ok = exec_sql(&s->work, sql, 0);
		free(l);
		free(sql);
		if (!ok)
			return false;
	}
	make = xprintf("CREATE SCHEMA %s", s->scratch);
	ok = exec_sql(&s->work, make, 0);
	free(make);
	return ok;
}

/*
 * The next xid and the next MultiXactId of server s (32 bits, as tuples
 * hold them), either of them
 */
static bool
next_ids(Server *s, long long *xid, long long *multi)
{
	PGresult   *res = query(s,
							"SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::pg_catalog.text::pg_catalog.int8 "
							"OPERATOR(pg_catalog.%) 4294967296, "
							"(pg_catalog.mxid_age('1'::pg_catalog.xid)::pg_catalog.int8 OPERATOR(pg_catalog.+) 1) "
							"OPERATOR(pg_catalog.&) 4294967295", 0);

	if (res == NULL)
		return false;
	if (xid)
		*xid = atoll(PQgetvalue(res, 0, 0));
	if (multi)
		*multi = atoll(PQgetvalue(res, 0, 1));
	PQclear(res);
	return true;
}

/*
 * Online, before the freeze: every row of every table hashed on both
 * servers, each under a snapshot its own session keeps until the
 * verification, which then hashes only what changed since.  A --to server
 * older than 16 holds its copy as the move's superuser's while the
 * subscription applies (hold_target_tables(), which checked the tables'
 * code as it does for the apply, which runs as a superuser there): its
 * rows are hashed as that superuser, the changes in the freeze as their
 * owners, once given back.
 */
void
hash_before_freeze(Move *m)
{
	int			i,
				k;
	double		t = now_seconds();
	long long	rows = 0;
	char		a[32];

	check_interrupt(m);
	need(m, &m->to);
	prepare(m);
	read_columns(m);
	if (PQserverVersion(m->to.conn) < 160000 &&
		!get_value(&m->to, &m->verify->to_owner, "SELECT current_user::pg_catalog.text", 0))
		vfail(m, "could not read the role of the move on the --to server: %s", db_error());
	for (k = 0; k < 2; k++)
	{
		Side	   *s = &m->verify->sides[k];
		PGresult   *res;

		close_side(s);
		if (!side_connect(s, &s->hold) ||
			!exec_sql(&s->hold, "BEGIN ISOLATION LEVEL REPEATABLE READ", 0) ||
			(res = query(&s->hold,
						 "SELECT pg_catalog.pg_export_snapshot(), (pg_catalog.pg_snapshot_xmin("
						 "pg_catalog.pg_current_snapshot())::pg_catalog.text::pg_catalog.int8 "
						 "OPERATOR(pg_catalog.%) 4294967296)::pg_catalog.text", 0)) == NULL)
			vfail(m, "could not take a snapshot of shard %d on the %s server: %s", m->shard, s->server->option,
				  db_error());
		s->snapshot = xstrdup(PQgetvalue(res, 0, 0));
		free(s->xmin);
		s->xmin = xstrdup(PQgetvalue(res, 0, 1));
		PQclear(res);
		if (!work_begin(s, s->snapshot))
			vfail(m, "could not read shard %d on the %s server: %s", m->shard, s->server->option, db_error());
	}
	for (i = 0; i < m->ntables; i++)
	{
		char	   *sf,
				   *st;

		if (m->tables[i].kind != 'r' || m->verify->by_name[i])
			continue;
		progress("hashing the rows before the freeze: table %s (%d of %d)", m->tables[i].qname, i + 1, m->ntables);
		sf = full_sql(m, &m->verify->sides[0], i);
		st = full_sql(m, &m->verify->sides[1], i);
		free(m->verify->sides[0].before[i]);
		free(m->verify->sides[1].before[i]);
		run_both(m, i, "hash the rows of", sf, st, &m->verify->sides[0].before[i], &m->verify->sides[1].before[i]);
		rows += atoll(m->verify->sides[0].before[i]);
		free(sf);
		free(st);
	}
	progress_end();
	for (k = 0; k < 2; k++)
		tx_rollback(&m->verify->sides[k].work);
	free(m->verify->to_owner);
	m->verify->to_owner = NULL;
	say("hashed the rows of %s (%s rows on the --from server) on both servers in %.1f s, before the freeze",
		count_of(m->ntables, "table", "tables"), fmt_count(a, sizeof(a), (double) rows), now_seconds() - t);
}

/*
 * In the freeze: s's tables held in EXCLUSIVE mode by the session that
 * keeps X (no row lock, no VACUUM may change a row version's header between
 * the scans), waiting for a lock at most FREEZE_LOCK_WAIT_MS at a time
 * (a savepoint keeps X when a wait times out), up to HOLD_WAIT_S in all:
 * a transaction that keeps rows locked (SELECT ... FOR UPDATE before the
 * freeze) would hold the freeze's pause for as long, and a hash of every
 * row needs no lock.  *busy tells that it was a lock that could not be had.
 */
#define HOLD_WAIT_S 2

static bool
hold_tables(Move *m, Side *s, bool *busy)
{
	double		deadline = now_seconds() + HOLD_WAIT_S;

	*busy = false;
	for (;;)
	{
		if (exec_sql(&s->hold, "SAVEPOINT shardid_move_lock", 0) &&
			exec_sql(&s->hold, FREEZE_LOCK_TIMEOUT_SQL, 0) &&
			lock_tables(m, &s->hold, "EXCLUSIVE"))
			return exec_sql(&s->hold, "RELEASE SAVEPOINT shardid_move_lock", 0);
		*busy = is(db_sqlstate(), SQLSTATE_LOCK_NOT_AVAILABLE);
		if (!*busy || now_seconds() > deadline || interrupted_by ||
			!exec_sql(&s->hold, "ROLLBACK TO SAVEPOINT shardid_move_lock", 0))
			return false;
		nap(RETRY_NAP_MS);
	}
}

/* a + b - c, numbers of any size, computed by server s */
static char *
add_sub(Move *m, Server *s, const char *a, const char *b, const char *c)
{
	char	   *r = NULL;

	if (!get_value(s, &r, "SELECT ($1::pg_catalog.numeric OPERATOR(pg_catalog.+) $2::pg_catalog.numeric "
				   "OPERATOR(pg_catalog.-) $3::pg_catalog.numeric)::pg_catalog.text", 3, a, b, c) || r == NULL)
		vfail(m, "could not query the %s server: %s", s->option, db_error());
	return r;
}

/* begin a transaction of each side's work session, under X or not */
static void
work_begin_both(Move *m, bool under_x)
{
	int			k;

	for (k = 0; k < 2; k++)
		if (!work_begin(&m->verify->sides[k], under_x ? m->verify->sides[k].snapshot : NULL))
			vfail(m, "could not read shard %d on the %s server: %s", m->shard, m->verify->sides[k].server->option, db_error());
}

/*
 * The freeze's part of the hashes taken before it, on both servers: the
 * tables held (hold_tables()), the bounds of q read, the changed row
 * versions hashed under the verification's snapshot F and, where F shows
 * that rows went, under X.  now[k][i] gets "rows sum" of table i on side k,
 * or stays NULL where the table must be hashed in full.  False when the
 * sessions that keep X are lost.
 */
static bool
hash_changes(Move *m, char **now[2], long long changed[2])
{
	long long	next[2],
				next_multi[2],
			   *min_multi[2] = {NULL, NULL};
	char	  **f[2] = {NULL, NULL},
			  **x[2] = {NULL, NULL};
	int			i,
				k;
	bool		ok = true,
				busy = false;

	for (k = 0; k < 2 && ok; k++)
	{
		Side	   *s = &m->verify->sides[k];

		min_multi[k] = xcalloc(m->ntables + 1, sizeof(long long));
		f[k] = xcalloc(m->ntables + 1, sizeof(char *));
		x[k] = xcalloc(m->ntables + 1, sizeof(char *));
		ok = s->hold.conn && PQstatus(s->hold.conn) == CONNECTION_OK && hold_tables(m, s, &busy) &&
			side_connect(s, &s->work) && next_ids(&s->work, &next[k], &next_multi[k]);
		for (i = 0; ok && i < m->ntables; i++)
		{
			char	   *mx = NULL;

			if (m->tables[i].kind != 'r')
				continue;
			ok = get_value(&s->work, &mx, "SELECT relminmxid::pg_catalog.text FROM pg_catalog.pg_class "
						   "WHERE oid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass", 1,
						   m->tables[i].qname) && mx != NULL;
			min_multi[k][i] = mx ? atoll(mx) : 0;
			free(mx);
		}
		if (!ok && interrupted_by)
			vfail(m, "interrupted");
	}
	if (!ok)
	{
		if (busy)
			warning_msg("a transaction on the %s server holds rows of shard %d locked, or a table of it in a mode "
						"that conflicts with EXCLUSIVE: hashing every row in the freeze, as no hash taken before "
						"it can be used", m->verify->sides[k - 1].server->option, m->shard);
		else
			warning_msg("the hashes of the rows taken before the freeze cannot be used (%s): hashing every row "
						"now", db_error());
		close_side(&m->verify->sides[0]);
		close_side(&m->verify->sides[1]);
		for (k = 0; k < 2; k++)
		{
			free(min_multi[k]);
			free(f[k]);
			free(x[k]);
		}
		return false;
	}

	/* F: the changed row versions it sees */
	work_begin_both(m, false);
	for (i = 0; i < m->ntables; i++)
	{
		char	   *sql[2] = {NULL, NULL};

		if (m->tables[i].kind != 'r' || m->verify->sides[0].before[i] == NULL || m->verify->sides[1].before[i] == NULL)
			continue;
		progress("verifying the rows changed since the hashes before the freeze: table %s", m->tables[i].qname);
		for (k = 0; k < 2; k++)
			sql[k] = delta_sql(m, &m->verify->sides[k], i, next[k], min_multi[k][i], next_multi[k]);
		run_both(m, i, "hash the changed rows of", sql[0], sql[1], &f[0][i], &f[1][i]);
		free(sql[0]);
		free(sql[1]);
	}
	for (k = 0; k < 2; k++)
		tx_rollback(&m->verify->sides[k].work);

	/*
	 * X: those it saw, where rows may have gone.  F sees every row version
	 * that X did not in q: when F's rows are X's and all of F's in q, each
	 * of those is new, none went, and X holds none in q.
	 */
	work_begin_both(m, true);
	for (i = 0; i < m->ntables; i++)
	{
		char	   *sql[2] = {NULL, NULL};

		if (f[0][i] == NULL)
			continue;
		for (k = 0; k < 2; k++)
		{
			long long	b_rows = 0,
						f_rows = 0,
						f_q = 0;

			if (sscanf(m->verify->sides[k].before[i], "%lld", &b_rows) != 1 ||
				sscanf(f[k][i], "%lld %lld", &f_rows, &f_q) != 2 || f_rows != b_rows + f_q)
				sql[k] = delta_sql(m, &m->verify->sides[k], i, next[k], min_multi[k][i], next_multi[k]);
		}
		if (sql[0] || sql[1])
			run_both(m, i, "hash the changed rows of", sql[0], sql[1], &x[0][i], &x[1][i]);
		free(sql[0]);
		free(sql[1]);
	}
	for (k = 0; k < 2; k++)
		tx_rollback(&m->verify->sides[k].work);

	/* before (X, all): rows sum file; x and f: rows q-rows q-sum file */
	for (i = 0; i < m->ntables; i++)
		for (k = 0; k < 2; k++)
		{
			long long	b_rows = 0,
						x_rows = 0,
						x_q = 0,
						f_rows = 0,
						f_q = 0;
			char		b_sum[64] = "",
						b_file[32] = "",
						x_sum[64] = "0",
						x_file[32] = "",
						f_sum[64] = "",
						f_file[32] = "";

			if (f[k][i] == NULL ||
				sscanf(m->verify->sides[k].before[i], "%lld %63s %31s", &b_rows, b_sum, b_file) != 3 ||
				sscanf(f[k][i], "%lld %lld %63s %31s", &f_rows, &f_q, f_sum, f_file) != 4)
				continue;
			if (x[k][i] == NULL)
			{
				x_rows = b_rows;
				snprintf(x_file, sizeof(x_file), "%s", f_file);
			}
			else if (sscanf(x[k][i], "%lld %lld %63s %31s", &x_rows, &x_q, x_sum, x_file) != 4)
				continue;
			/* the relation X read, and counts that add up; else every row */
			if (is(b_file, x_file) && is(x_file, f_file) && x_rows == b_rows && b_rows + f_q - x_q == f_rows)
			{
				char	   *sum = add_sub(m, m->verify->sides[k].server, b_sum, f_sum, x_sum);

				now[k][i] = xprintf("%lld %s", f_rows, sum);
				changed[k] += x_q + f_q;
				free(sum);
			}
		}
	for (k = 0; k < 2; k++)
	{
		for (i = 0; i < m->ntables; i++)
		{
			free(f[k][i]);
			free(x[k][i]);
		}
		free(f[k]);
		free(x[k]);
		free(min_multi[k]);
	}
	return true;
}

/*
 * The verification's part for the rows: counts and content hashes of every
 * table on both servers, equal, or the move fails naming the first table
 * that differs.  Returns the number of rows.
 */
long long
verify_rows(Move *m)
{
	char	  **now[2];
	bool		delta = false;
	long long	total = 0,
				changed[2] = {0, 0};
	int			i,
				k;
	double		t = now_seconds();

	prepare(m);
	read_columns(m);
	for (k = 0; k < 2; k++)
		now[k] = xcalloc(m->ntables + 1, sizeof(char *));

	/* the hashes before the freeze, if their snapshots are still kept */
	if (m->verify->sides[0].snapshot && m->verify->sides[1].snapshot)
		delta = hash_changes(m, now, changed);

	/*
	 * What the rows' text depends on read again, now that the tables are
	 * held (no ALTER TABLE) and the changed rows hashed: a change between
	 * the first reading and the hold leaves the table to the full hashes
	 */
	if (delta)
	{
		read_columns(m);
		for (i = 0; i < m->ntables; i++)
			if (m->verify->sides[0].before[i] == NULL || m->verify->sides[1].before[i] == NULL)
				for (k = 0; k < 2; k++)
				{
					free(now[k][i]);
					now[k][i] = NULL;
				}
	}

	/* every row of the rest, under one snapshot per server */
	work_begin_both(m, false);
	for (i = 0; i < m->ntables; i++)
	{
		char	   *sql[2] = {NULL, NULL};

		if (m->tables[i].kind != 'r')
			continue;
		for (k = 0; k < 2; k++)
			if (now[k][i] == NULL)
				sql[k] = full_sql(m, &m->verify->sides[k], i);
		if (sql[0] || sql[1])
		{
			progress("verifying the rows: table %s (%d of %d)", m->tables[i].qname, i + 1, m->ntables);
			run_both(m, i, "hash the rows of", sql[0], sql[1], &now[0][i], &now[1][i]);
		}
		free(sql[0]);
		free(sql[1]);
	}
	progress_end();
	close_side(&m->verify->sides[0]);
	close_side(&m->verify->sides[1]);
	if (delta)
	{
		char		a[32],
					b[32];

		say("hashed the row versions written or deleted since the hashes before the freeze (%s on the --from "
			"server, %s on the --to server) in %.1f s", fmt_count(a, sizeof(a), (double) changed[0]),
			fmt_count(b, sizeof(b), (double) changed[1]), now_seconds() - t);
	}

	for (i = 0; i < m->ntables; i++)
	{
		long long	a = 0,
					b = 0;
		char		ha[64] = "",
					hb[64] = "";

		if (m->tables[i].kind != 'r')
		{
			m->tables[i].rows = 0;
			continue;
		}
		(void) sscanf(now[0][i], "%lld %63s", &a, ha);
		(void) sscanf(now[1][i], "%lld %63s", &b, hb);
		m->tables[i].rows = a;
		total += a;
		if (a != b)
			fail(m, "table %s has %lld rows on the --from server but %lld on the --to server",
				 m->tables[i].qname, a, b);
		if (!is(ha, hb))
			fail(m, "the rows of table %s differ between the --from server and the --to server: %s on each, "
				 "but the hashes of their contents differ", m->tables[i].qname, count_of(a, "row", "rows"));
	}
	for (k = 0; k < 2; k++)
	{
		for (i = 0; i < m->ntables; i++)
			free(now[k][i]);
		free(now[k]);
	}
	return total;
}
