
# Copyright (c) 2026, the snowflake authors

# pg_stat_activity names snowflake's waits.  From PostgreSQL 17 on, a
# backend waiting for the first registry claim shows wait_event
# SnowflakeRegistryClaim, and one waiting for a clock that stepped back
# SnowflakeClock (the wait for the mark, SnowflakeMark, is checked by
# t/019_slow_mark.pl, which stalls the mark writer); on 15 and 16 each shows
# wait_event Extension.  The wait_event_type is Extension on every major.
#
# The claim wait: a server whose registry does not answer has no claim, and
# a call waits for one up to snowflake.max_clock_wait; pg_cancel_backend()
# ends it.  The clock wait: the server's clock steps back 30 s under
# libfaketime (see SnowflakeTest.pm), and a call with max_lead 0 waits until
# the clock is set right again, then returns an ID above the earlier ones.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

#
# The first registry claim, from a registry nobody listens on.
#
my $port = PostgreSQL::Test::Cluster::get_free_port();
my $claimer = snowflake_node(
	'claimer',
	node_ids => 0,
	extra_conf => qq{
snowflake.datacenter_id = 5
snowflake.registry = 'host=127.0.0.1 port=$port dbname=postgres user=snowflake_worker connect_timeout=2'
snowflake.registry_check_in_interval = 200
});
start_node($claimer);
$claimer->safe_psql('postgres', 'CREATE EXTENSION snowflake');

my $claim_event = wait_event_of($claimer, 'SnowflakeRegistryClaim');
my $waiter = start_waiter(
	$claimer, 'claim_waiter', \my $out, \my $err,
	'SET snowflake.max_clock_wait = 60000',
	'SELECT snowflake_next_id()');
ok( wait_for_wait_event(
		$claimer, "application_name = 'claim_waiter'",
		'SnowflakeRegistryClaim'),
	"a call waiting for the first registry claim shows as $claim_event");
cancel_waiter($claimer, 'claim_waiter');
$waiter->finish;
like(
	$err,
	qr/ERROR:  57014: canceling statement due to user request/,
	'... and pg_cancel_backend() ends the wait');

SKIP:
{
	skip
	  'pg_wait_events lists extensions\' wait events from PostgreSQL 17 on',
	  1
	  unless $claimer->pg_version >= 17;
	is( $claimer->safe_psql(
			'postgres', q{
SELECT count(*) FROM pg_wait_events
WHERE type = 'Extension' AND name = 'SnowflakeRegistryClaim'}),
		'1',
		'pg_wait_events lists SnowflakeRegistryClaim once it was waited on');
}
$claimer->stop;

#
# A clock that stepped back.
#
SKIP:
{
	skip 'libfaketime is not installed: the wait for the clock needs it', 5
	  unless defined $SnowflakeTest::libfaketime;

	my $node = faketime_node(
		'clock',
		no_cache => 1,
		clock_test => 'server clock starts at the real time');
	my $before = $node->safe_psql('postgres',
		"CREATE EXTENSION snowflake;\nSELECT snowflake_next_id();");
	set_clock($node, -30);
	check_clock_offset($node, -30, 'server clock stepped back 30 s');

	my $clock_event = wait_event_of($node, 'SnowflakeClock');
	$waiter = start_waiter(
		$node, 'clock_waiter', \$out, \$err,
		'SET snowflake.max_lead = 0',
		'SET snowflake.max_clock_wait = 60000',
		'SELECT snowflake_next_id()');
	ok( wait_for_wait_event(
			$node, "application_name = 'clock_waiter'",
			'SnowflakeClock'),
		"a call waiting for the clock shows as $clock_event");
	set_clock($node, 0);
	$waiter->finish;
	like($out, qr/^\d+$/m, '... and returns an ID once the clock is back')
	  or diag $err;
	is( $node->safe_psql(
			'postgres', 'SELECT ' . ($out =~ /(\d+)/ ? $1 : 0) . " > $before"),
		't',
		'... above the IDs before the step');
	$node->stop;
}

done_testing();
