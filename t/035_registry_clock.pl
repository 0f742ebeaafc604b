
# Copyright (c) 2026, the snowflake authors

# A forward step of the registry's clock (issue 23, finding 3): datacenter
# 3 has one worker id free, which server A holds; A is cut off from the
# registry; the registry's clock steps 180 s forward (libfaketime, live),
# past A's promise plus the reclaim period of a minute.  Server B, of
# another login, may then take the worker id, and does; but A issues no ID
# past the promise the registry recorded for it, and B issues none at or
# below that promise, so the IDs of the two never repeat or interleave,
# whatever the registry's clock says.  1.3 timed its reclaim lease on the
# registry's clock alone, and B generated 130,350 IDs identical to A's.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

skip_without_libfaketime();

my $registry =
  snowflake_registry('registry', clock => 1, no_cache => 1, lease => '2 s',
	layout => '1288834974657/41/5/1/16');
$registry->safe_psql('postgres',
	"SELECT snowflake_registry.configure(reclaim_after => '1 min')");

# One worker bit: datacenter 3 has worker ids 0 and 1.  A claims 0, then 1
# is held, for an hour, by a server elsewhere (recorded after A's claim
# started the registry's epoch: an epoch starting later would lie above
# that promise, as above every promise recorded).
my $layout_conf = "snowflake.datacenter_id = 3\nsnowflake.worker_bits = 1\n"
  . "snowflake.sequence_bits = 16\n";
my %layout = (worker_bits => 1, sequence_bits => 16);
my $node_a = snowflake_node('a', registry => $registry, extra_conf => $layout_conf);
start_node($node_a);
is((wait_for_pair($node_a))[0], '3|0', 'server A holds the free worker id of datacenter 3');
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, version, epoch, layout, floor,
	 promise, claimed_at, extended_at)
SELECT 3, 1, 'elsewhere', 'held', 1, s.epoch, '1288834974657/41/5/1/16',
	   clock_timestamp(), clock_timestamp() + interval '1 hour',
	   clock_timestamp(), clock_timestamp()
FROM snowflake_registry.settings s});
my $node_b = snowflake_node('b', registry => $registry, extra_conf => $layout_conf);
start_node($node_b);
like(
	(next_pair($node_b))[1],
	qr/all 2 worker ids of datacenter 3 are claimed/,
	'server B, of another login, finds datacenter 3 full');

my $stream_a = start_id_stream($node_a, 'a');
my $stream_b = start_id_stream($node_b, 'b');
ok(wait_for_stream($stream_a, '(SELECT count(*) FROM ids) > 0'),
	'A generates');

# A cut off from the registry, once no call of it is under way there (a
# call that the registry carried out after the step would give A a promise
# 180 s ahead).
my $cut       = cut_off($registry, $node_a);
my $promise_a = registry_claim($registry, '3|0', 'promise');

set_clock($registry, 180);
check_clock_offset($registry, 180,
	"the registry's clock steps 180 s forward");
check_cut_off_handover($registry, $cut, $stream_a, $stream_b, '3|0',
	'from A to B', %layout);
my ($owner, $floor, $by_clock) = split /\|/,
  registry_claim($registry, '3|0',
	"owner, floor = '$promise_a', claimed_at > floor + interval '1 min'");
is($owner, 'b', 'the registry gave the worker id to B');
is($floor, 't', "above A's promise");
is($by_clock, 't',
	'a reclaim period after that promise by the registry\'s clock');

set_clock($registry, 0);
$_->stop foreach ($node_a, $node_b);
done_testing();
