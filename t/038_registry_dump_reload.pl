
# Copyright (c) 2026, the snowflake authors

# A registry reloaded from pg_dump into the running server, as docs/fleet.md
# says it may be ("a dump restored is a new epoch"), found by a review of
# the 1.4 registry: the reload restores every row (CREATE EXTENSION makes
# none of its own), and its first call starts a new epoch whose floor lies
# above every promise the dump forgot.  Server a claims after the dump and
# is then cut off from the registry; server b, whose clock is 15 s behind,
# gets a's pair after the reload, above that floor, and issues none of a's
# IDs.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

skip_without_libfaketime();

my $registry = snowflake_registry('registry', lease => '5 s');
my $a = snowflake_node('a', registry => $registry);
my $b = snowflake_node('b', registry => $registry, offset => -15);

# the dump, taken before a claims
my $dump = $registry->basedir . '/registry.sql';
command_ok(
	[
		'pg_dump', '-h', $registry->host, '-p', $registry->port,
		'-f', $dump, 'postgres'
	],
	'the registry is dumped');

start_node($a);
my ($pair_a) = wait_for_pair($a);
ok(defined $pair_a, "a claims a pair ($pair_a)");

# a generates for 20 s
my $generate = q{
CREATE TABLE IF NOT EXISTS ids (id bigint);
DO $$
DECLARE
	stop timestamptz := clock_timestamp() + interval '%s s';
BEGIN
	WHILE clock_timestamp() < stop LOOP
		BEGIN
			INSERT INTO ids SELECT snowflake_next_ids(200);
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			PERFORM pg_sleep(0.05);
		END;
		PERFORM pg_sleep(0.01);
	END LOOP;
END $$;
SELECT count(*) FROM ids;};
my $count_a = $a->safe_psql('postgres', sprintf($generate, 20));
note "a issued $count_a IDs";

# a is cut off from the registry (it may go on up to its promise)
$registry->safe_psql('postgres', q{
ALTER ROLE a NOLOGIN;
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'a';});

# the dump reloaded into the running server, with psql as usual
$registry->safe_psql('postgres', 'DROP SCHEMA snowflake_registry CASCADE');
my ($rc, $out, $err) = $registry->psql('postgres', undef,
	on_error_stop => 1,
	extra_params => [ '-f', $dump ]);
is($rc, 0, 'the dump reloads without an error') or diag($err);
is( $registry->safe_psql('postgres',
		"SELECT floor >= clock_timestamp() + interval '4 s' "
		  . 'FROM snowflake_registry.epoch()'),
	't',
	'its first call starts an epoch whose floor lies the lease ahead');

start_node($b);
my ($pair_b) = wait_for_pair($b);
note "b claims $pair_b";
my $count_b = $b->safe_psql('postgres', sprintf($generate, 15));
note "b issued $count_b IDs";

my $ids_a = $a->safe_psql('postgres', 'SELECT id FROM ids');
$b->safe_psql('postgres', "CREATE TABLE ids_a (id bigint)");
$b->safe_psql('postgres',
	"INSERT INTO ids_a SELECT unnest('{" . join(',', split /\n/, $ids_a) . "}'::bigint[])");
my $identical = $b->safe_psql('postgres',
	'SELECT count(*) FROM ids JOIN ids_a USING (id)');
is($identical, '0', 'a and b issue no identical IDs');

done_testing();
