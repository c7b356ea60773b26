/*-------------------------------------------------------------------------
 *
 * floor.h
 *	  The hooks that raise a shard's floor after writes of explicit ids.
 *
 * src/floor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FLOOR_H
#define SHARDID_FLOOR_H

extern void shardid_floor_hooks_init(void);

#endif							/* SHARDID_FLOOR_H */
