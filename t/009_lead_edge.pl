
# Copyright (c) 2026, the snowflake authors

# Sessions that draw IDs faster than a narrow sequence lets the clock give
# them keep the generator at the edge of a short max_lead: claims that burn
# ticks past the lead, waits for the next millisecond, and compare-and-swaps
# that lose races, all at once.  Two layouts take the two ways of claiming
# (see snowflake_claims_may_add in src/generate.c):
#   - 4 bits of sequence, 16 ticks a millisecond, fewer than the server's
#     backends: every claim is a compare-and-swap;
#   - 8 bits, 256 ticks a millisecond, more than its backends: one ID well
#     inside the lead is an atomic addition, and the additions that raced
#     past the lead burn their ticks.
# Either way no ID is repeated, each session's IDs strictly increase, and no
# ID's time lies before its statement's start or beyond max_lead of the
# clock after it.
#
# Then a long load at the edge: after a burst has used the lead up, one
# session (and then four) streams IDs faster than the 8-bit sequence's 256
# a millisecond, at max_lead 20, 100 and 1000 ms.  The generator then stays
# at the edge of the lead, where a claim checked against the coarse clock,
# which lags the clock, would find the lead used up and burn its tick; 1.3
# burnt one tick for almost every ID issued there.  Fewer than 1% of the
# ticks may be burnt (snowflake_status.ticks_burnt), and at 1000 ms, where
# the generator never falls back to the clock, the ticks it moved beyond the
# IDs issued say the same without the counter.  Last, max_lead lowered by
# reload below the generator's lead is not recorded as a step of the clock.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $lead = 20;

foreach my $case ([ 4, 4, 20_000 ], [ 8, 4, 100_000 ])
{
	my ($bits, $sessions, $per_session) = @$case;
	my $total = $sessions * $per_session;
	my $node = snowflake_node("edge$bits",
		extra_conf => "snowflake.sequence_bits = $bits\n"
		  . "snowflake.max_lead = $lead\n");
	start_node($node);
	$node->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (client int, n int, id bigint, started timestamptz,
	after timestamptz)});
	# MaxBackends, as the server counts it: from 18 on autovacuum_worker_slots
	# and two special workers, before autovacuum_max_workers and one
	my $max_backends = $node->safe_psql(
		'postgres', q{
SELECT current_setting('max_connections')::int
	+ coalesce(current_setting('autovacuum_worker_slots', true)::int + 2,
		current_setting('autovacuum_max_workers')::int + 1)
	+ current_setting('max_worker_processes')::int
	+ current_setting('max_wal_senders')::int});
	my $adds = $max_backends < 2**$bits;
	ok($adds == ($bits == 8),
		"$bits-bit sequence, $max_backends backends: claims "
		  . ($adds ? 'may add' : 'only compare-and-swap'));

	my $waits_before = $node->safe_psql('postgres',
		'SELECT sequence_waits FROM snowflake_status');
	$node->pgbench(
		"--no-vacuum --client=$sessions --jobs=2 --transactions=1",
		0,
		[qr{processed: $sessions/$sessions}],
		[qr{^$}],
		"$bits-bit sequence: $sessions sessions draw $per_session IDs each "
		  . "at once, max_lead $lead ms",
		{
			"009_edge_$bits" => "INSERT INTO ids SELECT :client_id, n, "
			  . 'snowflake_next_id(), statement_timestamp(), clock_timestamp() '
			  . "FROM generate_series(1, $per_session) n;"
		});
	is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM ids'),
		"$total|$total", "$bits-bit sequence: $total IDs, all distinct");
	check_strictly_increasing($node, 'ids',
		"$bits-bit sequence: each session's IDs strictly increase",
		partition_by => 'client');
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FILTER (WHERE t < date_trunc('milliseconds', started)),
	count(*) FILTER (WHERE t > date_trunc('milliseconds', after)
		+ interval '1 ms' * $lead)
FROM (SELECT snowflake_timestamp(id) AS t, started, after FROM ids) x}),
		'0|0',
		"$bits-bit sequence: no ID's time is before its statement's start, "
		  . 'nor beyond max_lead of the clock after it');
	cmp_ok(
		$node->safe_psql('postgres',
			"SELECT sequence_waits - $waits_before FROM snowflake_status"),
		'>', 0,
		"$bits-bit sequence: calls waited at the edge of the lead");
	$node->stop;
}

# the newest tick of an 8-bit sequence (41, 5, 5 and 8 bits), the ticks
# burnt, the IDs issued and the calls that waited at the edge, so far
my $counts = q{(last_id >> 18) * 256 + (last_id & 255) AS tick,
	ticks_burnt AS burnt, ids_issued AS issued, sequence_waits AS waits
FROM snowflake_status};
my $node = snowflake_node('stream',
	extra_conf => "snowflake.sequence_bits = 8\n"
	  . "snowflake.max_lead = 1000\n");
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
foreach my $stream_lead (20, 100, 1000)
{
	# a burst four times the lead, then 2 s of IDs at the ceiling
	my $burst = 4 * 256 * ($stream_lead + 1);
	my ($burnt, $issued, $moved, $waits) = split /\|/, $node->safe_psql(
		'postgres', qq{
\\o /dev/null
SET snowflake.max_lead = $stream_lead;
SELECT pg_sleep(1.1);
SELECT count(snowflake_next_id()) FROM generate_series(1, $burst);
SELECT $counts \\gset
SELECT count(snowflake_next_id()) FROM generate_series(1, 512000);
\\o
SELECT burnt - :burnt, issued - :issued, tick - :tick - (issued - :issued),
	waits - :waits
FROM (SELECT $counts) s;});
	is($issued, 512000, "max_lead $stream_lead ms: one session streams 512000 IDs after a burst");
	cmp_ok($waits, '>', 0, "max_lead $stream_lead ms: ... at the edge of the lead (calls waited there)");
	cmp_ok($burnt, '<', $issued / 100,
		"max_lead $stream_lead ms: ... burning fewer ticks than 1% of them ($burnt)");
	cmp_ok($moved, '<', $issued / 100,
		"max_lead $stream_lead ms: ... and the generator moved fewer ticks beyond them ($moved)")
	  if $stream_lead == 1000;
}

# four sessions at once, max_lead 100 ms, each a burst and then a stream
my ($burnt0, $issued0) = split /\|/,
  $node->safe_psql('postgres', 'SELECT ticks_burnt, ids_issued FROM snowflake_status');
$node->pgbench(
	'--no-vacuum --client=4 --jobs=2 --transactions=1',
	0,
	[qr{processed: 4/4}],
	[qr{^$}],
	'four sessions burst, then stream IDs at the edge of a 100 ms lead',
	{
		'009_stream' => "SET snowflake.max_lead = 100;\n"
		  . 'SELECT count(snowflake_next_id()) FROM generate_series(1, 103424);'
		  . "\n"
		  . 'SELECT count(snowflake_next_id()) FROM generate_series(1, 128000);'
	});
my ($burnt, $issued) = split /\|/, $node->safe_psql('postgres',
	"SELECT ticks_burnt - $burnt0, ids_issued - $issued0 FROM snowflake_status");
is($issued, 4 * (103424 + 128000), 'four sessions: every ID counted');
cmp_ok($burnt, '<', $issued / 100,
	"four sessions: fewer ticks burnt than 1% of the IDs issued ($burnt)");

# A lead lowered below the generator's makes calls wait for the clock, but
# it is no step of the clock: max_step_back_ms stays 0 (1.3 recorded how far
# the generator was ahead).  A block of 200,000 IDs puts the generator
# ahead at once (781 ms with this node's 256 IDs a millisecond), however
# busy the machine, and the lead is
# lowered from 1000 to 0 in the same session right after it, so that the
# next call still finds the generator ahead.
my $behind_waits = $node->safe_psql('postgres',
	'SELECT clock_behind_waits FROM snowflake_status');
is( $node->safe_psql(
		'postgres', qq{
SET snowflake.max_lead = 1000;
SET snowflake.max_clock_wait = 5000;
SELECT count(*) > 0 FROM snowflake_next_ids(200000);
SET snowflake.max_lead = 0;
SELECT snowflake_next_id() > 0;
SELECT clock_behind_waits > $behind_waits, max_step_back_ms
FROM snowflake_status}),
	"t\nt\nt|0",
	'max_lead lowered from 1000 to 0: a call waits for the clock, '
	  . 'and max_step_back_ms records no step');
$node->stop;

done_testing();
