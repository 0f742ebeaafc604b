// Copyright (c) 2026, the snowflake authors
//
// ids.js: what a JavaScript application reads of the IDs of the table
// "orders", through node-postgres (npm "pg"), as t/027_javascript.pl runs
// it.  It connects as libpq would, from PGHOST, PGPORT and PGDATABASE, runs
// the README's two queries for JavaScript (argv[2] and argv[3]) and two of
// its own, and prints one JSON object: each way's IDs as decimal strings,
// to be compared with the server's own text.
'use strict';

const { Client } = require('pg');

async function main()
{
	const [jsonQuery, snowflakeJsonQuery] = process.argv.slice(2);
	const client = new Client();
	await client.connect();
	const out = {};

	// a bigint column: node-postgres hands int8 over as a string
	out.column = (await client.query('SELECT id FROM orders ORDER BY id'))
		.rows.map((r) => r.id);

	// the table as JSON: the IDs are JSON numbers, which JSON.parse reads
	// as doubles
	out.json_numbers = (await client.query(
		'SELECT json_agg(o ORDER BY o.id) AS j FROM orders o'))
		.rows[0].j.map((o) => BigInt(o.id).toString());

	// the README's JSON, with id::text
	out.json_text = (await client.query(jsonQuery))
		.rows[0].json_agg.map((o) => o.id);

	// the README's snowflake_json(id): the id as a string, its time in ISO
	// 8601, which new Date() reads
	const parts = (await client.query(snowflakeJsonQuery))
		.rows.map((r) => r.snowflake_json);
	out.snowflake_json = parts.map((p) => p.id);
	out.snowflake_json_ms = parts.map((p) => String(new Date(p.ts).getTime()));

	// strings sort as numbers through BigInt
	out.bigint_sorted = out.column.map(BigInt)
		.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map(String);

	await client.end();
	process.stdout.write(JSON.stringify(out));
}

main().catch((e) =>
{
	console.error(e);
	process.exit(1);
});
