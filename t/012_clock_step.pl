
# Copyright (c) 2026, the snowflake authors

# The clock stepped back 8 s while the server runs, under each policy.
#
# After the step the clock reads earlier than the generator's last ID, and
# what a call does depends on snowflake.max_lead and snowflake.max_clock_wait:
#
#   lead 0, wait 0      fails at once with SQLSTATE 58000 (clock behind)
#   lead 0, wait 10 s   blocks until the clock is back at the last ID (up to
#                       8 s), then goes on above it
#   lead 10 s           goes on at once, ahead of the clock
#
# and a call waiting for the clock (stepped back a minute more, so that it
# waits long) can be interrupted by statement_timeout and by
# pg_cancel_backend().  Through all of it the IDs only increase.
#
# The clock is moved with libfaketime (see SnowflakeTest.pm), rereading its
# file at every clock read so that a step takes effect at once; the test
# checks that each step really reached the server.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

my $node = faketime_node('main',
	no_cache   => 1,
	clock_test => 'server clock starts at the real time');

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (
	n bigint GENERATED ALWAYS AS IDENTITY,
	id bigint NOT NULL);
INSERT INTO ids (id) SELECT snowflake_next_id() FROM generate_series(1, 1000);
});

# the largest ID so far, and how far its ms lies ahead of the server's clock
sub last_id_lead
{
	my $r = $node->safe_psql(
		'postgres', q{
SELECT max(id), extract(epoch FROM (snowflake_parse(max(id))).ts - clock_timestamp())
FROM ids});
	return split /\|/, $r;
}

my $clock_behind_error =
  qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/;

# Step back 8 s.  (The checks below want the clock still more than 3 s
# behind the last ID, after a few psql calls: 5 s left too little on a
# machine loaded by other work.)
set_clock($node, -8);
check_clock_offset($node, -8, 'server clock stepped back 8 s', 0.5);
my ($last, $lead) = last_id_lead();
cmp_ok($lead, '>', 3,
	'the last ID now lies more than 3 s ahead of the clock');

# lead 0, wait 0: refused at once.
my ($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$node, q{
SET snowflake.max_lead = 0;
SET snowflake.max_clock_wait = 0;
INSERT INTO ids (id) SELECT snowflake_next_id();
});
like($stderr, $clock_behind_error, 'lead 0, wait 0: fails with 58000');
my ($behind_ms) = $stderr =~ /DETAIL:  The clock is (\d+) ms behind/;
ok( defined $behind_ms && $behind_ms > 3000 && $behind_ms <= 8100,
	'... and the detail says the clock is 3 to 8 s behind'
) or diag "detail says " . ($behind_ms // 'nothing');

# lead 0, wait 10 s: blocks until the clock reaches the last ID, then goes
# on.  The clock was about 8 s behind; the steps above took some of that,
# and more on a loaded machine, so the wait is judged against the lead
# measured right before the call, less a second for the psql calls.
(undef, $lead) = last_id_lead();
($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$node, q{
SET snowflake.max_lead = 0;
SET snowflake.max_clock_wait = 10000;
INSERT INTO ids (id) SELECT snowflake_next_id() RETURNING id;
});
is($ret, 0, 'lead 0, wait 10 s: succeeds') or diag $stderr;
cmp_ok($elapsed, '>=', $lead - 1,
	'... after waiting for the clock to reach the last ID');
cmp_ok($stdout,  '>',  $last, '... with an ID greater than the last one');
note sprintf('waited %.3f s for a lead of %.3f s', $elapsed, $lead);

# Step back 8 s more: the clock is again 8 s behind the last ID.
set_clock($node, -16);
check_clock_offset($node, -16, 'server clock stepped back 8 s more', 0.5);
($last, $lead) = last_id_lead();
cmp_ok($lead, '>', 3,
	'the last ID again lies more than 3 s ahead of the clock');

# lead 10 s: goes on at once, ahead of the clock.  With max_clock_wait 0
# any wait for the clock would be an error, so success shows it did not
# wait.
($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$node, q{
SET snowflake.max_lead = 10000;
SET snowflake.max_clock_wait = 0;
INSERT INTO ids (id) SELECT snowflake_next_id() FROM generate_series(1, 1000);
});
is($ret, 0, 'lead 10 s: goes on at once') or diag $stderr;
my $result = $node->safe_psql(
	'postgres', qq{
SELECT count(*), min(id) > $last,
	extract(epoch FROM (snowflake_parse(min(id))).ts - clock_timestamp()) > 3
FROM ids WHERE id > $last;
});
is($result, '1000|t|t',
	'... with 1000 IDs above the last one, ahead of the clock');

# A call waiting for the clock gives way to statement_timeout, and to
# pg_cancel_backend().  The clock steps back a minute more first, so that
# the calls below certainly wait, however long a loaded machine takes to
# see them waiting (after a smaller step the clock may be past the last ID
# by then, and the call return at once).
set_clock($node, -76);
check_clock_offset($node, -76, 'server clock stepped back a minute more',
	0.5);
($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$node, q{
SET snowflake.max_lead = 0;
SET snowflake.max_clock_wait = 60000;
SET statement_timeout = '500ms';
SELECT snowflake_next_id();
});
like(
	$stderr,
	qr/ERROR:  57014: canceling statement due to statement timeout/,
	'a call waiting for the clock is interrupted by statement_timeout');

# ... and to pg_cancel_backend().
my $bg = start_waiter(
	$node, 'waiter', \my $bg_out, \my $bg_err,
	'SET snowflake.max_lead = 0',
	'SET snowflake.max_clock_wait = 60000',
	'SELECT snowflake_next_id()');
ok( wait_for_wait_event(
		$node, "application_name = 'waiter'",
		'SnowflakeClock'),
	'a call waits for the clock');
cancel_waiter($node, 'waiter');
$bg->finish;
like(
	$bg_err,
	qr/ERROR:  57014: canceling statement due to user request/,
	'... and pg_cancel_backend() interrupts it');

# Through all of it, every ID is greater than the one before.
is( $node->safe_psql('postgres',
		'SELECT count(*), count(DISTINCT id) FROM ids'),
	'2001|2001', 'IDs are unique');
check_strictly_increasing($node, 'ids', '... and strictly increasing');

done_testing();
