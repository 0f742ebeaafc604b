
# Copyright (c) 2026, the snowflake authors

# Tables moved from bigserial, serial and identity keys to snowflake IDs by
# the recipe of docs/functions.md (test/migrate_tables.sql and
# test/migrate_switch.sql, which sql/migrate.sql checks
# step by step) survive pg_dump and pg_restore: the rows, their ids, the
# snowflake defaults, the bigint types and the foreign keys are all
# restored, and the restored tables go on taking new snowflake IDs above
# every old one.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('dump');
start_node($node);

$node->safe_psql('postgres', 'CREATE DATABASE source');
$node->safe_psql('source',
	"CREATE EXTENSION snowflake;\n"
	  . slurp_file("$FindBin::RealBin/../test/migrate_tables.sql")
	  . slurp_file("$FindBin::RealBin/../test/migrate_switch.sql"));
$node->safe_psql(
	'source', q{
INSERT INTO customers (name) VALUES ('new customer');
INSERT INTO invoices (customer_id) SELECT max(id) FROM customers;
INSERT INTO invoice_lines (invoice_id, amount) SELECT max(id), 99 FROM invoices;
});

# everything that must survive, as one text
my $contents = q{
SELECT string_agg(t, E'\n' ORDER BY t) FROM (
	SELECT format('%s %s %s', c.id, c.name, i.id) || ' ' || l.id || ' ' || l.amount AS t
	FROM customers c JOIN invoices i ON i.customer_id = c.id
	JOIN invoice_lines l ON l.invoice_id = i.id
	UNION ALL
	SELECT format('%s.%s %s %s', a.attrelid::regclass, a.attname,
		format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid))
	FROM pg_attribute a LEFT JOIN pg_attrdef d
		ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	WHERE a.attrelid IN ('customers'::regclass, 'invoices'::regclass,
		'invoice_lines'::regclass) AND a.attnum > 0
	UNION ALL
	SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
	WHERE conrelid IN ('customers'::regclass, 'invoices'::regclass,
		'invoice_lines'::regclass)) s};
my $source = $node->safe_psql('source', $contents);
like($source, qr/customers\.id bigint snowflake_next_id\(\)/,
	'the source table has the snowflake default');

my $dump = $node->basedir . '/source.dump';
$node->command_ok(
	[ 'pg_dump', '--format=custom', '--file', $dump, '--dbname',
		$node->connstr('source') ],
	'pg_dump of the converted tables');
$node->safe_psql('postgres', 'CREATE DATABASE target');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '--dbname', $node->connstr('target'),
		$dump ],
	'pg_restore into a new database');

is($node->safe_psql('target', $contents),
	$source, 'rows, ids, types, defaults and foreign keys are restored');
is( $node->safe_psql(
		'target', q{
INSERT INTO customers (name) VALUES ('after restore') RETURNING
	id > (SELECT max(id) FROM customers WHERE name <> 'after restore')}),
	't',
	'a restored table takes new snowflake IDs above every old one');
my ($ret, $out, $err) = $node->psql('target',
	'INSERT INTO invoice_lines (invoice_id, amount) VALUES (12345, 1)');
like($err, qr/violates foreign key constraint/,
	'the restored foreign keys are enforced');

done_testing();
