
# Copyright (c) 2026, the snowflake authors

# A fleet merges without conflicts: three primaries, each connected as a
# login of its own, claim their worker ids from one registry, each inserts
# 100,000 rows from 4 clients at once while extending its claim's promise,
# and a hub subscribes to all three through logical replication into one
# table with the same primary key.  All rows arrive, no subscription hits a
# key conflict, the IDs carry exactly the three claimed pairs, the registry
# records each pair as its origin's login's, held by the same start
# throughout, and each client's IDs increase in its insert order.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $clients          = 4;
my $rows_per_insert  = 50;
my $inserts_per_client = 500;
my $rows_per_origin  = $clients * $rows_per_insert * $inserts_per_client;

# A lease of 10 s: a registry worker held up for a moment by the load
# costs no ID (a promise that ran out would refuse the clients' inserts).
my $registry = snowflake_registry('registry', lease => '10 s');

# each claim of the registry: "login=datacenter|worker version state"
sub claims
{
	return $registry->safe_psql(
		'postgres', q{
SELECT string_agg(owner || '=' || datacenter_id || '|' || worker_id || ' '
				  || version || ' ' || state, ', ' ORDER BY owner)
FROM snowflake_registry.status});
}

my @origins = qw(origin1 origin2 origin3);
my %pair_of;
my @primaries;
foreach my $name (@origins)
{
	my $node = snowflake_node(
		$name,
		registry         => $registry,
		allows_streaming => 'logical');
	start_node($node);
	($pair_of{$name}) = wait_for_pair($node);
	# seq records the insert order; within one client, IDs must follow it
	$node->safe_psql(
		'postgres', qq{
CREATE TABLE events (
	id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
	origin text NOT NULL DEFAULT '$name',
	client integer NOT NULL,
	seq bigserial NOT NULL);
CREATE PUBLICATION fleet FOR TABLE events;});
	push @primaries, $node;
}
is(scalar(keys %{ { reverse %pair_of } }),
	3, 'the three primaries claim distinct pairs: '
	  . join(' ', map { "$_=$pair_of{$_}" } @origins));

my $hub = PostgreSQL::Test::Cluster->new('hub');
$hub->init;
$hub->append_conf(
	'postgresql.conf', q{
max_logical_replication_workers = 8
max_worker_processes = 16
});
$hub->start;
$hub->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE events (
	id bigint PRIMARY KEY,
	origin text NOT NULL,
	client integer NOT NULL,
	seq bigint NOT NULL);});
foreach my $node (@primaries)
{
	my $name = $node->name;
	$hub->safe_psql('postgres',
		"CREATE SUBSCRIPTION sub_$name CONNECTION '"
		  . 'host='
		  . $node->host
		  . ' port='
		  . $node->port
		  . " dbname=postgres' PUBLICATION fleet");
}
$hub->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')"
) or die 'the subscriptions did not finish their initial sync';

is( claims(),
	join(', ', map { "$_=$pair_of{$_} 1 held" } @origins),
	'the registry records each pair as held by its origin\'s login, in the first version');

# 4 clients a primary, all three primaries at once
my @runs;
foreach my $node (@primaries)
{
	my $script = $node->basedir . '/insert.sql';
	append_to_file($script,
		"INSERT INTO events (client) SELECT :client_id FROM generate_series(1, $rows_per_insert);\n"
	);
	my ($out, $err) = ('', '');
	push @runs,
	  [
		$node,
		IPC::Run::start(
			[
				'pgbench', '-n', '-c', $clients, '-j', $clients, '-t',
				$inserts_per_client, '-f', $script, '-h', $node->host, '-p',
				$node->port, 'postgres'
			],
			'>', \$out, '2>', \$err),
		\$err
	  ];
}
foreach my $run (@runs)
{
	my ($node, $harness, $err) = @$run;
	ok($harness->finish, 'pgbench on ' . $node->name . ' succeeded')
	  or diag $$err;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM events'),
		$rows_per_origin, $node->name . " has its $rows_per_origin rows");
}

is( claims(),
	join(', ', map { "$_=$pair_of{$_} 1 held" } @origins),
	'no claim changed holder during the inserts');

$_->wait_for_catchup('sub_' . $_->name) foreach @primaries;

is($hub->safe_psql('postgres', 'SELECT count(*) FROM events'),
	3 * $rows_per_origin, 'all rows of the three origins arrived at the hub');
my $log = slurp_file($hub->logfile);
unlike($log, qr/duplicate key value|conflict|ERROR/,
	'no subscription worker met a key conflict or any error');

is( $hub->safe_psql(
		'postgres', q{
SELECT string_agg(origin || '=' || datacenter_id || '|' || worker_id, ' ' ORDER BY origin)
FROM (SELECT DISTINCT origin, p.datacenter_id, p.worker_id
      FROM events, snowflake_parse(id) p) s}),
	join(' ', map { "$_=$pair_of{$_}" } @origins),
	'snowflake_parse shows exactly the three claimed pairs, one an origin');

is( $hub->safe_psql(
		'postgres', q{
SELECT count(*) FROM (
	SELECT id < lag(id) OVER (PARTITION BY origin, client ORDER BY seq) AS back
	FROM events) s
WHERE back}),
	'0',
	'each client\'s IDs increase in its insert order');

is($hub->safe_psql('postgres',
		"SELECT count(*) FROM snowflake_shared_pairs('events', 'origin')"),
	'0', 'snowflake_shared_pairs finds no pair shared by two origins');

done_testing();
