/*-------------------------------------------------------------------------
 *
 * catalog.h
 *	  Reading the shard catalog structurally: the next_id() call a stored
 *	  column DEFAULT makes.
 *
 * src/catalog.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CATALOG_H
#define SHARDID_CATALOG_H

#include "nodes/nodes.h"

extern bool shardid_default_shard(Node *expr, Oid next_id_seq, Oid next_id_counter,
								  int32 *shard);

#endif							/* SHARDID_CATALOG_H */
