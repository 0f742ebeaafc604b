# The ends of the 41 bits of time: a clock past the last millisecond the
# layout can carry, or before the epoch, gives an error, never a wrapped or
# negative ID.
#
# With snowflake.epoch = 0 (1970) the 41 bits run out in September 2039, so
# moving the server's clock to 2040 with libfaketime reaches the end.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# libfaketime's year, in seconds
my $year = 365 * 86400;

my $node = faketime_node(
	'time_limits',
	no_cache   => 1,
	extra_conf => q{
snowflake.epoch = 0
snowflake.max_clock_wait = 0
});
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

my $last = $node->safe_psql('postgres', 'SELECT snowflake_next_id()');
cmp_ok($last, '>', 0, 'with the clock as it is, IDs are positive');

# 2040-11: more than 2^41 ms after 1970
set_clock($node, 14 * $year);
is($node->safe_psql('postgres', 'SELECT extract(year FROM clock_timestamp())'),
	'2040', 'the server\'s clock reads 2040');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'\set VERBOSITY verbose' . "\n" . 'SELECT snowflake_next_id()');
isnt($ret, 0, 'no ID once the 41 bits of time are used up');
like(
	$stderr,
	qr/ERROR:  2200H: snowflake IDs are exhausted: the 41 bits of time since the epoch are used up/,
	'the error says the time bits are used up');
is($stdout, '', 'and returns no wrapped ID');

# 1966: before the 1970 epoch
set_clock($node, -60 * $year);
($ret, $stdout, $stderr) = $node->psql('postgres',
	'\set VERBOSITY verbose' . "\n" . 'SELECT snowflake_next_id()');
isnt($ret, 0, 'no ID while the clock is before the epoch');
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is before the epoch/,
	'the error says the clock is before the epoch');
is($stdout, '', 'and returns no negative ID');

# Back to the real clock: generation resumes above everything before.
set_clock($node, 0);
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $last, 'with the clock back, IDs go on increasing');

$node->stop;
done_testing();
