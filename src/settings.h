/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The settings of shardid (shardid.epoch, shardid.max_lead_ms).
 *
 * src/settings.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SETTINGS_H
#define SHARDID_SETTINGS_H

extern int64 shardid_epoch_ms;	/* shardid.epoch, in ms since the Unix epoch */
extern int	shardid_max_lead_ms;	/* shardid.max_lead_ms */

/*
 * Changes with every assignment of shardid.epoch in this backend (never 0),
 * so that a check made under one value can be cached until the next.
 */
extern uint32 shardid_epoch_generation;

extern void shardid_define_settings(void);

#endif							/* SHARDID_SETTINGS_H */
