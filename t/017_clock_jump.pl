# Copyright (c) 2026, the snowflake authors
#
# A clock that jumps far forward.  IDs follow the clock, so one bad reading
# would put every later ID, and the durable mark, at the jumped time for
# good: with the clock set right again, every call would then fail, and no
# snowflake.max_lead (at most 24.8 days) could reach that far.
#
# While the server runs, the generator compares the clock with the
# monotonic clock, which nobody sets, and refuses to follow a jump larger
# than snowflake.max_clock_jump (1 h by default): no ID carries the bad
# time, and setting the clock right ends the refusals at once.  A jump that
# is real is accepted deliberately by raising max_clock_jump.  A clock that
# is already wrong when the server starts cannot be told from a long
# downtime; the procedure for that case ("A clock far in the future" in
# docs/settings.md, which the README points to) is checked at the end.
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
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 1000);
});
my $before_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');

# 100 days forward, far beyond any max_lead.
my $day = 86400;
set_clock($node, 100 * $day);
check_clock_offset($node, 100 * $day, 'server clock jumped 100 days forward');
my $log_offset = -s $node->logfile;
my ($elapsed, $ret, $stdout, $stderr) =
  psql_timed($node, 'INSERT INTO ids SELECT snowflake_next_id()');
isnt($ret, 0, 'an ID at the jumped time is refused');
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock jumped forward\n.*DETAIL:  Since the last high-water mark the clock moved (\d+) ms further than the monotonic clock/,
	'... with SQLSTATE 58000, saying the clock jumped and how far');
my ($jump_ms) = $stderr =~ /clock moved (\d+) ms further/;
ok(defined $jump_ms && abs($jump_ms - 100 * $day * 1000) < 60_000,
	'... about 100 days')
  or diag "detail says " . ($jump_ms // 'nothing');
like($stderr, qr/HINT:  If the clock is wrong, correct it\./,
	'... and the hint names what to do');
ok( $node->log_contains(
		qr/LOG:  the clock jumped \d+ ms forward; refusing snowflake IDs until it is corrected/,
		$log_offset),
	'the server log says so once');

# The clock is set right: IDs go on at once, next to the real time.
set_clock($node, 0);
check_clock_offset($node, 0, 'server clock set right again');
my $id = $node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
cmp_ok($id, '>', $before_max, 'with the clock set right IDs go on');
cmp_ok(id_unix_ms($id), '<', time() * 1000 + 5_000,
	'... at the real time: no ID and no mark took the jumped time');

# A jump that is real is followed once max_clock_jump is raised past it.
set_clock($node, 2 * 3600);
check_clock_offset($node, 2 * 3600, 'server clock two hours forward');
($elapsed, $ret, $stdout, $stderr) =
  psql_timed($node, 'SELECT snowflake_next_id()');
like($stderr, qr/the clock jumped forward/,
	'a two-hour jump is refused with the default max_clock_jump of 1 h');
alter_system($node, 'snowflake.max_clock_jump' => '3h');
$id = $node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
cmp_ok(id_unix_ms($id), '>', (time() + 3600) * 1000,
	'raising max_clock_jump accepts the jump deliberately');
alter_system($node, 'snowflake.max_clock_jump' => undef);

# Back to the real time: the IDs now lie two hours ahead, and the hint
# names a max_lead that works.
set_clock($node, 0);
check_clock_offset($node, 0, 'server clock back at the real time');
($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	"SET snowflake.max_clock_wait = 0;\nSELECT snowflake_next_id();");
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind\n.*\n.*HINT:  Check the system clock, or raise snowflake\.max_lead to at least (\d+) ms\./,
	'two hours behind the newest ID: the hint names a max_lead');
my ($needed_ms) = $stderr =~ /max_lead to at least (\d+) ms/;
$needed_ms //= 0;
$id = $node->safe_psql('postgres',
	"SET snowflake.max_lead = $needed_ms;\n"
	  . 'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
cmp_ok($id, '>', $before_max, '... and that max_lead works');

# A block needs the lead of its last ID: its hint names a max_lead longer
# than a single ID's by the block's 244 ms (a million IDs, 4096 a
# millisecond), less the moment between the two calls.
my $hints = $node->safe_psql(
	'postgres', q{
SET snowflake.max_clock_wait = 0;
SET snowflake.max_lead = '1s';
CREATE FUNCTION pg_temp.hint_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN hint;
END $$;
SELECT pg_temp.hint_of('SELECT snowflake_next_id()') || ' / ' ||
	pg_temp.hint_of('SELECT count(*) FROM snowflake_next_ids(1000000)');});
my ($one_ms, $block_ms) = $hints =~ /max_lead to at least (\d+) ms/g;
cmp_ok(($block_ms // 0) - ($one_ms // 0),
	'>', 200, 'a block\'s hint names the lead its last ID needs')
  or diag $hints;
is( $node->safe_psql(
		'postgres', "SET snowflake.max_lead = " . ($block_ms // 0) . ";\n"
		  . 'SELECT count(*) FROM snowflake_next_ids(1000000)'),
	'1000000',
	'... and that max_lead works');

# A clock already 30 years ahead when the server starts is not seen as a
# jump: IDs take that time.
$node->stop;
set_clock($node, 30 * 365 * $day);
start_node($node);
my $far_id = $node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
cmp_ok(id_unix_ms($far_id), '>', (time() + 29 * 365 * $day) * 1000,
	'a clock wrong at start gives IDs 30 years ahead');
$node->stop;
set_clock($node, 0);
start_node($node);
($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	"SET snowflake.max_clock_wait = 0;\nSELECT snowflake_next_id();");
like(
	$stderr,
	qr/HINT:  No snowflake\.max_lead reaches that far; see "A clock far in the future" in the README\./,
	'with the clock right again, the hint points to the README procedure');

# The documented procedure: remove the IDs that carry the bad time, then
# remove the mark file and restart.
$node->safe_psql('postgres',
	"DELETE FROM ids WHERE id >= $far_id");
$node->stop;
unlink($node->data_dir . '/snowflake.mark')
  or die "could not remove snowflake.mark: $!";
start_node($node);
$id = $node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
ok($id < $far_id && id_unix_ms($id) < time() * 1000 + 5_000,
	'after the procedure IDs follow the real clock again');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
	't', 'all IDs kept are distinct');

$node->stop;
done_testing();
