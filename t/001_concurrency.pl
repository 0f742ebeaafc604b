# Many sessions generating at once on one server: no ID is ever handed out
# twice, and each session's IDs strictly increase.
#
# isolationtester runs one step at a time, so real contention on the shared
# compare-and-swap needs pgbench.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node =
  snowflake_node('concurrency', extra_conf => "synchronous_commit = off\n");
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# 8 clients inserting rows whose primary key is DEFAULT snowflake_next_id():
# 8 clients x 1250 transactions x 20 rows = 200,000 IDs.  A duplicate would
# already fail the primary key; the count checks it again.
$node->safe_psql('postgres', q{
CREATE TABLE pk_ids (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	client int NOT NULL
)});
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=1250',
	0,
	[qr{processed: 10000/10000}],
	[qr{^$}],
	'8 clients insert 200,000 rows with DEFAULT snowflake_next_id()',
	{
		'001_insert' =>
		  'INSERT INTO pk_ids (client) SELECT :client_id FROM generate_series(1, 20);'
	});
is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM pk_ids'),
	'200000|200000',
	'200,000 rows, 200,000 distinct IDs');
is($node->safe_psql('postgres', 'SELECT count(DISTINCT client) FROM pk_ids'),
	'8', 'all 8 clients inserted');

# 8 sessions each drawing 250,000 IDs in one statement at the same time:
# 2,000,000 distinct IDs, each session's strictly increasing in the order
# it drew them.
$node->safe_psql('postgres',
	'CREATE TABLE drawn (client int, n int, id bigint)');
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=1',
	0,
	[qr{processed: 8/8}],
	[qr{^$}],
	'8 sessions draw 250,000 IDs each at the same time',
	{
		'001_draw' => 'INSERT INTO drawn SELECT :client_id, n, snowflake_next_id() '
		  . 'FROM generate_series(1, 250000) n;'
	});
is( $node->safe_psql(
		'postgres', 'SELECT count(*), count(DISTINCT id) FROM drawn'),
	'2000000|2000000',
	'2,000,000 IDs drawn, all distinct');
check_strictly_increasing($node, 'drawn',
	'each session\'s IDs strictly increase',
	partition_by => 'client');

# The sessions really overlapped: their ID ranges interleave.  Without
# overlap this test would not exercise the compare-and-swap under contention.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) > 1 FROM (
	SELECT client, min(id) AS lo, max(id) AS hi FROM drawn GROUP BY client) a
JOIN (SELECT client, min(id) AS lo, max(id) AS hi FROM drawn GROUP BY client) b
	ON a.client < b.client AND a.lo < b.hi AND b.lo < a.hi}),
	't',
	'the sessions generated concurrently');

$node->stop;
done_testing();
