
# Copyright (c) 2026, the snowflake authors

# Two ends of the time bits that the hot path mishandled (second hostile
# review of issue 24):
#
# 1. A layout whose time bits ran out long ago: with 32 bits of time and a
#    31-bit sequence, Twitter's epoch (2010) lies more than 2^33 ms behind
#    the clock, so the clock in ticks, (uint64) now_ms << 31, wraps past 64
#    bits in snowflake_claim_ticks.  The wrapped tick lies inside the time
#    bits, and IDs were issued with a time in 2010 instead of the error that
#    the time bits are used up.
#
# 2. A layout of all 63 bits whose time runs out while the generator is
#    well ahead of the clock: the last claim by addition takes the tick just
#    past the last millisecond and burns it, and snowflake_status then shows
#    that tick as last_id, composed past bit 62: a negative last_id.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

# 1. the clock far past the end of the time bits
my $old = snowflake_node(
	'exhausted',
	node_ids   => 0,
	extra_conf => q{
snowflake.time_bits = 32
snowflake.sequence_bits = 31
snowflake.datacenter_bits = 0
snowflake.worker_bits = 0
snowflake.max_clock_wait = 0
});
start_node($old);
$old->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( $old->safe_psql(
		'postgres', 'SELECT time_runs_out < now() FROM snowflake_status'),
	't', 'the 32 bits of time ran out long ago');
foreach my $call ('SELECT snowflake_next_id()',
	'SELECT * FROM snowflake_next_ids(3)')
{
	my ($ret, $stdout, $stderr) = $old->psql('postgres',
		"\\set VERBOSITY verbose\n$call");
	isnt($ret, 0, "$call: no ID once the time bits are used up");
	like(
		$stderr,
		qr/ERROR:  2200H: snowflake IDs are exhausted/,
		"$call: the error says the time bits are used up");
	is($stdout, '', "$call: and returns no ID (got: $stdout)");
}
$old->stop;

# 2. all 63 bits, the end of the time bits 40 s ahead of the clock
my $epoch_ms = int(time() * 1000) - 2**32 + 40_000;
my $full = snowflake_node(
	'full',
	node_ids   => 0,
	extra_conf => qq{
snowflake.time_bits = 32
snowflake.datacenter_bits = 10
snowflake.worker_bits = 13
snowflake.sequence_bits = 8
snowflake.epoch = '$epoch_ms'
snowflake.max_lead = 120000
max_connections = 20
});
start_node($full);
$full->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my ($ret, $stdout, $stderr) = $full->psql('postgres',
	"\\set VERBOSITY verbose\n"
	  . 'SELECT count(snowflake_next_id()) FROM generate_series(1, 40000000)');
like(
	$stderr,
	qr/ERROR:  2200H: snowflake IDs are exhausted/,
	'a burst ahead of the clock runs into the end of the time bits');
my ($last_id, $after_end, $burnt) = split /\|/, $full->safe_psql(
	'postgres', q{
SELECT last_id, last_id_time >= time_runs_out, ticks_burnt FROM snowflake_status});
note "last_id $last_id, its time at or past time_runs_out: $after_end, "
  . "ticks_burnt $burnt";
cmp_ok($last_id, '>=', 0, 'snowflake_status shows no negative last_id');
is($after_end, 'f',
	'... nor a last_id_time that no ID can carry (at or past time_runs_out)');
$full->stop;

done_testing();
