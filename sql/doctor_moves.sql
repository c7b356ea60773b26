-- doctor() on the server a shard moved away from: the frozen copy that
-- shardid-move leaves behind is not a shard to register here again
SET client_min_messages = warning;
CREATE SCHEMA mv_tpl;
CREATE TABLE mv_tpl.items (id bigint PRIMARY KEY, name text);
SELECT count(*) FROM shardid.create_shards('mv_tpl', ARRAY[7], prefix => 'mv_', use_sequence => true);
-- what shardid-move records and does at the cutover on the source
INSERT INTO shardid.move_journal (move_id, side, shard, schema_name, method, phase, peer)
VALUES ('m1', 'source', 7, 'mv_0007', 'offline', 'moved-away', 'host=db2 port=5432 dbname=app');
SELECT shardid.unregister_shard(7);
SELECT problem, object, detail, fix FROM shardid.doctor(scan_rows => false) WHERE object LIKE 'mv_0007.%';
-- a schema of shard 7 that no move left here is still one to register
UPDATE shardid.move_journal SET phase = 'aborted' WHERE move_id = 'm1';
SELECT problem, object FROM shardid.doctor(scan_rows => false) WHERE object LIKE 'mv_0007.%';
DELETE FROM shardid.move_journal WHERE move_id = 'm1';
DROP SCHEMA mv_0007, mv_tpl CASCADE;
