/*-------------------------------------------------------------------------
 *
 * feed.c
 *	  The shards an enabled subscription of this database feeds: the id
 *	  path refuses their ids until the subscription is disabled or dropped.
 *
 * A logical replication subscription applies rows through the apply
 * worker's own executor calls (ExecSimpleRelationInsert() and its kin): no
 * executor hook, no statement trigger, no DDL moment, so nothing raises
 * the floor of a shard whose rows it brings while it applies them (the
 * event trigger raises it when the subscription is disabled or dropped:
 * floor.c).  Meanwhile next_id() of that shard here could make ids that
 * sort below, or repeat, the ids it brings.  So while an enabled
 * subscription of this database has, in pg_subscription_rel, a table whose
 * id column's DEFAULT calls next_id() with a constant shard (the floor
 * module's per-table cache knows which), or whose ids an enabled set_id()
 * trigger makes, the id path refuses ids of that shard, naming the
 * subscription and the step.  A subscription with disable_on_error refuses
 * while disabled too: an apply error disables it from the apply worker
 * (DisableSubscription()), with no DDL moment either; an ALTER
 * SUBSCRIPTION that turns disable_on_error off while it is disabled (or
 * DROP) raises the floor and ends the refusal.
 *
 * The id path reads no table: each backend keeps the set of refused shards
 * (a bitmap of SHARDID_NSHARDS bits), recomputed only when it is stale: at
 * the backend's first id, and after an invalidation of pg_subscription or
 * pg_subscription_rel (syscache callbacks), or, while any table is
 * subscribed, when the floor module's cache forgets a subscribed table
 * (its relcache invalidation) or every table (pg_proc or pg_type changed:
 * next_id() and domains' DEFAULTs).  Recomputing lists this database's
 * subscriptions (a syscache list), and for those that refuse only their
 * tables' definitions (the relation cache, no lock on the table); with
 * none it reads nothing else.  During recovery nothing is refused here
 * (recovery refuses every id) and the set stays stale, for a promotion.
 *
 * src/feed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "commands/trigger.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "compat.h"
#include "feed.h"
#include "floor.h"

bool		shardid_feed_look = true;

/* the set of refused shards: known (else stale), any refused, which */
static bool feed_valid = false;
static bool feed_any = false;
static uint64 feed_shards[SHARDID_NSHARDS / 64];

/* the tables of this database's enabled subscriptions, in TopMemoryContext */
static List *feed_relids = NIL;

/* invalidations seen: a recompute that saw one meanwhile is stale */
static uint64 feed_invalidations = 0;

/* a recompute is under way: every invalidation may concern it */
static bool feed_computing = false;

/* recomputes in a row that met invalidations before one is kept */
#define FEED_TRIES 3

static void
feed_forget(void)
{
	feed_valid = false;
	shardid_feed_look = true;
	feed_invalidations++;
}

/* pg_subscription or pg_subscription_rel changed, in any database */
static void
feed_subscription_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	feed_forget();
}

/*
 * The floor module's cache forgot table relid's id columns (a relcache
 * invalidation), or every table's (InvalidOid: a relcache reset, or
 * next_id() or a domain's DEFAULT may have changed): only a subscribed
 * table matters
 */
static void
feed_relation_changed(Oid relid)
{
	if (feed_computing ||
		(feed_relids != NIL &&
		 (!OidIsValid(relid) || list_member_oid(feed_relids, relid))))
		feed_forget();
}

/*
 * The shards whose ids the enabled shardid.set_id() triggers of rel make
 * (the trigger's first argument), added to shards.  Such a trigger reads
 * the table's newest id once per backend (src/citus.c): rows a
 * subscription applies afterwards pass it, as they pass a DEFAULT.
 */
static Bitmapset *
trigger_shards(Relation rel, Bitmapset *shards)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	Oid			nsp;

	if (trigdesc == NULL)
		return shards;
	nsp = get_namespace_oid("shardid", true);
	for (int i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *trigger = &trigdesc->triggers[i];
		char	   *name;
		char	   *end;
		long		shard;

		if (trigger->tgenabled == TRIGGER_DISABLED || trigger->tgnargs != 2 ||
			!OidIsValid(nsp) || get_func_namespace(trigger->tgfoid) != nsp)
			continue;
		name = get_func_name(trigger->tgfoid);
		if (name == NULL || strcmp(name, "set_id") != 0)
			continue;
		errno = 0;
		shard = strtol(trigger->tgargs[0], &end, 10);
		if (errno == 0 && end != trigger->tgargs[0] && *end == '\0' &&
			shardid_shard_ok(shard))
			shards = bms_add_member(shards, (int) shard);
	}
	return shards;
}

/*
 * The shards of table relid's next_id() DEFAULTs and set_id() triggers;
 * NULL if it is gone.  Its relation cache entry is read without a lock on
 * the table: the id path of every role would otherwise wait for any
 * session that holds a subscribed table in ACCESS EXCLUSIVE mode (a role
 * with UPDATE on it may LOCK it).  The entry shows the committed definition; a change committed
 * later invalidates it, and the set with it (feed_relation_changed()).
 */
static Bitmapset *
table_shards(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	Bitmapset  *shards = NULL;

	if (rel == NULL)
		return NULL;
	if (rel->rd_rel->relkind == RELKIND_RELATION ||
		rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		shards = trigger_shards(rel, shardid_id_shards(rel));
	RelationClose(rel);
	return shards;
}

/*
 * Walk the subscriptions of this database that may apply rows with no DDL
 * moment after them, and their tables: the enabled ones, and the disabled
 * ones with disable_on_error (an apply error disabled it, or may have:
 * the apply worker's DisableSubscription() runs no event trigger, so no
 * floor was raised).  With want < 0: fill shards and *relids.  With want a
 * shard: stop at the first table that feeds it, returning the
 * subscription's name, whether it has disable_on_error and the table's
 * oid (for the error), or false.
 */
static bool
feed_walk(int32 want, uint64 *shards, List **relids, char **subname,
		  bool *onerr, Oid *relid_out)
{
	CatCList   *list;
	int			present = -1;	/* next_id() here: looked up at a first table */
	bool		found = false;

	list = SearchSysCacheList1(SUBSCRIPTIONNAME, ObjectIdGetDatum(MyDatabaseId));
	for (int i = 0; i < list->n_members && !found; i++)
	{
		Form_pg_subscription sub = (Form_pg_subscription) GETSTRUCT(&list->members[i]->tuple);
		List	   *rels;
		ListCell   *lc;

		if (!sub->subenabled && !sub->subdisableonerr)
			continue;
		rels = shardid_subscription_relations(sub->oid);
		foreach(lc, rels)
		{
			Oid			relid = ((SubscriptionRelState *) lfirst(lc))->relid;
			Bitmapset  *fed;
			int			shard = -1;

			if (relids != NULL)
			{
				MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

				*relids = lappend_oid(*relids, relid);
				MemoryContextSwitchTo(old);
			}
			if (present < 0)
				present = shardid_next_id_present() ? 1 : 0;
			if (present == 0)
				continue;
			fed = table_shards(relid);
			if (want >= 0 && bms_is_member(want, fed))
			{
				*subname = pstrdup(NameStr(sub->subname));
				*onerr = sub->subdisableonerr;
				*relid_out = relid;
				found = true;
				break;
			}
			while (shards != NULL && (shard = bms_next_member(fed, shard)) >= 0)
				shards[shard >> 6] |= UINT64CONST(1) << (shard & 63);
			bms_free(fed);
		}
		list_free_deep(rels);
	}
	ReleaseSysCacheList(list);
	return found;
}

/*
 * Compute the set of refused shards again.  Reading a table's definition
 * may process invalidations: where one came in meanwhile, again, up to
 * FEED_TRIES times, after which the set is used but stays stale.  An error
 * leaves it stale too.
 */
static void
feed_recompute(void)
{
	uint64		shards[SHARDID_NSHARDS / 64];

	if (RecoveryInProgress())
		return;
	for (int tries = 0; tries < FEED_TRIES; tries++)
	{
		uint64		seen = feed_invalidations;
		List	   *relids = NIL;
		bool		any = false;

		memset(shards, 0, sizeof(shards));
		feed_computing = true;
		PG_TRY();
		{
			(void) feed_walk(-1, shards, &relids, NULL, NULL, NULL);
		}
		PG_FINALLY();
		{
			feed_computing = false;
		}
		PG_END_TRY();
		list_free(feed_relids);
		feed_relids = relids;
		for (int w = 0; w < (int) lengthof(shards); w++)
			any = any || shards[w] != 0;
		memcpy(feed_shards, shards, sizeof(shards));
		feed_any = any;
		if (seen == feed_invalidations)
		{
			feed_valid = true;
			shardid_feed_look = any;
			return;
		}
	}
}

/* whether the set refuses shard */
static inline bool
feed_refuses(int32 shard)
{
	return feed_any && ((feed_shards[shard >> 6] >> (shard & 63)) & 1) != 0;
}

/*
 * The id path's look at the set (shardid_feed_check()), when it is stale
 * or refuses a shard: made again if stale; the error of an id of shard if
 * an enabled subscription feeds it.  A subscription that no longer feeds
 * it (it changed since the set was made) makes the set again and lets the
 * id go on.
 */
void
shardid_feed_look_at(int32 shard)
{
	char	   *subname = NULL;
	bool		onerr = false;
	Oid			relid = InvalidOid;
	char	   *nspname;
	char	   *relname;
	const char *table;
	const char *qsub;

	if (!feed_valid)
		feed_recompute();
	if (!feed_refuses(shard))
		return;
	if (!feed_walk(shard, NULL, NULL, &subname, &onerr, &relid))
	{
		feed_forget();
		feed_recompute();
		if (!feed_refuses(shard) ||
			!feed_walk(shard, NULL, NULL, &subname, &onerr, &relid))
			return;
	}
	nspname = get_namespace_name(get_rel_namespace(relid));
	relname = get_rel_name(relid);
	table = quote_qualified_identifier(nspname != NULL ? nspname : "?",
									   relname != NULL ? relname : "?");
	qsub = quote_identifier(subname);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("shard %d receives rows from subscription \"%s\"", shard, subname),
			 onerr ?
			 errdetail("The subscription applies rows with ids of their own into table %s, whose new rows get ids of shard %d, and with disable_on_error an apply error disables it without raising the shard's floor: new ids could repeat those rows or sort below them.",
					   table, shard) :
			 errdetail("The subscription applies rows with ids of their own into table %s, whose new rows get ids of shard %d: new ids could repeat them or sort below them, and nothing raises the shard's floor while the subscription applies.",
					   table, shard),
			 onerr ?
			 errhint("Once the publisher no longer writes shard %d: ALTER SUBSCRIPTION %s DISABLE, then ALTER SUBSCRIPTION %s SET (disable_on_error = false); or DROP SUBSCRIPTION %s; either raises the shard's floor, and its ids are made again.",
					 shard, qsub, qsub, qsub) :
			 errhint("Once the publisher no longer writes shard %d: ALTER SUBSCRIPTION %s DISABLE, or DROP SUBSCRIPTION %s; either raises the shard's floor, and its ids are made again.",
					 shard, qsub, qsub)));
}

/* from _PG_init(): the invalidations that make the set stale */
void
shardid_feed_init(void)
{
	CacheRegisterSyscacheCallback(SUBSCRIPTIONOID, feed_subscription_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(SUBSCRIPTIONRELMAP, feed_subscription_changed, (Datum) 0);
	shardid_id_columns_forgotten(feed_relation_changed);
}
