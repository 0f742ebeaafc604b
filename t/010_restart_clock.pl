
# Copyright (c) 2026, the snowflake authors

# A clean restart with the clock set back one hour.
#
# Shared memory forgets the generator's state at a restart, so what keeps the
# next ID above every ID issued before is the durable high-water mark that a
# clean shutdown writes just past the last ID.  With the clock an hour behind
# that mark the first call must follow the policy: with the default settings
# it waits snowflake.max_clock_wait (1 s) for the clock and then fails with
# SQLSTATE 58000; with snowflake.max_lead = 2 h it goes on at once, above the
# mark.  Either way no ID repeats and none is lower than one issued before.
#
# The server's clock is moved with libfaketime (see SnowflakeTest.pm); the
# test checks that it really moved, so that a broken libfaketime setup fails
# the test instead of letting it pass without the clock ever going back.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = faketime_node('main',
	clock_test => 'server clock starts at the real time');

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (
	n bigint GENERATED ALWAYS AS IDENTITY,
	id bigint NOT NULL,
	phase text NOT NULL);
INSERT INTO ids (id, phase)
	SELECT snowflake_next_id(), 'before' FROM generate_series(1, 10000);
});
my $before_max = $node->safe_psql('postgres',
	"SELECT max(id) FROM ids WHERE phase = 'before'");
like($before_max, qr/^\d+$/, 'IDs generated before the restart');

# A clean shutdown stores the exact mark: just past the last ID's ms.
$node->stop;
my $mark = read_mark_file($node->data_dir . '/snowflake.mark');
is($mark->{size}, 40, 'mark file has 40 bytes');
ok( $mark->{magic} == MARK_MAGIC && $mark->{crc_ok},
	'mark file has the magic number and a valid checksum');
is( $mark->{mark_ms},
	id_ms($before_max) + 1,
	'clean shutdown wrote the mark one ms past the last ID');

# Back one hour, then start again.
set_clock($node, -3600);
start_node($node);
check_clock_offset($node, -3600, 'server clock is one hour behind');

# Without the mark the restarted server would issue IDs an hour lower: make
# sure the clock really is that far below the IDs issued before.
my $behind_s = $node->safe_psql('postgres',
	"SELECT extract(epoch FROM (snowflake_parse($before_max)).ts - clock_timestamp())"
);
cmp_ok($behind_s, '>', 3500,
	'last ID before the restart lies an hour ahead of the clock');

# Default settings (max_lead 0, max_clock_wait 1 s): wait 1 s, then 58000.
my ($elapsed, $ret, $stdout, $stderr) =
  psql_timed($node, 'SELECT snowflake_next_id()');
isnt($ret, 0, 'with default settings the first call after the restart fails');
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
	'... with SQLSTATE 58000, the clock is behind');
like(
	$stderr,
	qr/DETAIL:  The clock is (\d+) ms behind/,
	'... and a detail saying how far');
my ($detail_ms) = $stderr =~ /The clock is (\d+) ms behind/;
ok(defined $detail_ms && $detail_ms > 3_500_000 && $detail_ms < 3_700_000,
	'... about one hour')
  or diag "detail says " . ($detail_ms // 'nothing');
cmp_ok($elapsed, '>=', 0.9,
	'... after waiting snowflake.max_clock_wait (1 s) for the clock');

# max_clock_wait = 0 refuses at once.
($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
	"SET snowflake.max_clock_wait = 0;\nSELECT snowflake_next_id();");
like(
	$stderr,
	qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
	'with max_clock_wait = 0 the call fails too');

is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM ids WHERE phase <> 'before'"),
	'0',
	'no ID was stored by the failed calls');
is($node->safe_psql('postgres', 'SELECT last_id IS NULL FROM snowflake_status'),
	't', 'snowflake_status shows no last ID: none was issued since the start');

# max_lead = 2 h, set the way an operator would and reloaded: the generator
# may run an hour ahead of the clock, so it goes on without waiting.
# max_clock_wait = 0 makes any wait for the clock an error, so success means
# that the call did not wait.
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'ALTER SYSTEM SET snowflake.max_lead = 7200000');
is($ret, 0, 'snowflake.max_lead can be set to 2h') or diag $stderr;
my $lead = '2h';
alter_system($node, 'snowflake.max_clock_wait' => 0);

# One ID first, at the mark: the status names it.
is( $node->safe_psql(
		'postgres', q{
INSERT INTO ids (id, phase) VALUES (snowflake_next_id(), 'after');
SELECT last_id = (SELECT max(id) FROM ids) FROM snowflake_status;
}),
	't',
	"with max_lead = $lead the first ID after the restart is issued at once, "
	  . 'and snowflake_status shows it');
($elapsed, $ret, $stdout, $stderr) = psql_timed(
	$node, q{
INSERT INTO ids (id, phase)
	SELECT snowflake_next_id(), 'after' FROM generate_series(1, 9999);
});
is($ret, 0, "with max_lead = $lead generation goes on without waiting")
  or diag $stderr;

my $result = $node->safe_psql(
	'postgres', q{
SELECT count(*), count(DISTINCT id) FROM ids;
SELECT (SELECT min(id) FROM ids WHERE phase = 'after') >
	(SELECT max(id) FROM ids WHERE phase = 'before');
SELECT min(id) >> 22 FROM ids WHERE phase = 'after';
SELECT extract(epoch FROM
	(SELECT (snowflake_parse(min(id))).ts FROM ids WHERE phase = 'after') -
	clock_timestamp()) > 3500;
});
my ($counts, $greater, $first_ms, $ahead) = split /\n/, $result;
is($counts, '20000|20000', 'no ID repeats across the restart');
is( $node->safe_psql(
		'postgres',
		"SELECT last_id = (SELECT max(id) FROM ids) FROM snowflake_status"),
	't',
	'snowflake_status shows the last ID issued, the first ones above the mark');
is($greater, 't',
	'every ID after the restart is greater than every ID before it');
check_strictly_increasing($node, 'ids',
	'IDs strictly increase in the order issued');
cmp_ok($first_ms, '>=', $mark->{mark_ms},
	'generation resumed at or above the mark');
is($ahead, 't',
	'the new IDs run an hour ahead of the clock, as max_lead allows');

done_testing();
