
# Copyright (c) 2026, the snowflake authors

# Copies, split brain and failover, fenced by the promise the registry
# recorded (issue 23, finding 2).  Every server here connects as the login
# of the first primary, as a copy of it does:
#   - a pg_basebackup copy started as a primary beside its original never
#     generates while the original extends its promise; with the original's
#     check-in interval raised above the registry's lease (1.3's takeover
#     delay below the interval, which gave 45,675 identical IDs), the copy
#     takes the claim in a gap, but only once the original's promise has
#     passed, and the original's IDs stop at that promise;
#   - a standby promoted while its primary runs is refused, and told who
#     holds the claim;
#   - that primary cut off from the registry generates up to its promise,
#     then refuses; the promoted standby takes the claim once the promise
#     has passed, above it, and the primary, back in touch, learns that its
#     claim moved;
#   - after a crash of the holder, its promoted standby, and a crash restart,
#     take the claim only once the old start's promise has passed, above it.
# Each server draws IDs in a stream of its own (start_id_stream) throughout,
# and the IDs of every holder of the pair are compared: no ID twice, and the
# holders' ranges of ID time disjoint, in the order they held the pair.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# how far ahead of the registry's clock a promise reaches, in seconds; the
# servers extend every 200 ms
my $lease    = 3;
my $registry = snowflake_registry('registry', lease => "$lease s");

# Check the registry's row of the pair after a change of holder (see
# check_takeover), and that it names the new holder's port.
sub check_new_holder
{
	my ($pair, $what, $new, $old_ids, $new_ids) = @_;
	is(registry_claim($registry, $pair, 'port'),
		$new->port, "$what: the registry names the new holder");
	check_takeover($registry, $pair, $what, $old_ids, $new_ids);
	return;
}

# Wait until a promise in force at a moment has been behind the registry's
# clock for a lease: had its holder stopped extending it, the claim would
# have passed by then.
sub wait_past_promise
{
	my ($promise) = @_;
	return $registry->poll_query_until('postgres',
		"SELECT clock_timestamp() > '$promise'::timestamptz + interval '$lease s'"
	);
}

my $primary =
  snowflake_node('primary', registry => $registry, allows_streaming => 1);
start_node($primary);
my $pair = registry_pair($registry, 'primary');
my $worker_id = (split /\|/, $pair)[1];

# Back up the primary before it issues any ID: a backup taken while marks
# are being written holds a mark file older than the marks in its WAL, which
# a server started from it as a primary refuses for that reason first.
$primary->backup('base');

#
# A copy started as a primary beside its original, both of one login.
#
my $clone = snowflake_standby($primary, 'base', 'clone', clone => 1);
start_node($clone);
my $primary_1 = start_id_stream($primary, 'primary_1');
my $clone_1   = start_id_stream($clone,   'clone_1');
ok(wait_for_stream($clone_1, '(SELECT count(*) FROM errors) > 0'),
	'the copy is refused');
my $promise = registry_claim($registry, $pair, 'promise');
ok(wait_past_promise($promise),
	'a lease passes after the promise in force when the copy was refused');
ok( wait_for_stream(
		$primary_1,
		"(SELECT count(*) FROM ids WHERE snowflake_timestamp(id) > '$promise') > 0"
	),
	'the original generates past that promise, extending it');
is(scalar(stream_ids($clone_1)), 0,
	'the copy never generates while its original extends its promise');
my ($clone_pair, $clone_err) = next_pair($clone);
ok(!defined $clone_pair, 'a call of its own on the copy is refused too');
like(
	$clone_err,
	qr/55000: could not generate a snowflake ID: the registry refused this server's claim\n.*DETAIL:  Worker id $worker_id of datacenter 5 is held by another start of this server's login: system -?\d+ \([^:]*:${\ $primary->port }, ${\ $primary->data_dir }\), holding it since .* with IDs up to .*\. Unless it extends its claim again, the claim passes to this server in about \d+ ms\.\n.*HINT:  .*A holder that keeps extending its claim is a running server, of which this server is a copy; give each server a login of its own\./s,
	'and says who holds the claim, and that a holder that keeps extending is a running server'
);
is(registry_claim($registry, $pair, 'port'),
	$primary->port, 'the registry still names the original');

# The original's check-in interval raised above the lease: its promise
# lapses between two extensions, and the copy takes the claim in a gap.
my $log_offset = -s $primary->logfile;
alter_system($primary, 'snowflake.registry_check_in_interval' => '10s');
ok(wait_for_stream($clone_1, '(SELECT count(*) FROM ids) > 0'),
	'with the original extending every 10 s, beyond the lease of 3 s, the copy takes the claim'
);
ok( $primary->wait_for_log(
		qr/claim on snowflake worker id $worker_id of datacenter 5 has moved to another start or login/,
		$log_offset),
	'the original learns at its next extension that its claim moved');
stop_id_stream($_) foreach ($primary_1, $clone_1);
my @primary_ids = stream_ids($primary_1);
my @clone_ids   = stream_ids($clone_1);
check_pair_holders(
	'the original and its copy: no ID twice, their ranges of ID time disjoint',
	{ original => \@primary_ids, copy => \@clone_ids });
check_new_holder($pair, 'the copy', $clone, \@primary_ids, \@clone_ids);

# The copy shut down cleanly marks the claim idle: the original takes it
# back at once.
alter_system($primary, 'snowflake.registry_check_in_interval' => undef);
$clone->stop;
is((wait_for_pair($primary))[0], $pair,
	'once the copy stops, the original takes its claim back');

#
# A standby promoted while its primary runs.
#
$primary->backup('base_standby');
my $standby = snowflake_standby($primary, 'base_standby', 'standby');
start_node($standby);
$primary->wait_for_catchup($standby);
my $primary_2 = start_id_stream($primary, 'primary_2');
$standby->promote;
my $standby_2 = start_id_stream($standby, 'standby_2');
ok(wait_for_stream($standby_2, '(SELECT count(*) FROM errors) > 0'),
	'a standby promoted while its primary runs is refused');
$promise = registry_claim($registry, $pair, 'promise');
ok(wait_past_promise($promise),
	'a lease passes after the promise in force when it was refused');
ok( wait_for_stream(
		$primary_2,
		"(SELECT count(*) FROM ids WHERE snowflake_timestamp(id) > '$promise') > 0"
	),
	'the primary generates past that promise');
is(scalar(stream_ids($standby_2)), 0,
	'the promoted standby never generates while its primary extends its promise');
like(
	(next_pair($standby))[1],
	qr/the registry refused this server's claim\n.*DETAIL:  Worker id $worker_id of datacenter 5 is held by another start of this server's login: system -?\d+ \([^:]*:${\ $primary->port }, /s,
	'and says which server holds the claim');

#
# The primary cut off from the registry (its registry worker stopped):
# it generates up to its promise, then refuses; the promoted standby takes
# the claim once the promise has passed.
#
my $cut = cut_off($registry, $primary);
check_cut_off_handover($registry, $cut, $primary_2, $standby_2, $pair,
	'the primary cut off');
is(registry_claim($registry, $pair, 'port'),
	$standby->port, 'the registry names the promoted standby');
$primary->stop;

#
# Failover: the holder crashes, and its standby is promoted.
#
$standby->backup('base2');
my $standby2 = snowflake_standby($standby, 'base2', 'standby2');
start_node($standby2);
my $standby_4 = start_id_stream($standby, 'standby_4');
ok(wait_for_stream($standby_4, '(SELECT count(*) FROM ids) > 0'),
	'the holder generates');
$standby->wait_for_catchup($standby2);
crash_node($standby);
stop_id_stream($standby_4);
$standby2->promote;
my $standby2_4 = start_id_stream($standby2, 'standby2_4');
ok(wait_for_stream($standby2_4, '(SELECT count(*) FROM ids) > 0'),
	'after the holder crashed, its promoted standby takes the claim');
stop_id_stream($standby2_4);

# The crashed holder, started again beside its successor, is refused; its
# IDs, committed one batch at a time, are all there.
start_node($standby);
like(
	(next_pair($standby))[1],
	qr/the registry refused this server's claim/,
	'the crashed holder, started again beside its successor, is refused');
my @standby_ids = stream_ids($standby_4);
my @standby2_ids = stream_ids($standby2_4);
check_pair_holders(
	'the crashed holder and its promoted standby: no ID twice, their ranges of ID time disjoint',
	{ crashed => \@standby_ids, promoted => \@standby2_ids });
check_new_holder($pair, 'after a failover', $standby2, \@standby_ids,
	\@standby2_ids);
$standby->stop;

#
# A crash restart of the holder.
#
my $before_crash = start_id_stream($standby2, 'before_crash');
ok(wait_for_stream($before_crash, '(SELECT count(*) FROM ids) > 0'),
	'the holder generates');
crash_node($standby2);
stop_id_stream($before_crash);
start_node($standby2);
my $after_crash = start_id_stream($standby2, 'after_crash');
ok(wait_for_stream($after_crash, '(SELECT count(*) FROM ids) > 0'),
	'after a crash restart, the server takes its claim back');
stop_id_stream($after_crash);
my @before_ids = stream_ids($before_crash);
my @after_ids  = stream_ids($after_crash);
check_pair_holders(
	'before and after the crash: no ID twice, their ranges of ID time disjoint',
	{ before_crash => \@before_ids, after_crash => \@after_ids });
check_new_holder($pair, 'after a crash restart', $standby2, \@before_ids,
	\@after_ids);
is( $standby2->safe_psql('postgres',
		"SELECT count(*) FROM snowflake_stream_ids WHERE label = 'after_crash' "
		  . "AND id <= (SELECT max(id) FROM snowflake_stream_ids WHERE label = 'before_crash')"
	),
	'0',
	'every ID after the crash restart lies above every ID before it');

$standby2->stop;
done_testing();
