
# Copyright (c) 2026, the snowflake authors

# A server that takes a worker id over from a previous holder resumes above
# the time that holder promised at its last check-in (issue 14): when the
# holder's clock ran a minute ahead and this server's does not, its calls
# wait snowflake.max_clock_wait and then fail with "resuming above the
# previous holder of this worker id" (55000), not with a clock error; with a
# max_lead that covers the minute, IDs come at once, above every ID the
# holder issued.  The copy is made before the holder issues an ID, so that
# no high-water mark file of the holder's comes with it: only the registry
# can tell it where to resume.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

skip_without_libfaketime();

my $registry = snowflake_registry('registry');

# the holder, its clock a minute ahead of the copy's
my $holder = snowflake_node(
	'holder',
	registry         => $registry,
	allows_streaming => 1,
	offset           => 60,
	extra_conf       => "snowflake.registry_require_check_in = on\n");
start_node($holder);
check_clock_offset($holder, 60, "the holder's clock is a minute ahead");
$holder->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$holder->poll_query_until('postgres',
	'SELECT worker_id IS NOT NULL FROM snowflake_status')
  or die 'the holder never claimed a worker id';
$holder->backup('base');
my $copy = snowflake_standby($holder, 'base', 'copy', clone => 1);

my $last_id = $holder->safe_psql('postgres',
	'SELECT max(x) FROM (SELECT snowflake_next_id() AS x FROM generate_series(1, 1000)) s'
);
like($last_id, qr/^\d+$/, 'the holder issues IDs a minute ahead');
# a few check-ins (every 200 ms) tell the registry how far they reach
usleep(1_000_000);
crash_node($holder);

# The copy takes the claim over after the takeover delay, then refuses: its
# clock is a minute behind the time the holder promised.
start_node($copy);
my ($stderr, $elapsed);
my $deadline = time() + 60;
while (time() < $deadline)
{
	my $start = time();
	my $pair;
	($pair, $stderr) = next_pair($copy);
	$elapsed = time() - $start;
	last if defined $pair || $stderr =~ /previous holder/;
	usleep(200_000);
}
like(
	$stderr,
	qr/ERROR:  55000: could not generate a snowflake ID: resuming above the previous holder of this worker id/,
	'the copy refuses: it resumes above the previous holder (55000)');
my ($ahead_ms) = $stderr =~ /whose IDs may reach (\d+) ms ahead of this clock/;
ok(defined $ahead_ms && $ahead_ms > 55_000 && $ahead_ms < 65_000,
	'its detail says the holder\'s IDs may lie about a minute ahead')
  or diag $stderr;
cmp_ok($elapsed, '>=', 0.9,
	'after waiting snowflake.max_clock_wait (1 s) for the clock');
unlike($stderr, qr/the clock is behind/, 'not a clock error');

# With a lead that covers the minute, IDs come at once, above the holder's.
my $id = $copy->safe_psql('postgres',
	"SET snowflake.max_lead = '2min'; SELECT snowflake_next_id()");
cmp_ok($id, '>', $last_id,
	'with max_lead 2 min the copy issues IDs above every ID of the holder');

$copy->stop;
done_testing();
