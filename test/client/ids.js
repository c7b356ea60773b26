// test/client/ids.js: a real client end to end.  Node.js with the `pg`
// package inserts rows whose ids come from shardid.next_id(), reads them
// back exactly, and decodes them with BigInt the same way the server does.
// Ids are about 2^58, past the 2^53 a JavaScript number holds exactly, so
// they must travel as strings (node-postgres's default for bigint) and be
// computed on as BigInt.  Connection settings come from PG* variables.
'use strict';
const { Client } = require('pg');

let passed = 0;
let failed = 0;
function check(what, ok, detail) {
    if (ok) { passed++; console.log(`ok - ${what}`); }
    else { failed++; console.log(`not ok - ${what}${detail ? ': ' + detail : ''}`); }
}

// the layout, in BigInt: 41 bits time | 13 bits shard | 10 bits seq
function decode(idText) {
    const id = BigInt.asUintN(64, BigInt(idText));
    return { millis: id >> 23n, shard: Number((id >> 10n) & 8191n), seq: Number(id & 1023n) };
}

async function main() {
    const client = new Client();
    await client.connect();
    await client.query(`CREATE SCHEMA js_s9;
        CREATE SEQUENCE js_s9.t_id_seq;
        CREATE TABLE js_s9.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9, nextval('js_s9.t_id_seq')), v int)`);

    const inserted = await client.query('INSERT INTO js_s9.t (v) SELECT g FROM generate_series(1, 2000) g RETURNING id, v');
    check('2000 rows inserted', inserted.rows.length === 2000);
    check('ids arrive as strings', inserted.rows.every(r => typeof r.id === 'string'));
    check('ids are unique', new Set(inserted.rows.map(r => r.id)).size === 2000);

    // a JavaScript number would have corrupted them
    const lossy = inserted.rows.filter(r => String(Number(r.id)) !== r.id).length;
    check('Number(id) would lose digits (why ids must stay strings)', lossy > 0, `${lossy} of 2000 changed`);

    // decoded in JavaScript exactly as the server decodes them
    const server = await client.query(`SELECT id, shardid.id_millis(id)::text AS millis,
            shardid.id_shard(id) AS shard, shardid.id_seq(id) AS seq FROM js_s9.t`);
    const mismatches = server.rows.filter(r => {
        const d = decode(r.id);
        return d.millis !== BigInt(r.millis) || d.shard !== r.shard || d.seq !== r.seq;
    });
    check('BigInt decoding matches shardid.decode()', mismatches.length === 0,
          mismatches.length ? JSON.stringify(mismatches[0]) : '');
    check('every id decodes to shard 9', server.rows.every(r => decode(r.id).shard === 9));

    // an id sent back as a string parameter finds its row
    const last = inserted.rows[inserted.rows.length - 1];
    const found = await client.query('SELECT v FROM js_s9.t WHERE id = $1', [last.id]);
    check('an id round-trips as a query parameter', found.rows.length === 1 && found.rows[0].v === last.v);

    // ids sort by time: compare as BigInt, never as numbers or strings of unequal length
    const sorted = inserted.rows.map(r => BigInt(r.id)).every((x, i, a) => i === 0 || a[i - 1] < x);
    check('ids increase in insertion order (BigInt comparison)', sorted);

    // min_id() from a JavaScript Date: a time range becomes an id range
    const since = new Date(Date.now() - 60000);
    const recent = await client.query('SELECT count(*)::int AS n FROM js_s9.t WHERE id >= shardid.min_id($1)', [since]);
    check('min_id() with a Date parameter selects the rows of the last minute', recent.rows[0].n === 2000);

    await client.query('DROP SCHEMA js_s9 CASCADE');
    await client.end();
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 ? 0 : 1);
}

main().catch(err => { console.log(`not ok - ${err.message}`); process.exit(1); });
