
# Copyright (c) 2026, the snowflake authors

# A block of IDs and a clock that stepped back: snowflake_next_ids(n)
# follows snowflake.max_lead and snowflake.max_clock_wait exactly as single
# IDs do, and the status view records the step.
#
# After the clock steps back 8 s, with max_lead 0 and max_clock_wait 0 a
# block is refused like a single ID; with max_clock_wait 10 s it waits for
# the clock and is issued above every earlier ID; with max_lead 10 s it is
# issued at once, ahead of the clock, but no ID of it further ahead than
# max_lead.  The clock is moved with libfaketime (see SnowflakeTest.pm).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time);

my $node = faketime_node('block',
	no_cache   => 1,
	clock_test => 'server clock starts at the real time');
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint);
INSERT INTO ids SELECT snowflake_next_ids(4000);
});

# 8 s, so that the clock is still behind at the last block below, however
# long a loaded machine takes over the calls before it.
set_clock($node, -8);
check_clock_offset($node, -8, 'server clock stepped back 8 s');

my ($secs, $ret, $out, $err) = psql_timed($node, q{
SET snowflake.max_clock_wait = 0;
SELECT count(*) FROM snowflake_next_ids(100);
});
isnt($ret, 0, 'lead 0, wait 0: a block is refused');
like($err, qr/58000: could not generate a snowflake ID: the clock is behind/,
	'... with the clock-behind error of a single ID');
is($node->safe_psql('postgres', 'SELECT clock_refusing FROM snowflake_status'),
	't', 'the status view shows that calls are being refused');

($secs, $ret, $out, $err) = psql_timed($node, q{
SET snowflake.max_lead = 10000;
INSERT INTO ids SELECT snowflake_next_ids(4000);
SELECT max(id) = snowflake_last_id(),
	(snowflake_parse(max(id))).ts - clock_timestamp() <= interval '10 s'
FROM ids;
});
is($ret, 0, 'lead 10 s: a block is issued at once') or diag $err;
is($out, 't|t', '... its last ID is the session\'s last, within the lead');
cmp_ok($secs, '<', 2.5, '... without waiting for the clock');

($secs, $ret, $out, $err) = psql_timed($node, q{
SET snowflake.max_clock_wait = '10s';
SELECT max(id) AS before FROM ids \gset
INSERT INTO ids SELECT snowflake_next_ids(100);
SELECT min(b) > :before FROM (SELECT id AS b FROM ids ORDER BY id DESC LIMIT 100) s;
});
is($ret, 0, 'lead 0, wait 10 s: a block waits for the clock') or diag $err;
is($out, 't', '... and is issued above every earlier ID');
cmp_ok($secs, '>', 0.5, "... after waiting (${secs} s)");

my ($behind_waits, $errors, $step_back, $refusing) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT clock_behind_waits, clock_errors, max_step_back_ms, clock_refusing FROM snowflake_status'
  );
cmp_ok($behind_waits, '>=', 1, 'the status view counts the wait for the clock');
cmp_ok($errors, '>=', 1, 'the status view counts the refusal');
cmp_ok($step_back, '>=', 1000,
	"the status view shows the step back ($step_back ms)");
is($refusing, 'f', 'the refusals ended with the IDs issued since');

is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
	't', 'every ID is distinct');

done_testing();
