/*-------------------------------------------------------------------------
 *
 * mark.c
 *	  What shardid keeps durably: a high-water mark H of id times, and the
 *	  epoch the server's ids were made with.  And the refusals that follow
 *	  from them: no ids during recovery, none under another epoch.
 *
 * Both values live in replication origins, rows of the shared catalog
 * pg_replication_origin created by the extension script:
 *
 *	  shardid_high_water   remote_lsn = H, in ms since the Unix epoch
 *	  shardid_epoch        remote_lsn = the epoch in ms + 1 (0: none yet)
 *
 * PostgreSQL's core keeps an origin's progress for us: replorigin_advance()
 * with wal_log WAL-logs XLOG_REPLORIGIN_SET, which the startup process
 * replays after a crash and on every streaming standby; checkpoints and
 * restartpoints write the progress of every origin to
 * pg_logical/replorigin_checkpoint (fsynced), which is read back at start
 * before WAL from the checkpoint's redo point on is replayed.  So after a
 * crash, a restart or a promotion the server knows the last H that was
 * flushed before it, without shardid being preloaded and without a WAL
 * resource manager of its own.  Each write of H is flushed, and confirmed
 * by the synchronous standbys (as a commit with synchronous_commit = on is,
 * whatever the writing session's setting), before an id past the old H is
 * handed out.  No lock is held across that wait.
 *
 * The mark needs a replication origin state slot (shardid_origin_slots in
 * compat.h); the origins are looked up by name when needed, which needs
 * catalog access, so never on the hot path.
 *
 * src/mark.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogdefs.h"
#include "catalog/namespace.h"
#include "catalog/pg_replication_origin.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "replication/origin.h"
#include "replication/syncrep.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "compat.h"
#include "clock.h"
#include "mark.h"
#include "settings.h"

#define HIGH_WATER_ORIGIN	"shardid_high_water"
#define EPOCH_ORIGIN		"shardid_epoch"
#define SHARDID_ORIGINS		2	/* the two above */

static bool tranche_registered = false;

static void
atomic_max_u64(pg_atomic_uint64 *var, uint64 value)
{
	uint64		cur = pg_atomic_read_u64(var);

	while (value > cur && !pg_atomic_compare_exchange_u64(var, &cur, value))
		;
}

/* set up the mark in new shared memory */
void
shardid_mark_init(ShardidMark *mark)
{
	pg_atomic_init_u64(&mark->high_water, 0);
	pg_atomic_init_u32(&mark->generation, 1);
	pg_atomic_init_u32(&mark->raising, 0);
	pg_atomic_init_u64(&mark->writes, 0);
	pg_atomic_init_u64(&mark->unconfirmed, 0);
	ConditionVariableInit(&mark->raised);
	mark->tranche_id = LWLockNewTrancheId();
	LWLockInitialize(&mark->lock, mark->tranche_id);
}

/* name the mark lock's tranche in this backend, for wait events */
void
shardid_mark_name_tranche(ShardidMark *mark)
{
	if (!tranche_registered)
	{
		LWLockRegisterTranche(mark->tranche_id, "shardid");
		tranche_registered = true;
	}
}

/*
 * At server start with shardid preloaded: refuse to start when there are
 * fewer replication origin state slots than shardid's two origins need.
 * Otherwise the startup process would meet the origins' WAL records or
 * checkpoint file with no slot free and stop with a PANIC (a primary) or
 * a FATAL in redo (a standby), far from the cause.
 */
void
shardid_mark_check_slots(void)
{
	if (shardid_origin_slots < SHARDID_ORIGINS)
		ereport(FATAL,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("shardid needs %d replication origin slots, but " SHARDID_ORIGIN_SLOTS_NAME " is %d",
						SHARDID_ORIGINS, shardid_origin_slots),
				 errdetail("shardid keeps its durable high-water mark and the epoch of its ids in the replication origins \"%s\" and \"%s\", which every server replaying its WAL must be able to hold.",
						   HIGH_WATER_ORIGIN, EPOCH_ORIGIN),
				 errhint("Set " SHARDID_ORIGIN_SLOTS_NAME " to at least %d more than subscriptions and other users of replication origins need, on the primary and on every standby.",
						 SHARDID_ORIGINS)));
}

void
shardid_refuse_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot make shardid ids during recovery"),
				 errdetail("This server is a standby or is replaying WAL; ids made here could repeat ids made on the primary."),
				 errhint("Make ids on the primary. The decoders and range helpers work here.")));
}

/*
 * The step that applies this database's floors: shardid.apply_floors(), or
 * in a database whose shardid is older than 1.4 (the library installed,
 * ALTER EXTENSION ... UPDATE not run yet, or run after pg_upgrade in
 * another database only) the update, which applies them too.  For the
 * hints of the errors that refuse ids until then.
 */
static bool
catalog_has_apply_floors(void)
{
	Oid			nsp = get_namespace_oid("shardid", true);

	return OidIsValid(nsp) &&
		SearchSysCacheExists3(PROCNAMEARGSNSP, CStringGetDatum("apply_floors"),
							  PointerGetDatum(buildoidvector(NULL, 0)),
							  ObjectIdGetDatum(nsp));
}

static const char *
floors_step(void)
{
	return catalog_has_apply_floors() ? "SELECT shardid.apply_floors();" :
		"ALTER EXTENSION shardid UPDATE;";
}

/* the id of a replication origin of shardid's, InvalidRepOriginId if missing */
static RepOriginId
find_origin(const char *name, bool missing_ok)
{
	RepOriginId node;

	if (shardid_origin_slots == 0)
	{
		if (missing_ok)
			return InvalidRepOriginId;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid needs replication origins, but " SHARDID_ORIGIN_SLOTS_NAME " is 0"),
				 errdetail("shardid keeps its durable high-water mark and the epoch of its ids in the replication origins \"%s\" and \"%s\".",
						   HIGH_WATER_ORIGIN, EPOCH_ORIGIN),
				 errhint("Set " SHARDID_ORIGIN_SLOTS_NAME " to at least 2 more than other uses need, on the primary and its standbys, and restart.")));
	}
	node = replorigin_by_name(name, true);
	if (node == InvalidRepOriginId && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("replication origin \"%s\" does not exist", name),
				 errdetail("shardid keeps its durable high-water mark and the epoch of its ids in the replication origins \"%s\" and \"%s\".",
						   HIGH_WATER_ORIGIN, EPOCH_ORIGIN),
				 errhint("As a superuser, run %s in every database that uses shardid (after pg_upgrade, which does not carry origins): it creates the origin \"%s\" and raises the floor of every registered shard.",
						 floors_step(), name)));
	return node;
}

/*
 * Set an origin's progress to value, WAL-logged, and wait until that WAL is
 * flushed and confirmed by the synchronous standbys, if any, whatever this
 * session's synchronous_commit: for this write synchronous_commit is at
 * least "on" (remote_flush), so that an id below the new value is covered
 * for every session, including those with synchronous_commit "on" that use
 * the value without writing it (the rule of the README's "Failover and
 * restarts").  A cancel, a statement_timeout or a terminate cuts that wait
 * short; the value may then not be relied on, and this raises an error.
 *
 * The caller holds RowExclusiveLock on pg_replication_origin, which keeps
 * the origin from being dropped meanwhile (as core does), and no LWLock.
 */
static void
write_origin(RepOriginId node, uint64 value, bool go_backward)
{
	int			nest_level = NewGUCNestLevel();
	XLogRecPtr	lsn;
	bool		confirmed;

	if (synchronous_commit < SYNCHRONOUS_COMMIT_REMOTE_FLUSH)
		(void) set_config_option("synchronous_commit", "on",
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
	/* always WAL-logs, so the record's end covers every earlier write */
	replorigin_advance(node, (XLogRecPtr) value, InvalidXLogRecPtr,
					   go_backward, true);
	lsn = XactLastRecEnd;
	XLogFlush(lsn);
	/* as at commit: a cancel ends the wait early, with a warning */
	HOLD_INTERRUPTS();
	SyncRepWaitForLSN(lsn, false);
	confirmed = shardid_sync_flush_confirmed(lsn);
	RESUME_INTERRUPTS();
	AtEOXact_GUC(true, nest_level);
	/* a terminate, or a cancel that came after the confirmation */
	CHECK_FOR_INTERRUPTS();
	if (!confirmed)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling the wait for the synchronous standbys to confirm shardid's high-water mark"),
				 errdetail("No id past the previous high-water mark is handed out until the synchronous standbys have confirmed the new one.")));
}

/* the durable H: every id handed out so far has a time at or below it */
int64
shardid_mark_durable(void)
{
	return (int64) replorigin_get_progress(find_origin(HIGH_WATER_ORIGIN, false),
										   false);
}

/* a backend that exits while it raises H lets the waiters go */
static void
raise_exit_callback(int code, Datum arg)
{
	ShardidMark *mark = (ShardidMark *) DatumGetPointer(arg);
	uint32		pid = (uint32) MyProcPid;

	if (pg_atomic_compare_exchange_u32(&mark->raising, &pid, 0))
		ConditionVariableBroadcast(&mark->raised);
}

/*
 * Write H = target durably, confirmed, and publish it to the other
 * backends; the caller has claimed mark->raising.  On an error (the wait
 * cut short, say) the claim is given up and the waiters are woken, H stays
 * unpublished, and the error goes on.
 */
static void
raise_claimed(ShardidMark *mark, int64 target)
{
	PG_TRY();
	{
		LockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
		write_origin(find_origin(HIGH_WATER_ORIGIN, false), (uint64) target, false);
		atomic_max_u64(&mark->high_water, (uint64) target);
		pg_atomic_fetch_add_u64(&mark->writes, 1);
		UnlockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
	}
	PG_CATCH();
	{
		pg_atomic_fetch_add_u64(&mark->unconfirmed, 1);
		pg_atomic_write_u32(&mark->raising, 0);
		ConditionVariableBroadcast(&mark->raised);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pg_atomic_write_u32(&mark->raising, 0);
	ConditionVariableBroadcast(&mark->raised);
}

/* claim the right to raise H; false if another backend has it */
static bool
claim_raise(ShardidMark *mark)
{
	static bool callback_registered = false;
	uint32		expected = 0;

	if (!callback_registered)
	{
		before_shmem_exit(raise_exit_callback, PointerGetDatum(mark));
		callback_registered = true;
	}
	return pg_atomic_compare_exchange_u32(&mark->raising, &expected,
										  (uint32) MyProcPid);
}

/*
 * Make H durable at least SHARDID_MARK_MARGIN_MS past need_ms.  When need_ms
 * is still within H, this raises H ahead of need, unless another backend is
 * doing so already; past H, it waits until H covers need_ms, raising it
 * itself when no other backend does.  At most one write per
 * SHARDID_MARK_WINDOW_MS of id time: H goes that far past the id.
 *
 * No lock is held while the write is flushed and confirmed: one backend
 * claims the raise (mark->raising), the others sleep on a condition
 * variable, interruptibly, so that a cancel, statement_timeout or terminate
 * ends their wait at once with the usual error.
 */
void
shardid_mark_raise(ShardidMark *mark, int64 need_ms)
{
	for (;;)
	{
		int64		high = (int64) pg_atomic_read_u64(&mark->high_water);

		if (need_ms + SHARDID_MARK_MARGIN_MS <= high)
			return;
		if (claim_raise(mark))
		{
			if (need_ms + SHARDID_MARK_MARGIN_MS <=
				(int64) pg_atomic_read_u64(&mark->high_water))
			{
				/* raised by another backend meanwhile */
				pg_atomic_write_u32(&mark->raising, 0);
				ConditionVariableBroadcast(&mark->raised);
				return;
			}
			raise_claimed(mark, Max(need_ms, shardid_clock_ms()) +
						  SHARDID_MARK_WINDOW_MS + SHARDID_MARK_MARGIN_MS);
			return;
		}
		if (need_ms <= high)
			return;				/* ahead of need: the other backend raises */

		/* wait for the other backend's raise to end, then look again */
		ConditionVariablePrepareToSleep(&mark->raised);
		while (need_ms > (int64) pg_atomic_read_u64(&mark->high_water) &&
			   pg_atomic_read_u32(&mark->raising) != 0)
			ConditionVariableSleep(&mark->raised, shardid_wait_event_high_water());
		ConditionVariableCancelSleep();
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Raise H to at least unix_ms, durably and confirmed like any raise, for
 * shardid.raise_high_water(); mark is NULL in session mode.  Waits for a
 * raise in progress.  Returns H.
 */
int64
shardid_mark_set(ShardidMark *mark, int64 unix_ms)
{
	RepOriginId node;
	int64		high;

	shardid_refuse_in_recovery();
	if (mark == NULL)
	{
		LockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
		node = find_origin(HIGH_WATER_ORIGIN, false);
		high = (int64) replorigin_get_progress(node, false);
		if (unix_ms > high)
		{
			write_origin(node, (uint64) unix_ms, false);
			high = unix_ms;
		}
		UnlockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
		return high;
	}
	for (;;)
	{
		high = (int64) pg_atomic_read_u64(&mark->high_water);
		if (unix_ms <= high)
			return high;
		if (claim_raise(mark))
		{
			raise_claimed(mark, unix_ms);
			return unix_ms;
		}
		ConditionVariablePrepareToSleep(&mark->raised);
		while (pg_atomic_read_u32(&mark->raising) != 0)
			ConditionVariableSleep(&mark->raised, shardid_wait_event_high_water());
		ConditionVariableCancelSleep();
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Refuse to stamp under another epoch than the one the server's ids were
 * made with; remember the epoch in force when none is remembered yet.
 */
void
shardid_check_epoch(void)
{
	RepOriginId node = find_origin(EPOCH_ORIGIN, false);
	uint64		stored = replorigin_get_progress(node, false);
	int64		remembered;

	if (stored == 0)
	{
		/* first ids of this server: two sessions may race, the larger wins */
		LockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
		node = find_origin(EPOCH_ORIGIN, false);
		write_origin(node, (uint64) shardid_epoch_ms + 1, false);
		UnlockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
		stored = replorigin_get_progress(node, false);
	}
	remembered = (int64) stored - 1;
	if (remembered != shardid_epoch_ms)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid.epoch is %s, but this server's ids were made with epoch %s",
						shardid_format_unix_ms(shardid_epoch_ms),
						shardid_format_unix_ms(remembered)),
				 errdetail("Ids made under another epoch would repeat ids made before, or sort before them."),
				 errhint("Set shardid.epoch back to '%s'. To start over under the new epoch on purpose (a migration step: the ids made so far must not share tables with the new ones), a superuser calls shardid.adopt_epoch().",
						 shardid_format_unix_ms(remembered))));
}

/*
 * Whether the epoch in force is the one the server's ids were made with
 * (or none is remembered yet), without an error: for the event trigger
 * that raises a floor, which must not fail the DDL that fired it.
 */
bool
shardid_epoch_matches(void)
{
	RepOriginId node = find_origin(EPOCH_ORIGIN, true);
	uint64		stored;

	if (node == InvalidRepOriginId)
		return false;
	stored = replorigin_get_progress(node, false);
	return stored == 0 || (int64) stored - 1 == shardid_epoch_ms;
}

/*
 * Remember the epoch in force as the epoch of the server's ids, whatever
 * was remembered before.  mark (strict mode) is told, so that every backend
 * checks its epoch again.  Returns the epoch, in ms.
 */
int64
shardid_adopt_epoch(ShardidMark *mark)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to adopt an epoch"),
				 errdetail("Only superusers may change the epoch that the server's ids are made with.")));
	shardid_refuse_in_recovery();
	LockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
	write_origin(find_origin(EPOCH_ORIGIN, false),
				 (uint64) shardid_epoch_ms + 1, true);
	UnlockRelationOid(ReplicationOriginRelationId, RowExclusiveLock);
	if (mark != NULL)
		pg_atomic_fetch_add_u32(&mark->generation, 1);
	return shardid_epoch_ms;
}

/*
 * Refuse ids in a database whose floors this server has not applied: the
 * replication origin shardid_floors_<database oid>, made by CREATE
 * EXTENSION, the update to 1.4 and shardid.apply_floors(), is missing.
 * pg_upgrade carries the database (its oid, the registry's floors, the
 * tables) but no origin, so neither H nor the floors cover the stored ids
 * there; CREATE DATABASE ... TEMPLATE copies a database's rows to a new
 * oid.  Once per backend (prepare() in shared.c), never per id.
 */
void
shardid_check_database_floors(void)
{
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), SHARDID_FLOORS_ORIGIN_PREFIX "%u", MyDatabaseId);

	/*
	 * A database whose shardid is older than 1.4 (the library was updated,
	 * ALTER EXTENSION shardid UPDATE not yet run) makes ids as its release
	 * did; the update applies its floors and makes the origin.
	 */
	if (replorigin_by_name(name, true) == InvalidRepOriginId &&
		catalog_has_apply_floors())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the floors of the shards of database \"%s\" are not applied on this server",
						get_database_name(MyDatabaseId)),
				 errdetail("The replication origin \"%s\" is missing: the database came here without CREATE EXTENSION (pg_upgrade, CREATE DATABASE ... TEMPLATE), so new ids could sort before its stored ones.",
						   name),
				 errhint("As a superuser, run %s in this database.", floors_step())));
}

/* whether shardid's two origins exist, for shardid.mark_status() */
void
shardid_mark_origins(bool *high_water, bool *epoch)
{
	*high_water = find_origin(HIGH_WATER_ORIGIN, true) != InvalidRepOriginId;
	*epoch = find_origin(EPOCH_ORIGIN, true) != InvalidRepOriginId;
}

/* H and the remembered epoch as the origins hold them, for shardid.info() */
void
shardid_mark_report(int64 *high_water, bool *high_water_known,
					int64 *epoch, bool *epoch_known)
{
	RepOriginId node;
	uint64		v;

	*high_water_known = *epoch_known = false;
	node = find_origin(HIGH_WATER_ORIGIN, true);
	if (node != InvalidRepOriginId && (v = replorigin_get_progress(node, false)) != 0)
	{
		*high_water = (int64) v;
		*high_water_known = true;
	}
	node = find_origin(EPOCH_ORIGIN, true);
	if (node != InvalidRepOriginId && (v = replorigin_get_progress(node, false)) != 0)
	{
		*epoch = (int64) v - 1;
		*epoch_known = true;
	}
}
