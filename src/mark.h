/*-------------------------------------------------------------------------
 *
 * mark.h
 *	  The durable high-water mark of id times and the remembered epoch.
 *
 * src/mark.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_MARK_H
#define SHARDID_MARK_H

#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/lwlock.h"

/* H is raised this far past the id that needs it ... */
#define SHARDID_MARK_WINDOW_MS	1000
/* ... once an id comes this close to it, so that callers rarely wait */
#define SHARDID_MARK_MARGIN_MS	250

/* the part of the shared state (shared.c) that the mark keeps */
typedef struct ShardidMark
{
	pg_atomic_uint64 high_water;	/* durable H, Unix ms; 0 until read */
	pg_atomic_uint32 generation;	/* changes when the epoch is adopted */
	pg_atomic_uint32 raising;	/* pid of the backend raising H, or 0 */
	pg_atomic_uint64 writes;	/* durable writes of H since start */
	pg_atomic_uint64 unconfirmed;	/* raises whose wait was cut short */
	ConditionVariable raised;	/* broadcast when a raise ends */
	int			tranche_id;
	LWLock		lock;			/* serialises seeding (never held in a wait) */
} ShardidMark;

extern void shardid_mark_init(ShardidMark *mark);
extern void shardid_mark_name_tranche(ShardidMark *mark);
extern void shardid_mark_check_slots(void);
extern void shardid_refuse_in_recovery(void);
extern int64 shardid_mark_durable(void);
extern void shardid_mark_raise(ShardidMark *mark, int64 need_ms);
extern int64 shardid_mark_set(ShardidMark *mark, int64 unix_ms);
extern void shardid_check_epoch(void);
extern bool shardid_epoch_matches(void);

/* the origin whose existence says that a database's floors are applied */
#define SHARDID_FLOORS_ORIGIN_PREFIX "shardid_floors_"
extern void shardid_check_database_floors(void);
extern int64 shardid_adopt_epoch(ShardidMark *mark);
extern void shardid_mark_origins(bool *high_water, bool *epoch);
extern void shardid_mark_report(int64 *high_water, bool *high_water_known,
								int64 *epoch, bool *epoch_known);

#endif							/* SHARDID_MARK_H */
