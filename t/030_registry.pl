
# Copyright (c) 2026, the snowflake authors

# Worker ids claimed from a registry: distinct ids for three primaries, a
# restart keeps its id, two servers started at the same moment differ, the
# registry stopped (a cached claim generates, a new server gets a clear
# error), a full datacenter, and worker_id set beside a registry.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IO::Socket::INET;
use Time::HiRes qw(time);

my $registry = snowflake_registry('registry');

# the registry's row for a pair "dc|worker", as "column=value" text
sub claim_row
{
	my ($pair, $columns) = @_;
	my ($dc, $worker) = split /\|/, $pair;
	return $registry->safe_psql('postgres',
		"SELECT $columns FROM snowflake_claims "
		  . "WHERE datacenter_id = $dc AND worker_id = $worker");
}

sub system_identifier
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()');
}

# Three primaries
my @primaries = map { snowflake_node($_, registry => $registry) } qw(a b c);
start_node($_) foreach @primaries;
my @pairs = map { (wait_for_pair($_))[0] } @primaries;
note "claimed pairs: @pairs";
ok((!grep { !defined } @pairs), 'three primaries claim a worker id each');
is(scalar(keys %{ { map { $_ => 1 } grep { defined } @pairs } }),
	3, 'the three primaries claim distinct worker ids');
is((grep { /^5\|/ } @pairs), 3, 'every claim is in the configured datacenter');
my ($a, $b, $c) = @primaries;
is( claim_row($pairs[0], 'system_identifier, port, data_directory, idle'),
	system_identifier($a) . '|' . $a->port . '|' . $a->data_dir . '|f',
	'the registry records the holder: system identifier, port, data directory'
);
ok(-f $a->data_dir . '/snowflake.claim', 'the claim is cached next to the mark');
is( $a->safe_psql(
		'postgres', q{
SELECT string_agg(DISTINCT p.datacenter_id || '|' || p.worker_id, ' ')
FROM snowflake_next_ids(1000) i, snowflake_parse(i) p}),
	$pairs[0],
	'a block of IDs carries the claimed pair');
is( $a->safe_psql(
		'postgres',
		"SELECT datacenter_id || '|' || worker_id FROM snowflake_status"),
	$pairs[0],
	'snowflake_status shows the claimed worker id');

# A clean restart marks the claim idle and takes it back at once, even with
# a takeover delay far longer than the test waits.
$a->append_conf('postgresql.conf', 'snowflake.registry_takeover_delay = 600s');
$a->stop;
is(claim_row($pairs[0], 'idle'), 't', 'a clean shutdown marks the claim idle');
start_node($a);
my ($pair, $took) = wait_for_pair($a, 60);
is($pair, $pairs[0], 'a restart gets its worker id back');
cmp_ok($took, '<', 60, 'an idle claim is taken back without a takeover delay');
is(claim_row($pairs[0], 'idle'), 'f', 'the claim is active again');

# A crash restart gets its id back once the dead incarnation's claim has gone
# without check-in for the takeover delay (2 s here).
crash_node($b);
start_node($b);
my ($refused_pair, $refused_err) = next_pair($b);
($pair, $took) = wait_for_pair($b);
is($pair, $pairs[1], 'a crash restart gets its worker id back');
note "after the crash restart: first call "
  . ($refused_pair // 'refused') . ", claimed after $took s";

# Two servers started at the same moment: hold the datacenter's claim lock
# on the registry, so that both claims queue behind it, then let them go.
my $holder = $registry->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(1397641047, 5)');
my @twins = map { snowflake_node($_, registry => $registry) } qw(d e);
start_node($_) foreach @twins;
ok( $registry->poll_query_until(
		'postgres',
		"SELECT count(*) = 2 FROM pg_locks WHERE locktype = 'advisory' "
		  . "AND objid = 5 AND NOT granted"),
	'both new servers wait on the claim lock at the same moment');
# Their claims time out and are retried meanwhile; the registry ends the
# statements they gave up on, so their connections do not pile up there.
sleep(5);
cmp_ok(
	$registry->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_stat_activity "
		  . "WHERE application_name = 'snowflake registry worker'"),
	'<=', 7,
	'retried claims leave no connections behind on the registry');
$holder->query_safe('SELECT pg_advisory_unlock(1397641047, 5)');
$holder->quit;
my @twin_pairs = map { (wait_for_pair($_))[0] } @twins;
ok( defined $twin_pairs[0]
	  && defined $twin_pairs[1]
	  && $twin_pairs[0] ne $twin_pairs[1]
	  && !grep({ $_ eq $twin_pairs[0] || $_ eq $twin_pairs[1] } @pairs),
	"two servers started at the same moment get different ids (@twin_pairs)");
$_->stop foreach @twins;

# The registry stopped: a server with a cached claim generates with it; a
# server that never claimed refuses with a clear error.
$c->stop;
$registry->stop;
start_node($c);
($pair, $took) = wait_for_pair($c, 60);
is($pair, $pairs[2], 'with the registry down, the cached claim generates');
ok( $c->log_contains(
		'generating with the cached claim on worker id \d+ of datacenter 5'),
	'the log says the cached claim is in use');

my $new = snowflake_node('f', registry => $registry);
start_node($new);
my ($new_pair, $err) = next_pair($new);
ok(!defined $new_pair, 'a server that never claimed does not generate');
like(
	$err,
	qr/55000: could not generate a snowflake ID: the registry cannot be used and this server has no cached claim/,
	'and says that the registry cannot be used and it has no cached claim');

# With the registry back, both get their claims from it.
$registry->start;
($pair) = wait_for_pair($new);
ok(defined $pair && !grep({ $_ eq $pair } @pairs, @twin_pairs),
	'once the registry is back, the new server claims a free id');
ok( $registry->poll_query_until(
		'postgres',
		'SELECT idle = false AND port = '
		  . $c->port
		  . ' FROM snowflake_claims WHERE worker_id = '
		  . (split /\|/, $pairs[2])[1]),
	'the server on its cached claim confirms it with the registry');
is(next_pair($c), $pairs[2], 'and goes on generating with it');
$new->stop;

# A full datacenter: every worker id of datacenter 7 held by other servers
# that check in.
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_claims
SELECT 7, w, 1000 + w, 1, gen_random_uuid(), 'elsewhere', 5432, '/data',
       clock_timestamp(), clock_timestamp(), false, '10 s'
FROM generate_series(0, 31) w});
my $full = snowflake_node('g', registry => $registry,
	extra_conf => "snowflake.datacenter_id = 7\n");
start_node($full);
($new_pair, $err) = next_pair($full);
ok(!defined $new_pair, 'a server in a full datacenter does not generate');
like(
	$err,
	qr/53400: could not generate a snowflake ID: all 32 worker ids of datacenter 7 are claimed.*HINT:  Release the claims of servers that are gone with snowflake_registry_release\(\)/s,
	'and says that the datacenter is full and how to free ids');
ok($full->log_contains('all 32 snowflake worker ids of datacenter 7 are claimed'),
	'the log says so too');

# A claim that has not checked in for longer than the reclaim lease (a day)
# passes to the new server.
$registry->safe_psql('postgres',
	"UPDATE snowflake_claims SET checked_in_at = now() - interval '2 days' "
	  . "WHERE datacenter_id = 7 AND worker_id = 13");
($pair) = wait_for_pair($full);
is($pair, '7|13', 'a claim silent for longer than the lease is reclaimed');
$full->stop;

# An operator releases a claim: the holder learns it at its next check-in.
my $released_worker = (split /\|/, $pairs[0])[1];
is( $registry->safe_psql('postgres',
		"SELECT snowflake_registry_release(5, $released_worker) IS NOT NULL"),
	't',
	'snowflake_registry_release releases a claim and says when it is free');
like(
	wait_for_refusal($a),
	qr/this server's claim on worker id $released_worker of datacenter 5 was released on the registry/,
	'the holder of a released claim stops generating and says why');
ok( $registry->poll_query_until(
		'postgres',
		"SELECT released_confirmed FROM snowflake_registry_status "
		  . "WHERE datacenter_id = 5 AND worker_id = $released_worker"),
	'and confirms to the registry that it stopped');

# An operator reassigns a claim to another system: the holder says to whom.
my $reassigned_worker = (split /\|/, $pairs[1])[1];
$registry->safe_psql('postgres',
	"SELECT snowflake_registry_reassign(5, $reassigned_worker, 4242)");
like(
	wait_for_refusal($b, undef, qr/has moved/),
	qr/this server's claim on worker id $reassigned_worker of datacenter 5 has moved to another server\n.*DETAIL:  It was reassigned on the registry to the server with system identifier 4242, which has not claimed it yet\.\n.*HINT:  Restart the server to claim a worker id again\./,
	'the holder of a reassigned claim stops generating and names the new holder');
ok( $b->log_contains(
		'DETAIL:  It was reassigned on the registry to the server with system identifier 4242, which has not claimed it yet\.'
	),
	'the log says so too, with no empty "since"');

# A registry database without the extension: the server says so.
$registry->safe_psql('postgres', 'CREATE DATABASE no_extension');
(my $no_extension_conninfo = registry_conninfo($registry)) =~
  s/dbname=postgres/dbname=no_extension/;
my $misdirected = snowflake_node('i', registry => $registry,
	extra_conf => "snowflake.registry = '$no_extension_conninfo'\n");
start_node($misdirected);
like(
	(next_pair($misdirected))[1],
	qr/the registry cannot be used and this server has no cached claim\n.*DETAIL:  The registry database has no snowflake extension: run CREATE EXTENSION snowflake there\./s,
	'a registry database without the extension is named as the reason');
$misdirected->stop;

# Claims follow the server's layout: with one worker bit, a datacenter has
# worker ids 0 and 1 only.
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_claims
SELECT 9, w, 2000 + w, 1, gen_random_uuid(), 'elsewhere', 5432, '/data',
       clock_timestamp(), clock_timestamp(), false, '10 s'
FROM unnest(ARRAY[0, 5]) w});
my $one_bit_conf = "snowflake.datacenter_id = 9\nsnowflake.worker_bits = 1\n";
my $small = snowflake_node('k', registry => $registry,
	extra_conf => $one_bit_conf);
start_node($small);
($pair) = wait_for_pair($small);
is($pair, '9|1', 'with one worker bit, the only free worker id is claimed');
my $too_many = snowflake_node('l', registry => $registry,
	extra_conf => $one_bit_conf);
start_node($too_many);
like((next_pair($too_many))[1],
	qr/all 2 worker ids of datacenter 9 are claimed/,
	'and the next server finds the datacenter full');
$_->stop foreach ($small, $too_many);

# A registry that accepts connections but never answers: the worker gives
# up after its timeout (a check-in interval, here a minute), and shutdown
# does not wait for it.
my $silent = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen    => 1,
	Proto     => 'tcp') or die "could not listen: $!";
my $hanging = snowflake_node(
	'j',
	registry   => $registry,
	extra_conf => "snowflake.registry = 'host=127.0.0.1 port="
	  . $silent->sockport
	  . " dbname=postgres connect_timeout=600'\n"
	  . "snowflake.registry_check_in_interval = '60s'\n");
start_node($hanging);
like((next_pair($hanging))[1],
	qr/no worker id has been claimed yet/,
	'while the registry does not answer, the first claim is outstanding');
my $stop_started = time();
$hanging->stop('fast');
cmp_ok(time() - $stop_started,
	'<', 30, 'a fast shutdown does not wait for the silent registry');
close $silent;

# worker_id beside a registry is refused at start.
my $both = snowflake_node('h', registry => $registry,
	extra_conf => "snowflake.worker_id = 3\n");
ok(!start_node($both, fail_ok => 1),
	'a server with both snowflake.worker_id and snowflake.registry does not start');
ok( $both->log_contains(
		'"snowflake.worker_id" cannot be set when "snowflake.registry" is set'),
	'and says why');

# A connection string libpq cannot parse is refused at start.
my $garbled = snowflake_node('m', registry => $registry,
	extra_conf => "snowflake.registry = 'host=localhost no_such_option=1'\n");
ok(!start_node($garbled, fail_ok => 1),
	'a server whose snowflake.registry does not parse does not start');
ok($garbled->log_contains('invalid value for parameter "snowflake.registry"'),
	'and names the setting');
ok(!$garbled->log_contains('no_such_option=1'),
	'but does not log the connection string, which may hold a password');
ok($garbled->log_contains('invalid connection option "no_such_option"'),
	'and says what libpq found wrong');

done_testing();
