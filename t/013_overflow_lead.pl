
# Copyright (c) 2026, the snowflake authors

# More IDs than one millisecond holds, with and without a lead.
#
# A millisecond has 4096 sequence numbers.  With snowflake.max_lead = 0 a
# call that finds them used up waits for the next millisecond: no ms holds
# more than 4096 IDs and no ID's time is ahead of the clock.  With a lead the
# generator instead goes on in later milliseconds, ahead of the clock, but
# never further ahead than max_lead: a burst of 2,000,000 IDs then takes less
# time than the milliseconds its IDs cover.
#
# One backend here issues IDs at well under 4096 per real millisecond, so on
# its own it would never run out of a millisecond.  The server's clock is
# therefore slowed twentyfold with libfaketime (see SnowflakeTest.pm): a
# server millisecond lasts 20 real ones, and the per-ms limit, not the CPU,
# sets the pace, as it would on a faster machine.  Everything is judged by
# the server's own clock (clock_timestamp()), which the generator reads too.
# The test checks that the clock really runs slow and that milliseconds
# really filled up, so that it cannot pass without the limits being reached.
#
# Each ID is bracketed by the clock_timestamp() evaluated right after it in
# the same target list (PostgreSQL evaluates a target list in order).  That
# is the sound side for "no ID is ahead of the clock by more than max_lead":
# the generator promises id_ms <= now_ms + max_lead for the clock it read
# during the call, and the clock read after the call is no earlier, so
# id_ms <= ms(after) + max_lead must hold for every ID.  A clock read before
# the call could be up to a whole call earlier and would make a correct
# generator fail the check.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $rate = 0.05;
my $node = faketime_node('main',
	rate       => $rate,
	clock_test => 'server clock runs at 1/20 of real speed');

$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# lead 0: 200000 IDs in one statement.
my $result = $node->safe_psql(
	'postgres', q{
SET snowflake.max_lead = 0;
CREATE TABLE lead0 AS
	SELECT n, snowflake_next_id() AS id, clock_timestamp() AS after
	FROM generate_series(1, 200000) n;
CREATE TABLE lead0_parsed AS
	SELECT n, id, p.*, after FROM lead0, LATERAL snowflake_parse(id) p;
SELECT max(c), count(*) FILTER (WHERE c = 4096) FROM (
	SELECT count(*) AS c FROM lead0_parsed GROUP BY ts) s;
SELECT count(*) FROM lead0_parsed WHERE ts > after;
});
my ($per_ms, $ahead) = split /\n/, $result;
check_strictly_increasing($node, 'lead0_parsed', 'lead 0: IDs strictly increase');
my ($max_per_ms, $full_ms) = split /\|/, $per_ms;
is($max_per_ms, '4096', 'lead 0: no millisecond holds more than 4096 IDs');
cmp_ok($full_ms, '>=', 10,
	'lead 0: many milliseconds were used up, so calls had to wait for the next'
);
is($ahead, '0', 'lead 0: no ID is ahead of the clock read right after it');

# For the bigger bursts snowflake_parse() would dominate the run time, so the
# IDs' times are computed from the ID bits and the epoch; a sample of them is
# checked against snowflake_parse().  Since an ID's time is a whole
# millisecond, ts <= date_trunc('milliseconds', after) + lead is the same as
# ts <= after + lead, the form used below.
my $epoch = $node->safe_psql('postgres', 'SHOW snowflake.epoch');

# Checks on one burst of IDs in table or CTE "burst" (n, id, after).
my $burst_checks = q{
SELECT count(*),
	count(*) FILTER (WHERE id <= prev),
	count(*) FILTER (WHERE n % 1000 = 0 AND ts <> (snowflake_parse(id)).ts),
	count(*) FILTER (WHERE ts > after + :'lead'::int * interval '1 ms'),
	round(extract(epoch FROM max(ts - after)) * 1000),
	round(extract(epoch FROM max(after) - :'before') * 1000, 3),
	max(id >> 22) - min(id >> 22) + 1
FROM (
	SELECT n, id, after, lag(id) OVER (ORDER BY n) AS prev,
		:'epoch'::timestamptz + (id >> 22) * interval '1 ms' AS ts
	FROM burst) s;
};

# Issue count IDs in one statement with the given lead and return the
# checks' results.
sub burst
{
	my ($lead, $count) = @_;
	my $r = $node->safe_psql(
		'postgres', qq{
\\set epoch '$epoch'
\\set lead $lead
SET snowflake.max_lead = :lead;
SET work_mem = '512MB';
SELECT clock_timestamp() AS before \\gset
WITH burst AS MATERIALIZED (
	SELECT n, snowflake_next_id() AS id, clock_timestamp() AS after
	FROM generate_series(1, $count) n)
$burst_checks});
	my %r;
	@r{ qw(count not_increasing parse_mismatch too_far max_lead wall_ms span_ms)
	} = split /\|/, $r;
	return \%r;
}

# A small lead, 20 ms, that a burst of 300000 IDs (73 ms of sequence) runs
# into: the IDs go ahead of the clock, up to the lead and no further.
my $r = burst(20, 300000);
is($r->{not_increasing}, '0', 'lead 20 ms: IDs strictly increase');
is($r->{parse_mismatch}, '0',
	'lead 20 ms: IDs\' times agree with snowflake_parse()');
cmp_ok($r->{max_lead}, '>=', 15,
	'lead 20 ms: IDs went ahead of the clock, up to the lead');
is($r->{too_far}, '0',
	'lead 20 ms: no ID is more than 20 ms ahead of the clock read after it');

# lead 1000: a burst of 2,000,000 IDs.  The burst's wall time runs from a
# clock read before the statement to the clock read after its last ID.
$r = burst(1000, 2000000);
is($r->{count}, '2000000',    'lead 1000: the burst issued 2,000,000 IDs');
is($r->{not_increasing}, '0', 'lead 1000: IDs strictly increase');
is($r->{parse_mismatch}, '0',
	'lead 1000: IDs\' times agree with snowflake_parse()');
cmp_ok($r->{wall_ms}, '<', $r->{span_ms},
	'lead 1000: the burst took less time than the milliseconds its IDs cover'
);
is($r->{too_far}, '0',
	'lead 1000: no ID is more than 1000 ms ahead of the clock read after it');
note
  "burst: $r->{wall_ms} ms of server time for IDs covering $r->{span_ms} ms, "
  . "at most $r->{max_lead} ms ahead of the clock";

done_testing();
