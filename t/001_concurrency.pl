# Many sessions generating at once on one server: no ID is ever handed out
# twice, and each session's IDs strictly increase; at the clock (max_lead 0,
# where claims move the generator up to the clock with a compare-and-swap)
# and ahead of it (a lead, where claims add to it and read the coarse
# clock), every ID carries a time between the start of its statement and the
# clock after it plus max_lead.
#
# isolationtester runs one step at a time, so real contention on the shared
# word needs pgbench.
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
# it drew them: first at the clock, then ahead of it, with a lead of 60 s
# and the server's clock set 30 s back, so that every claim finds the
# generator well ahead (by 30 s less the time since the first draw).
foreach my $lead (0, 60000)
{
	my $table = "drawn_$lead";
	if ($lead && !defined $SnowflakeTest::libfaketime)
	{
	  SKIP:
		{
			skip 'libfaketime is not installed: the lead needs a clock set back',
			  1;
		}
		next;
	}
	if ($lead)
	{
		set_clock($node, -30);
		check_clock_offset($node, -30, 'the server\'s clock is 30 s back');
	}
	$node->safe_psql('postgres',
		"CREATE TABLE $table (client int, n int, id bigint, "
		  . 'started timestamptz, after timestamptz)');
	my $leads_before = $node->safe_psql('postgres',
		'SELECT ids_ahead_of_clock FROM snowflake_status');
	$node->pgbench(
		"--no-vacuum --client=8 --jobs=2 --transactions=1",
		0,
		[qr{processed: 8/8}],
		[qr{^$}],
		"8 sessions draw 250,000 IDs each at the same time, max_lead $lead ms",
		{
			"001_draw_$lead" => "SET snowflake.max_lead = $lead; "
			  . "INSERT INTO $table SELECT :client_id, n, snowflake_next_id(), "
			  . 'statement_timestamp(), clock_timestamp() '
			  . 'FROM generate_series(1, 250000) n;'
		});
	is( $node->safe_psql(
			'postgres', "SELECT count(*), count(DISTINCT id) FROM $table"),
		'2000000|2000000',
		"max_lead $lead: 2,000,000 IDs drawn, all distinct");
	check_strictly_increasing($node, $table,
		"max_lead $lead: each session's IDs strictly increase",
		partition_by => 'client');

	# the ID's time, in whole ms, against the statement's start and the
	# clock read after it (the later column of the row), in whole ms
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FILTER (WHERE t < date_trunc('milliseconds', started)),
	count(*) FILTER (WHERE t > date_trunc('milliseconds', after)
		+ interval '1 ms' * $lead)
FROM (SELECT snowflake_timestamp(id) AS t, started, after FROM $table) x}),
		'0|0',
		"max_lead $lead: no ID's time is before its statement's start, "
		  . 'nor beyond max_lead of the clock after it');
	my $leads = $node->safe_psql('postgres',
		"SELECT ids_ahead_of_clock - $leads_before FROM snowflake_status");
	if ($lead)
	{
		is($leads, '2000000',
			"max_lead $lead: every ID was issued ahead of the clock");
	}
	else
	{
		is($leads, '0', 'max_lead 0: no ID was issued ahead of the clock');
	}

	# The sessions really overlapped: their ID ranges interleave.  Without
	# overlap this test would not exercise the shared word under
	# contention.
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) > 1 FROM (
	SELECT client, min(id) AS lo, max(id) AS hi FROM $table GROUP BY client) a
JOIN (SELECT client, min(id) AS lo, max(id) AS hi FROM $table GROUP BY client) b
	ON a.client < b.client AND a.lo < b.hi AND b.lo < a.hi}),
		't',
		"max_lead $lead: the sessions generated concurrently");
}

$node->stop;
done_testing();
