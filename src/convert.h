/*-------------------------------------------------------------------------
 *
 * convert.h
 *	  The legacy ids of tables converted by shardid.convert_table().
 *
 * src/convert.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CONVERT_H
#define SHARDID_CONVERT_H

extern bool shardid_legacy_below(Oid relid, int64 *below);

#endif							/* SHARDID_CONVERT_H */
