
# Copyright (c) 2026, the snowflake authors

# The registry's lease keeps two servers from generating with one pair at
# once, in the cases a review of 1.1 broke (issue 14):
#   1. a claim outside the server's layout is never handed back;
#   2. a takeover delay raised by reload governs the lease only once the
#      registry has it, so a new start of the server never takes the claim
#      over while the holder still generates;
#   4. a release of a live claim frees it only once its holder stopped;
#   5. a call that waited for the clock while the claim was lost fails;
#   6. a clone started during a registry outage longer than the takeover
#      delay does not win the claim from its running original;
#   7. a server restarted during a short outage generates again once the
#      registry gives it its own claim back;
# and, found in review of 1.2, a clean restart generates at once however
# long the takeover delay.  A server waiting for a released claim is told so,
# and with require_check_in no ID passes the time promised the registry.
# (3 is in sql/registry.sql, 8 in t/035_registry_clock.pl, 9 in
# sql/between.sql.)

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $registry = snowflake_registry('registry');

# The pair and a new ID from node, or (undef, undef, its error); never dies
sub next_id_of
{
	my ($node) = @_;
	my ($stdout, $stderr);
	$node->psql(
		'postgres', q{
SELECT p.datacenter_id || '|' || p.worker_id || '|' || i.id
FROM (SELECT snowflake_next_id() AS id) i, snowflake_parse(i.id) p},
		stdout => \$stdout,
		stderr => \$stderr);
	return $stdout =~ /^(\d+\|\d+)\|(\d+)$/m ? ($1, $2) : (undef, undef, $stderr);
}

# Draws IDs from each node in turn for the given seconds; returns, per node
# name, the times (the test's clock) and IDs of its successful calls, and
# under "errors", per node name, the errors of the others.
sub draw_ids
{
	my ($seconds, @nodes) = @_;
	my %drawn;
	my $end = time() + $seconds;
	while (time() < $end)
	{
		foreach my $node (@nodes)
		{
			my $before = time();
			my ($pair, $id, $err) = next_id_of($node);
			if (defined $id)
			{
				push @{ $drawn{ $node->name } },
				  { start => $before, end => time(), pair => $pair, id => $id };
			}
			else
			{
				push @{ $drawn{errors}{ $node->name } }, $err // '';
			}
		}
		usleep(20_000);
	}
	return \%drawn;
}

# Did any call of one node overlap in time, or interleave in IDs, with a
# call of the other on the same pair?  Returns a description, or ''.
sub overlap
{
	my ($drawn, $x, $y) = @_;
	foreach my $a (@{ $drawn->{$x} // [] })
	{
		foreach my $b (@{ $drawn->{$y} // [] })
		{
			next unless $a->{pair} eq $b->{pair};
			my ($early, $late) = $a->{end} < $b->{start} ? ($a, $b) : ($b, $a);
			return "calls at $a->{start} and $b->{start} overlap in time"
			  if $early->{end} >= $late->{start};
			return "ID $late->{id} issued after $early->{id} is smaller"
			  if $late->{id} <= $early->{id};
		}
	}
	return '';
}

# Did the second node generate with the pair only after the first one's
# last call with it?  Returns a description of the first call that did not,
# or ''.  Calls made one after the other never overlap, so this, not
# overlap(), is what shows that a claim passed only once its holder stopped.
sub handed_over
{
	my ($drawn, $old, $new, $pair) = @_;
	my @old_ends = map { $_->{end} }
	  grep { $_->{pair} eq $pair } @{ $drawn->{$old} // [] };
	my @new_starts = map { $_->{start} }
	  grep { $_->{pair} eq $pair } @{ $drawn->{$new} // [] };
	return '' unless @old_ends && @new_starts;
	my ($last_old) = sort { $b <=> $a } @old_ends;
	my ($first_new) = sort { $a <=> $b } @new_starts;
	my $late = grep { $_ > $first_new } @old_ends;
	return $late
	  ? "$old made $late calls with $pair after ${new}'s first, the last "
	  . sprintf('%.3f', $last_old - $first_new)
	  . ' s after it'
	  : '';
}

# the worker id a node holds, from its snowflake_status
sub worker_of
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'CREATE EXTENSION IF NOT EXISTS snowflake; '
		  . 'SELECT worker_id FROM snowflake_status');
}

#
# 1. A claim the layout cannot hold is not handed back.
#
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_claims (datacenter_id, worker_id, system_identifier,
	token, claimed_at, checked_in_at, takeover_delay)
SELECT 8, w, 3000 + w, gen_random_uuid(), clock_timestamp(),
	clock_timestamp() + interval '1 hour', '10 s'
FROM generate_series(0, 39) w});
my $wide = snowflake_node('wide', registry => $registry,
	extra_conf => "snowflake.datacenter_id = 8\nsnowflake.sequence_bits = 11\n"
	  . "snowflake.worker_bits = 6\n");
start_node($wide);
my ($pair) = wait_for_pair($wide);
is($pair, '8|40', 'with 6 worker bits, the server claims worker id 40');
$wide->stop;
$wide->append_conf('postgresql.conf',
	"snowflake.worker_bits = 5\nsnowflake.sequence_bits = 12\n"
	  . "snowflake.accept_layout_change = on\n");
start_node($wide);
my ($narrow_pair, $err) = next_pair($wide);
ok(!defined $narrow_pair,
	"back to Twitter's layout, it does not get worker id 40 back");
like($err, qr/all 32 worker ids of datacenter 8 are claimed/,
	'and, with 0-31 held, finds the datacenter full');
isnt(worker_of($wide), '40', 'snowflake_status does not show worker id 40');
$wide->stop;

#
# 2. A takeover delay raised by reload: the lease is what the registry has.
#
my $holder = snowflake_node(
	'holder',
	registry         => $registry,
	allows_streaming => 1,
	extra_conf       => "snowflake.registry_require_check_in = on\n");
start_node($holder);
($pair) = wait_for_pair($holder);
$holder->backup('holder_base');
my $copy = snowflake_standby($holder, 'holder_base', 'copy', clone => 1);
start_node($copy);
ok(!defined next_pair($copy), 'a copy of a running server is refused');
alter_system($holder, 'snowflake.registry_takeover_delay' => '8s');
ok( $registry->poll_query_until(
		'postgres',
		"SELECT takeover_delay = interval '8 s' FROM snowflake_claims "
		  . "WHERE port = " . $holder->port),
	'a check-in carries the raised takeover delay to the registry');
my $worker = registry_worker_pid($holder);
kill 'STOP', $worker;
my $cut_at = time();

my $drawn = draw_ids(12, $holder, $copy);
kill 'CONT', $worker;
ok(@{ $drawn->{copy} // [] }, 'the copy takes the claim over in the end');
# 1.1 passed the claim on after the old 2 s; the raised 8 s count from the
# holder's last check-in, which a loaded machine may have sent a little
# before the cut.
cmp_ok($drawn->{copy}[0]{start} - $cut_at,
	'>=', 8 - 3, 'but only after the raised delay');
is(overlap($drawn, 'holder', 'copy'),
	'', 'the holder and the copy never generate with the pair at once');
is(handed_over($drawn, 'holder', 'copy', $pair),
	'', 'the copy generates only after the holder\'s last ID');
# Until its registry worker, just continued, has checked in, the holder
# refuses for want of a check-in.
like(
	wait_for_refusal($holder, undef, qr/has moved to another server/),
	qr/has moved to another server/,
	'the holder, back in touch, learns that its claim moved');
$_->stop foreach ($holder, $copy);

#
# 4. A release of a live claim frees it only once its holder stopped.
#
my $two_ids = "snowflake.datacenter_id = 6\nsnowflake.worker_bits = 1\n";
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_claims (datacenter_id, worker_id, system_identifier,
	token, claimed_at, checked_in_at, takeover_delay)
VALUES (6, 1, 4001, gen_random_uuid(), clock_timestamp(),
	clock_timestamp() + interval '1 hour', '10 s')});
my $old = snowflake_node('old', registry => $registry,
	extra_conf => $two_ids . "snowflake.registry_check_in_interval = '5s'\n");
start_node($old);
($pair) = wait_for_pair($old);
is($pair, '6|0', 'a server holds the one free worker id of datacenter 6');
my $newcomer = snowflake_node('newcomer', registry => $registry,
	extra_conf => $two_ids);
start_node($newcomer);
like((next_pair($newcomer))[1], qr/all 2 worker ids of datacenter 6 are claimed/,
	'another server finds datacenter 6 full');
# Release right after a check-in of the holder, which then keeps generating
# until its next one, 5 s on, tells it of the release.  (Released at a
# random moment, the release could come just before that check-in.)
my $checked_in = $registry->safe_psql('postgres',
	'SELECT checked_in_at FROM snowflake_claims WHERE (datacenter_id, worker_id) = (6, 0)'
);
$registry->poll_query_until('postgres',
	"SELECT checked_in_at > '$checked_in' FROM snowflake_claims WHERE (datacenter_id, worker_id) = (6, 0)"
) or die 'the holder of 6|0 did not check in';
$registry->safe_psql('postgres', 'SELECT snowflake_registry_release(6, 0)');
my $released_at = time();
$drawn = draw_ids(8, $old, $newcomer);
ok(@{ $drawn->{newcomer} // [] },
	'the other server gets the released worker id');
ok( (grep { /worker id 0 of datacenter 6 is being freed for this server/ }
		  @{ $drawn->{errors}{newcomer} // [] }),
	'until then it is told that the worker id is being freed for it');
ok(@{ $drawn->{old} // [] }, 'its holder generated after the release');
is(overlap($drawn, 'old', 'newcomer'),
	'', 'but never at the same time as the new holder, and below its IDs');
is(handed_over($drawn, 'old', 'newcomer', '6|0'),
	'', 'the new holder generates only after the old holder\'s last ID');
$_->stop foreach ($old, $newcomer);

#
# 5. A call that waits for the clock fails if the claim is lost meanwhile.
#
my $waiting = snowflake_node('waiting', registry => $registry);
start_node($waiting);
($pair) = wait_for_pair($waiting);
my $waiting_worker = (split /\|/, $pair)[1];
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
	"SELECT snowflake_registry_release(5, $waiting_worker)");
$bg->finish;
unlike($bg_out, qr/\d/,
	'the waiting call returns no ID once the claim was released');
like($bg_err, qr/was released on the registry/, 'it fails and says why');
set_clock($waiting, 0);
$waiting->stop;

#
# 6. A clone started during a registry outage longer than the takeover
#    delay does not take the claim from its running original.
#
my $original = snowflake_node('original', registry => $registry,
	allows_streaming => 1);
start_node($original);
($pair) = wait_for_pair($original);
$original->backup('original_base');
my $twin = snowflake_standby($original, 'original_base', 'twin', clone => 1);
$registry->stop;
start_node($twin);
sleep(4);
$registry->start;
$drawn = draw_ids(6, $original, $twin);
my @late_twin = grep { $_->{start} > time() - 3 } @{ $drawn->{twin} // [] };
is(scalar @late_twin, 0,
	'once the registry is back, the clone learns that the claim is held and stops');
my @late_original =
  grep { $_->{start} > time() - 3 } @{ $drawn->{original} // [] };
ok(@late_original, 'the original goes on generating');
is($registry->safe_psql('postgres',
		"SELECT port FROM snowflake_claims WHERE token IS NOT NULL AND port IN ("
		  . $original->port . ', ' . $twin->port . ')'),
	$original->port, 'the registry still names the original');
$twin->stop;
$original->stop;

#
# 7. A restart during a short outage: the server takes its own claim back.
#
my $restarted = snowflake_node('restarted', registry => $registry);
start_node($restarted);
($pair) = wait_for_pair($restarted);
my $before_outage =
  $registry->safe_psql('postgres', 'SELECT clock_timestamp()');
$registry->stop;
restart_node($restarted);
$registry->start;
ok( $registry->poll_query_until(
		'postgres',
		"SELECT claimed_at > '$before_outage' AND NOT idle "
		  . "FROM snowflake_claims WHERE port = " . $restarted->port),
	'a server restarted while the registry was down gets its own claim back');
is(next_pair($restarted), $pair, 'and generates with its pair again');
$restarted->stop;

#
# A clean restart generates at once, even with a long takeover delay: its
# idle claim reports its newest ID, not the promise of its last check-in,
# which lies up to the takeover delay ahead.
#
my $quick = snowflake_node('quick', registry => $registry,
	extra_conf => "snowflake.registry_takeover_delay = '20s'\n");
start_node($quick);
($pair) = wait_for_pair($quick);
my $before_restart = $quick->safe_psql('postgres', 'SELECT snowflake_next_id()');
restart_node($quick);
my $restarted_at = time();
my ($quick_pair, $quick_id) = next_id_of($quick);
my $quick_took = time() - $restarted_at;
is($quick_pair, $pair, 'a cleanly restarted server generates with its pair');
cmp_ok($quick_took, '<', 5,
	"at once, not a takeover delay later ($quick_took s)");
cmp_ok($quick_id, '>', $before_restart, 'above its IDs before the restart');
$quick->stop;

#
# With require_check_in on, no ID passes the time this server promised the
# registry at its last check-in: the clock plus the takeover delay plus the
# server's max_lead.  A session that may run further ahead is refused past
# it.  (Four bits of sequence: 16 IDs a millisecond.)
#
my $promise = snowflake_node('promise', registry => $registry,
	extra_conf => "snowflake.registry_require_check_in = on\n"
	  . "snowflake.registry_takeover_delay = '1s'\n"
	  . "snowflake.registry_check_in_interval = '200ms'\n"
	  . "snowflake.sequence_bits = 4\n");
start_node($promise);
wait_for_pair($promise);
is( $promise->safe_psql(
		'postgres', q{SET snowflake.max_lead = '1h';
SELECT count(*) FROM snowflake_next_ids(1600)}),
	'1600',
	'a block within the promise is issued ahead of the clock');
my ($promise_out, $promise_err);
$promise->psql(
	'postgres', '\set VERBOSITY verbose' . "\n" . q{SET snowflake.max_lead = '1h';
SELECT count(*) FROM snowflake_next_ids(160000)},
	stdout => \$promise_out,
	stderr => \$promise_err);
like(
	$promise_err,
	qr/ERROR:  55000: could not generate a snowflake ID: the ID would pass the time this server promised the registry\n.*DETAIL:  "snowflake.registry_require_check_in" is on, and at its last check-in this server promised to issue no ID later than \d+ ms after snowflake.epoch before its next check-in; the next ID is \d+ ms later\./,
	'a block that would run 10 s ahead is refused: past the promise of 1 s');
unlike($promise_out, qr/\d/, 'and issues no ID');
$promise->stop;

#
# The floor of a claim taken over is cached with it: a new holder that
# crashed before it generated, and restarts while the registry is down,
# stays above its predecessor's IDs on the cached claim, even with its clock
# 30 s behind.
#
my $first = snowflake_node('first', registry => $registry,
	allows_streaming => 1);
start_node($first);
($pair) = wait_for_pair($first);
$first->backup('first_base');
my $second = snowflake_standby($first, 'first_base', 'second', clone => 1);
my $first_last = $first->safe_psql('postgres', 'SELECT snowflake_next_id()');
crash_node($first);
start_node($second);
ok( $registry->poll_query_until(
		'postgres',
		"SELECT taken_above IS NOT NULL FROM snowflake_claims WHERE port = "
		  . $second->port),
	'a copy takes over the claim of its crashed original, above a floor');
$second->stop('immediate');
$registry->stop;
set_clock($second, -30);
start_node($second);
check_clock_offset($second, -30, "the copy's clock is 30 s behind");
my ($cached_pair, $cached_id) = next_id_of($second);
ok(!defined $cached_id || $cached_id > $first_last,
	'on its cached claim it issues no ID below its predecessor\'s');
$second->stop;
$registry->start;

#
# A claim file of 1.1 (version 1, without a floor) is still read: with the
# registry down, the server generates with the claim in it.
#
my $old_file = snowflake_node('old_file', registry => $registry);
start_node($old_file);
($pair) = wait_for_pair($old_file);
my ($dc, $old_worker) = split /\|/, $pair;
my $sysid = $old_file->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
$old_file->stop;
my $v1 = pack('L L q l l', 0x534E434C, 1, $sysid, $dc, $old_worker);
open my $fh, '>', $old_file->data_dir . '/snowflake.claim' or die $!;
binmode $fh;
# the C struct's size: four bytes of padding after the CRC
print $fh $v1 . pack('L', crc32c($v1)) . ("\0" x 4);
close $fh;
$registry->stop;
start_node($old_file);
is(next_pair($old_file), $pair,
	'a 1.1 claim file stands in while the registry is down');
ok($old_file->log_contains('generating with the cached claim'),
	'and the log says that the cached claim is used');
$old_file->stop;
$registry->start;

done_testing();
