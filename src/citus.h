/*-------------------------------------------------------------------------
 *
 * citus.h
 *	  The hooks that refuse next_id() on the tables of Citus's row-based
 *	  model (hash-distributed and reference tables).
 *
 * src/citus.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CITUS_H
#define SHARDID_CITUS_H

extern void shardid_citus_hooks_init(void);
extern void shardid_citus_next_id_check(void);

#endif							/* SHARDID_CITUS_H */
