
# Copyright (c) 2026, the snowflake authors

# The promise the registry records for a claim's holder, at most a lease
# ahead of its clock, bounds the holder's IDs; a claim passes to another
# server only above it (issue 23):
#   1. a claim outside the server's layout is never handed back, nor is
#      any claim to a server that left the fleet's layout;
#   2. no ID passes the promise: a block that would run past it is refused,
#      and issues no ID;
#   3. a call that waited for the clock while its claim was released issues
#      no ID with the released worker id: it goes on with the worker id its
#      server claims anew, or fails;
#   4. a claim released while its holder is cut off from the registry
#      passes to another server once the holder's promise has passed, and
#      the holder's IDs stop at that promise;
#   5. the same with a claim reassigned to another login, which is told
#      meanwhile that the worker id is being freed for it;
#   6. a cached claim is never used (finding 4): server A shuts down
#      cleanly, an operator reassigns its worker id to B's login, B takes it
#      and generates; A, started while the registry is down, generates
#      nothing, and once the registry is back claims another worker id.
#      1.3 generated on A's cached claim: 97,262 IDs identical to B's.
# In 4 to 6 each server draws IDs in a stream of its own (start_id_stream),
# and the IDs of every holder of a pair are compared: no ID twice, and the
# holders' ranges of ID time disjoint.  A registry serves one layout, its
# fleet's: 1, 2 and 4 to 5 each have a registry of their own.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The lease, long enough for a claim reassigned to be seen waiting for its
# holder's promise.
my $registry = snowflake_registry('registry', lease => '5 s');

# Hold worker id 1 of datacenter dc on registry, its promise the lease
# ahead, for a server elsewhere whose layout has one worker bit.
sub hold_elsewhere
{
	my ($registry, $dc) = @_;
	$registry->safe_psql(
		'postgres', qq{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, version, epoch, layout, floor,
	 promise, claimed_at, extended_at)
SELECT $dc, 1, 'elsewhere', 'held', 1, s.epoch, '1288834974657/41/5/1/16',
	   clock_timestamp(), clock_timestamp() + s.lease,
	   clock_timestamp(), clock_timestamp()
FROM snowflake_registry.settings s});
	return;
}

#
# 1. A claim the layout cannot hold is not handed back: a server that left
# its fleet's layout (6 worker bits) gets no claim at all.
#
my $wide_registry = snowflake_registry('wide_registry', lease => '5 s',
	layout => '1288834974657/41/5/6/11');
$wide_registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, version, epoch, layout, floor,
	 promise, claimed_at, extended_at)
SELECT 8, w, 'elsewhere_' || w, 'held', 1, s.epoch, '1288834974657/41/5/6/11',
	   clock_timestamp(), clock_timestamp() + s.lease,
	   clock_timestamp(), clock_timestamp()
FROM generate_series(0, 39) w, snowflake_registry.settings s});
my $wide = snowflake_node('wide', registry => $wide_registry,
	extra_conf => "snowflake.datacenter_id = 8\nsnowflake.sequence_bits = 11\n"
	  . "snowflake.worker_bits = 6\n");
start_node($wide);
is((wait_for_pair($wide))[0], '8|40',
	'with 6 worker bits, the server claims worker id 40');
$wide->stop;
$wide->append_conf('postgresql.conf',
	"snowflake.worker_bits = 5\nsnowflake.sequence_bits = 12\n"
	  . "snowflake.accept_layout_change = on\n");
start_node($wide);
my ($narrow_pair, $err) = next_pair($wide);
ok(!defined $narrow_pair,
	"back to Twitter's layout, it does not get worker id 40 back");
like($err, qr/55000: could not generate a snowflake ID: this server's layout is not its fleet's/,
	'nor any other: its layout is no longer its fleet\'s');
isnt($wide->safe_psql('postgres', 'SELECT worker_id FROM snowflake_status'),
	'40', 'snowflake_status does not show worker id 40');
$wide->stop;
$wide_registry->stop;

#
# 2. No ID passes the promise: with a max_lead of an hour, a block that
# stays well within the lease is issued ahead of the clock; one that would
# run 10 s ahead (four bits of sequence: 16 IDs a millisecond), past the
# lease of 5 s, is refused and issues no ID.
#
my $bounded_registry = snowflake_registry('bounded_registry', lease => '5 s',
	layout => '1288834974657/41/5/5/4');
my $bounded = snowflake_node('bounded', registry => $bounded_registry,
	extra_conf => "snowflake.sequence_bits = 4\n");
start_node($bounded);
wait_for_pair($bounded);
is( $bounded->safe_psql(
		'postgres', q{SET snowflake.max_lead = '1h';
SELECT count(*) FROM snowflake_next_ids(1600)}),
	'1600',
	'a block within the promise is issued ahead of the clock');
my ($block_out, $block_err);
$bounded->psql(
	'postgres', '\set VERBOSITY verbose' . "\n" . q{SET snowflake.max_lead = '1h';
SELECT count(*) FROM snowflake_next_ids(160000)},
	stdout => \$block_out,
	stderr => \$block_err);
like(
	$block_err,
	qr/ERROR:  55000: could not generate a snowflake ID: the ID would pass the time the registry recorded for this server's claim\n.*DETAIL:  The registry recorded that this server issues no ID later than \d+ ms after snowflake.epoch until it extends the claim; the next ID is \d+ ms later\./,
	'a block that would run 10 s ahead, past the promise, is refused');
unlike($block_out, qr/\d/, 'and issues no ID');
$bounded->stop;
$bounded_registry->stop;

#
# 3. A call that waits for the clock while its claim is released issues no
# ID with the released worker id.  The server confirms the release at its
# next extension, then claims a worker id anew; a call that waited
# meanwhile goes on with the new claim, above every ID before, or fails if
# it has none yet.
#
my $waiting = snowflake_node('waiting', registry => $registry);
start_node($waiting);
my ($pair) = wait_for_pair($waiting);
my $waiting_worker = (split /\|/, $pair)[1];
my $newest_before = $waiting->safe_psql('postgres', 'SELECT snowflake_next_id()');
set_clock($waiting, -8);
check_clock_offset($waiting, -8, 'the server clock is 8 s behind');
my $bg = start_waiter(
	$waiting, 'waiter', \my $bg_out, \my $bg_err,
	'SET snowflake.max_lead = 0',
	'SET snowflake.max_clock_wait = 30000',
	'SELECT snowflake_next_id()');
ok( wait_for_wait_event(
		$waiting, "application_name = 'waiter'",
		'SnowflakeClock'),
	'a call waits for the clock');
$registry->safe_psql('postgres',
	"SELECT snowflake_registry.release(5, $waiting_worker)");
ok( $registry->poll_query_until(
		'postgres',
		"SELECT state = 'released' AND confirmed FROM snowflake_registry.claims "
		  . "WHERE (datacenter_id, worker_id) = (5, $waiting_worker)"),
	'the server confirms the release');
$bg->finish;
my ($waited_id) = $bg_out =~ /^(\d+)$/m;
if (defined $waited_id)
{
	isnt(($waited_id >> 12) & 31, $waiting_worker,
		'the waiting call issues no ID with the released worker id: it goes on with the one claimed anew'
	);
	cmp_ok($waited_id, '>', $newest_before, 'above every ID before');
}
else
{
	like(
		$bg_err,
		qr/this server's claim on worker id $waiting_worker of datacenter 5 was released on the registry|this server's registry claim changed during the call/,
		'the waiting call fails, and says that its claim was released');
}
set_clock($waiting, 0);
$waiting->stop;

#
# 4. A claim released while its holder is cut off.  Datacenter 6 has one
# worker bit, and worker id 1 is held elsewhere.
#
my $one_bit = "snowflake.worker_bits = 1\nsnowflake.sequence_bits = 16\n";
my %layout = (worker_bits => 1, sequence_bits => 16);
my $one_bit_registry = snowflake_registry('one_bit_registry', lease => '5 s',
	layout => '1288834974657/41/5/1/16');
hold_elsewhere($one_bit_registry, 6);
my $old = snowflake_node('old', registry => $one_bit_registry,
	extra_conf => "snowflake.datacenter_id = 6\n$one_bit");
start_node($old);
is((wait_for_pair($old))[0], '6|0',
	'a server holds the one free worker id of datacenter 6');
my $newcomer = snowflake_node('newcomer', registry => $one_bit_registry,
	extra_conf => "snowflake.datacenter_id = 6\n$one_bit");
start_node($newcomer);
like((next_pair($newcomer))[1],
	qr/all 2 worker ids of datacenter 6 are claimed/,
	'another server, of another login, finds datacenter 6 full');

my $old_1      = start_id_stream($old,      'old_1');
my $newcomer_1 = start_id_stream($newcomer, 'newcomer_1');
ok(wait_for_stream($old_1, '(SELECT count(*) FROM ids) > 0'),
	'the holder generates');
my $cut       = cut_off($one_bit_registry, $old);
my $free_from = $one_bit_registry->safe_psql('postgres',
	'SELECT snowflake_registry.release(6, 0)');
is(registry_claim($one_bit_registry, '6|0', "promise = '$free_from'"),
	't', 'a release of a claim whose holder is silent says it passes at its promise');
check_cut_off_handover($one_bit_registry, $cut, $old_1, $newcomer_1, '6|0',
	'released', %layout);
my ($owner, $floor) = split /\|/,
  registry_claim($one_bit_registry, '6|0', "owner, floor = '$free_from'");
is($owner, 'newcomer', 'the registry gave the worker id to the other login');
is($floor, 't', 'above the promise the release named');

#
# 5. A claim reassigned while its holder is cut off: the worker id goes
# back from the newcomer to the first server's login.
#
my $old_2      = start_id_stream($old,      'old_2');
my $newcomer_2 = start_id_stream($newcomer, 'newcomer_2');
ok(wait_for_stream($newcomer_2, '(SELECT count(*) FROM ids) > 0'),
	'the newcomer generates');
my $old_log_offset = -s $old->logfile;
$cut       = cut_off($one_bit_registry, $newcomer);
$free_from = $one_bit_registry->safe_psql('postgres',
	"SELECT snowflake_registry.reassign(6, 0, 'old')");
ok( $old->wait_for_log(
		qr/snowflake worker id 0 of datacenter 6 is being freed for this server/,
		$old_log_offset),
	'the login it was reassigned to is told that it is being freed for it');
check_cut_off_handover($one_bit_registry, $cut, $newcomer_2, $old_2, '6|0',
	'reassigned', %layout);
($owner, $floor) = split /\|/,
  registry_claim($one_bit_registry, '6|0', "owner, floor = '$free_from'");
is($owner, 'old', 'the registry gave the worker id to the login it was reassigned to');
is($floor, 't', 'above the promise the reassignment named');
$_->stop foreach ($old, $newcomer, $one_bit_registry);

#
# 6. A cached claim is never used.
#
my $cache_a = snowflake_node('cache_a', registry => $registry);
my $cache_b = snowflake_node('cache_b', registry => $registry);
start_node($cache_a);
($pair) = wait_for_pair($cache_a);
my $worker_a = (split /\|/, $pair)[1];
my $a_before = start_id_stream($cache_a, 'a_before');
ok(wait_for_stream($a_before, '(SELECT count(*) FROM ids) > 0'),
	"A generates with $pair");
stop_id_stream($a_before);
my @a_before_ids = stream_ids($a_before);
$cache_a->stop;
is(registry_claim($registry, $pair, 'state'), 'idle',
	'A shut down cleanly: its claim is idle');
ok(-f $cache_a->data_dir . '/snowflake.claim', 'and A keeps its worker id on disk');
$registry->safe_psql('postgres',
	"SELECT snowflake_registry.reassign(5, $worker_a, 'cache_b')");
start_node($cache_b);
is((wait_for_pair($cache_b))[0], $pair, "B takes A's worker id, reassigned to its login");
my $b_stream = start_id_stream($cache_b, 'b');
ok(wait_for_stream($b_stream, '(SELECT count(*) FROM ids) > 0'),
	'and generates with it');

$registry->stop;
start_node($cache_a);
my $a_after = start_id_stream($cache_a, 'a_after');
ok( wait_for_stream(
		$a_after,
		"(SELECT count(*) FROM errors WHERE message LIKE '55000: could not generate a snowflake ID: the registry cannot be used') >= 3"
	),
	'A, started while the registry is down, is refused: the registry cannot be used'
);
ok(!$cache_a->log_contains('generating with the cached claim'),
	'no cached claim is used');
$registry->start;
ok(wait_for_stream($a_after, '(SELECT count(*) FROM ids) > 0'),
	'once the registry is back, A generates');
stop_id_stream($_) foreach ($b_stream, $a_after);
is( scalar(
		stream_ids(
			$a_after,
			"n < (SELECT max(n) FROM errors WHERE message LIKE '%the registry cannot be used')"
		)),
	0,
	'A generated nothing before its last refusal for want of the registry');
my @a_after_ids = stream_ids($a_after);
my @b_ids       = stream_ids($b_stream);
my $new_pair    = $registry->safe_psql('postgres',
	"SELECT datacenter_id || '|' || worker_id FROM snowflake_registry.claims "
	  . "WHERE owner = 'cache_a' AND state = 'held'");
isnt($new_pair, $pair, "A claimed another worker id ($new_pair)");
check_pair_holders(
	'A before, B and A after: no ID twice, ranges of ID time of one pair disjoint',
	{ a_before => \@a_before_ids, b => \@b_ids, a_after => \@a_after_ids });
$_->stop foreach ($cache_a, $cache_b);

done_testing();
