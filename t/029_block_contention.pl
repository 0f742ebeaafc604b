
# Copyright (c) 2026, the snowflake authors

# A block of IDs under contention.  With an 8-bit sequence (256 IDs a
# millisecond) and a 10 ms lead, two sessions drawing single IDs keep the
# generator at the edge of the lead, and take each new millisecond's IDs as
# soon as the clock reaches it.  snowflake_next_ids(2000) needs the
# generator nearly 8 ms inside the lead, which never comes while they run:
# 1.3 waited for it, for seconds, until statement_timeout or a lucky
# moment, since the wait within the lead never looked at
# snowflake.max_clock_wait.  Now every wait of a call ends by max_clock_wait
# (200 ms here): the block is issued or refused with 53400, never stopped by
# a statement_timeout of 5 s.
#
# Without contention a call still waits as long as its own claim needs, even
# with max_clock_wait 0: a block at the edge of the lead waits for the clock
# to make room for it, and single IDs at max_lead 0 wait for the next
# millisecond, as Twitter's generator does, without a refusal.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = snowflake_node('block_wait',
	extra_conf => "snowflake.sequence_bits = 8\n"
	  . "snowflake.max_lead = 10\n"
	  . "snowflake.max_clock_wait = 200\n");
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# two sessions drawing single IDs, until they are cancelled below
my (@out, @err, @streams);
foreach my $i (0, 1)
{
	push @streams,
	  start_waiter($node, "stream$i", \$out[$i], \$err[$i],
		"SET statement_timeout = '60s'",
		'SELECT count(snowflake_next_id()) FROM (SELECT generate_series(1, 1000000000)) g');
}
ok( $node->poll_query_until(
		'postgres', q{
SELECT count(*) = 2 FROM pg_stat_activity
WHERE application_name LIKE 'stream_' AND state = 'active'
	AND query LIKE '%generate_series%'}),
	'two sessions draw single IDs');
ok( $node->poll_query_until(
		'postgres', 'SELECT sequence_waits > 1000 FROM snowflake_status'),
	'... at the edge of the lead, where they wait for each next millisecond');

foreach my $k (1 .. 3)
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET statement_timeout = '5s';\n"
		  . 'SELECT count(*) FROM snowflake_next_ids(2000);');
	ok( ($ret == 0 && $stdout eq '2000')
		  || $stderr =~
		  /ERROR:  53400: could not generate a snowflake ID: other calls took every ID within snowflake.max_lead/,
		"block $k beside them: issued, or refused once max_clock_wait ran out"
	) or diag "psql returned $ret: $stderr";
	unlike($stderr, qr/statement timeout/,
		"block $k: not stopped by statement_timeout");
	note "block $k: " . ($ret == 0 ? 'issued' : 'refused');
}

foreach my $i (0, 1)
{
	cancel_waiter($node, "stream$i");
	$streams[$i]->finish;
}

# No other session: max_clock_wait 0 lets a call wait what its claim needs.
my ($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
SET snowflake.max_clock_wait = 0;
SELECT count(snowflake_next_id()) FROM generate_series(1, 20000);
SELECT count(*) FROM snowflake_next_ids(2000);});
is($ret, 0,
	'max_clock_wait 0, no other session: a block at the edge of the lead waits for room'
) or diag $stderr;
is($stdout, "20000\n2000", '... and is issued whole');

($ret, $stdout, $stderr) = $node->psql(
	'postgres', q{
SET snowflake.max_clock_wait = 0;
SET snowflake.max_lead = 0;
SELECT count(snowflake_next_id()) FROM generate_series(1, 100000);});
is($ret, 0,
	'max_clock_wait 0, max_lead 0: single IDs at the ceiling wait for each next millisecond'
) or diag $stderr;
is($stdout, '100000', '... and are all issued');

is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE \'stream_\''),
	'0', 'the streams ended');

done_testing();
