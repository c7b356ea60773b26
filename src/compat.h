/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL versions shardid builds
 *	  against is bridged here, and nowhere else.  CI builds and tests it on
 *	  PostgreSQL 15, 17 and 18 (README, "Supported versions").
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_COMPAT_H
#define SHARDID_COMPAT_H

#include "utils/datetime.h"
#include "utils/guc.h"

/*
 * 15 is the oldest version supported, so what it added is used without a
 * test: shmem_request_hook (shared.c), MarkGUCPrefixReserved() (settings.c).
 */
#if PG_VERSION_NUM < 150000
#error "shardid requires PostgreSQL 15 or later"
#endif

/*
 * PG 17 added the dynamic shared memory registry, which gives an extension
 * shared memory without shared_preload_libraries.
 */
#if PG_VERSION_NUM >= 170000
#define SHARDID_HAVE_DSM_REGISTRY 1
#include "storage/dsm_registry.h"
#endif

/*
 * Replication origins have state slots of their own from PG 18 on
 * (max_active_replication_origins); before, they share the number of
 * max_replication_slots.
 */
#if PG_VERSION_NUM >= 180000
#include "replication/origin.h"
#define shardid_origin_slots max_active_replication_origins
#define SHARDID_ORIGIN_SLOTS_NAME "max_active_replication_origins"
#else
#include "replication/slot.h"
#define shardid_origin_slots max_replication_slots
#define SHARDID_ORIGIN_SLOTS_NAME "max_replication_slots"
#endif

/*
 * PG 18 replaced pg_attribute_noreturn(), written after a declaration, with
 * pg_noreturn, written before it; declare with pg_noreturn:
 *	 pg_noreturn extern void f(void);
 */
#ifndef pg_noreturn
#if defined(__GNUC__) || defined(__SUNPRO_C)
#define pg_noreturn __attribute__((noreturn))
#else
#define pg_noreturn
#endif
#endif

/*
 * A GUC check hook's "extra" is allocated with guc_malloc() from PG 16 on,
 * with plain malloc() before.
 */
#if PG_VERSION_NUM < 160000
#define guc_malloc(elevel, size) malloc(size)
#endif

/*
 * The wait event of a backend waiting for another one's raise of the
 * high-water mark: from PG 17 on a name of shardid's own
 * (WaitEventExtensionNew, looked up once per backend), before that the
 * generic "Extension".
 */
#if PG_VERSION_NUM >= 170000
#include "utils/wait_event.h"
static inline uint32
shardid_wait_event_high_water(void)
{
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("ShardidHighWater");
	return event;
}
#else
#include "utils/wait_event.h"
#define shardid_wait_event_high_water() ((uint32) PG_WAIT_EXTENSION)
#endif

/*
 * Whether the synchronous standbys have confirmed the flush of WAL up to
 * lsn, or none are to be waited for: what SyncRepWaitForLSN(lsn, false)
 * waited for, told after it returned (it returns on a cancel too).  The
 * caller holds no SyncRepLock.  Minor releases of May 2025 replaced
 * WalSndCtl->sync_standbys_defined with sync_standbys_status.
 */
#include "access/xact.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/lwlock.h"
static inline bool
shardid_sync_flush_confirmed(XLogRecPtr lsn)
{
	bool		confirmed;

	if (!SyncRepRequested() || WalSndCtl == NULL)
		return true;
	LWLockAcquire(SyncRepLock, LW_SHARED);
#ifdef SYNC_STANDBY_INIT
	if (WalSndCtl->sync_standbys_status & SYNC_STANDBY_INIT)
		confirmed = (WalSndCtl->sync_standbys_status & SYNC_STANDBY_DEFINED) == 0;
	else
		confirmed = SyncRepStandbyNames == NULL || SyncRepStandbyNames[0] == '\0';
#else
	confirmed = !WalSndCtl->sync_standbys_defined;
#endif
	confirmed = confirmed || lsn <= WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH];
	LWLockRelease(SyncRepLock);
	return confirmed;
}

/*
 * A set-returning function that fills a tuplestore in one call: PG 15
 * named the helper SetSingleFuncCall(), 16 InitMaterializedSRF().
 */
#include "funcapi.h"
#if PG_VERSION_NUM >= 160000
#define shardid_materialize(fcinfo) InitMaterializedSRF((fcinfo), 0)
#else
#define shardid_materialize(fcinfo) SetSingleFuncCall((fcinfo), 0)
#endif

/* PG 18 gave index_beginscan() an argument for instrumentation */
#include "access/genam.h"
static inline IndexScanDesc
shardid_index_beginscan(Relation heap, Relation index, Snapshot snapshot,
						int nkeys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan(heap, index, snapshot, NULL, nkeys, 0);
#else
	return index_beginscan(heap, index, snapshot, nkeys, 0);
#endif
}

/* PG 16 gave DecodeDateTime() an argument for error details */
static inline int
shardid_decode_datetime(char **field, int *ftype, int nf, int *dtype,
						struct pg_tm *tm, fsec_t *fsec, int *tzp)
{
#if PG_VERSION_NUM >= 160000
	DateTimeErrorExtra extra;

	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, &extra);
#else
	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp);
#endif
}

/* PG 16 made AlterObjectOwner_internal() take the catalog's OID */
#include "access/table.h"
#include "commands/alter.h"
static inline void
shardid_alter_object_owner(Oid classid, Oid objid, Oid new_owner)
{
#if PG_VERSION_NUM >= 160000
	AlterObjectOwner_internal(classid, objid, new_owner);
#else
	Relation	catalog = table_open(classid, RowExclusiveLock);

	AlterObjectOwner_internal(catalog, objid, new_owner);
	table_close(catalog, RowExclusiveLock);
#endif
}

/*
 * PG 16 replaced pg_class_ownercheck() by object_ownercheck().
 */
#if PG_VERSION_NUM >= 160000
#define shardid_table_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define shardid_table_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/*
 * Every table of a subscription (pg_subscription_rel), as a list of
 * SubscriptionRelState: PG 16 gave GetSubscriptionRelations() an argument
 * that keeps only the tables not synchronized yet.
 */
#include "catalog/pg_subscription_rel.h"
static inline List *
shardid_subscription_relations(Oid subid)
{
#if PG_VERSION_NUM >= 160000
	return GetSubscriptionRelations(subid, false);
#else
	return GetSubscriptionRelations(subid);
#endif
}

#endif							/* SHARDID_COMPAT_H */
