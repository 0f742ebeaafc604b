
# Copyright (c) 2026, the snowflake authors

# Worker ids claimed from a registry: distinct ids for three primaries, each
# with its own login (two of them defaulting to isolation levels the
# registry refuses for claims), a restart keeps its id, a crash restart
# takes it back above the old start's promise, two servers started at the
# same moment differ, the registry stopped (holders generate up to their
# promise, a server that starts meanwhile waits; the holder's log says so
# once for each reason, and again when the registry answers; its refused
# calls name the reason too, a registry turned read-only's as well), a full
# datacenter, a login at its limit, a release and a reassignment, and
# worker_id set beside a registry.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IO::Socket::INET;
use Time::HiRes qw(time usleep);

my $registry = snowflake_registry('registry');

# the registry's row for a pair "dc|worker", as "column=value" text
sub claim_row
{
	my ($pair, $columns) = @_;
	my ($dc, $worker) = split /\|/, $pair;
	return $registry->safe_psql('postgres',
		"SELECT $columns FROM snowflake_registry.claims "
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
# The registry refuses a claim in a snapshot older than the call; a login's
# own default isolation level does not stop its server from claiming.
$registry->safe_psql('postgres', q{
ALTER ROLE a SET default_transaction_isolation = 'serializable';
ALTER ROLE b SET default_transaction_isolation = 'repeatable read';});
start_node($_) foreach @primaries;
my @pairs = map { (wait_for_pair($_))[0] } @primaries;
note "claimed pairs: @pairs";
ok((!grep { !defined } @pairs),
	'three primaries claim a worker id each, two with logins that default to SERIALIZABLE and REPEATABLE READ');
is(scalar(keys %{ { map { $_ => 1 } grep { defined } @pairs } }),
	3, 'the three primaries claim distinct worker ids');
is((grep { /^5\|/ } @pairs), 3, 'every claim is in the configured datacenter');
my ($a, $b, $c) = @primaries;
is( claim_row($pairs[0], 'owner, system_identifier, port, data_directory, state'),
	'a|' . system_identifier($a) . '|' . $a->port . '|' . $a->data_dir . '|held',
	'the registry records the holder: its login, system identifier, port, data directory'
);
ok(-f $a->data_dir . '/snowflake.claim', 'the worker id is kept next to the mark');
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

# A clean restart marks the claim idle, lowering its promise to the newest
# ID, and takes it back at once, above that ID.
my ($newest_a, $newest_a_ts) = split /\|/,
  $a->safe_psql('postgres',
	'SELECT i, snowflake_timestamp(i) FROM snowflake_next_id() i');
$a->stop;
is(claim_row($pairs[0], 'state'), 'idle', 'a clean shutdown marks the claim idle');
is( claim_row($pairs[0],
		"promise <= '$newest_a_ts'::timestamptz + interval '1 ms'"),
	't',
	'and lowers its promise to the newest ID');
start_node($a);
my ($pair, $took) = wait_for_pair($a, 60);
is($pair, $pairs[0], 'a restart gets its worker id back');
cmp_ok($took, '<', 2, 'an idle claim is taken back at once');
is(claim_row($pairs[0], 'state'), 'held', 'the claim is held again');
cmp_ok($a->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $newest_a, 'above the last ID of the start before');

# A crash of the whole server: the new start gets its id back once the dead
# start's promise (the lease, 2 s here) is behind the registry's clock, and
# issues above that promise.
my $promise_b = claim_row($pairs[1], 'promise');
crash_node($b);
start_node($b);
my ($refused_pair, $refused_err) = next_pair($b);
($pair, $took) = wait_for_pair($b);
is($pair, $pairs[1], 'a crash restart gets its worker id back');
note "after the crash restart: first call "
  . ($refused_pair // "refused: $refused_err") . ", claimed after $took s";
cmp_ok(
	$b->safe_psql('postgres', 'SELECT snowflake_timestamp(snowflake_next_id())'),
	'gt', $promise_b,
	'above the promise of the start that crashed');

# A backend killed: the postmaster lives on, reinitialises shared memory and
# keeps its token.  The new incarnation takes its id back at once, and
# resumes above its durable mark, so above every ID of the one before (whose
# promise may lie further ahead).
$b->append_conf('postgresql.conf', 'restart_after_crash = on');
$b->reload;
my $newest_before_kill = $b->safe_psql('postgres', 'SELECT snowflake_next_id()');
my $victim = $b->background_psql('postgres');
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
signal_process('KILL', $victim_pid, 'the backend to crash');
eval { $victim->quit };
ok($b->wait_for_log('all server processes terminated; reinitializing'),
	'a backend killed makes the postmaster reinitialise');
wait_for_connections($b);
($pair, $took) = wait_for_pair($b);
is($pair, $pairs[1], 'the same postmaster gets its worker id back');
cmp_ok($took, '<', 2, 'at once, without waiting for the promise to pass');
cmp_ok($b->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $newest_before_kill, 'above every ID of the incarnation before');

# Two servers started at the same moment: hold the datacenter's row on the
# registry, so that both claims queue behind it, then let them go.
my $holder = $registry->background_psql('postgres');
$holder->query_safe('BEGIN');
$holder->query_safe(
	'SELECT * FROM snowflake_registry.datacenters WHERE datacenter_id = 5 FOR UPDATE');
my @twins = map { snowflake_node($_, registry => $registry) } qw(d e);
start_node($_) foreach @twins;
ok( $registry->poll_query_until(
		'postgres',
		"SELECT count(*) = 2 FROM pg_stat_activity "
		  . "WHERE application_name = 'snowflake registry worker' "
		  . "AND wait_event_type = 'Lock'"),
	'both new servers wait on the datacenter at the same moment');
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
$holder->query_safe('COMMIT');
$holder->quit;
my @twin_pairs = map { (wait_for_pair($_))[0] } @twins;
ok( defined $twin_pairs[0]
	  && defined $twin_pairs[1]
	  && $twin_pairs[0] ne $twin_pairs[1]
	  && !grep({ $_ eq $twin_pairs[0] || $_ eq $twin_pairs[1] } @pairs),
	"two servers started at the same moment get different ids (@twin_pairs)");
$_->stop foreach @twins;

# The registry stopped: a holder generates up to its promise, then refuses;
# a server that starts meanwhile waits, even with a claim of its own.
my $new = snowflake_node('f', registry => $registry);
$c->stop;
$registry->stop;
start_node($c);
my ($down_pair, $down_err) = next_pair($c);
ok(!defined $down_pair, 'with the registry down, a restarted server does not generate');
like(
	$down_err,
	qr/55000: could not generate a snowflake ID: the registry cannot be used/,
	'and says that the registry cannot be used');
ok(!$c->log_contains('generating with the cached claim'),
	'no cached claim is ever used');
my $cut_off = wait_for_refusal($a, 30);
like(
	$cut_off,
	qr/55000: could not generate a snowflake ID: the ID would pass the time the registry recorded for this server's claim/,
	'a holder cut off from the registry stops at its promise, and says so');
like(
	$cut_off,
	qr/DETAIL: .*the next ID is \d+ ms later\. The last check-in failed: Could not connect to the registry: /s,
	'and why its last check-in failed');
ok( $a->log_contains(
		"the snowflake registry did not extend this server's claim; IDs are generated up to its promise while this server retries"
	),
	"and its log says that the registry did not extend its claim");

$registry->start;
$new->start;
# With the registry back, all of them get their claims from it.
($pair) = wait_for_pair($new);
ok(defined $pair && !grep({ $_ eq $pair } @pairs, @twin_pairs),
	'once the registry is back, a new server claims a free id');
is((wait_for_pair($c))[0], $pairs[2], 'the restarted server claims its own id again');
ok(defined((wait_for_pair($a))[0]), 'and the holder generates again');
ok($a->wait_for_log(qr/the snowflake registry answers this server again/),
	"and its log says that the registry answers again");

# A registry that answers but cannot write: a holder stops at its promise
# and names the registry's error, though the registry is reachable.
my $worker_sessions =
  "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
  . "WHERE application_name = 'snowflake registry worker'";
$registry->safe_psql('postgres',
	'ALTER DATABASE postgres SET default_transaction_read_only = on');
$registry->safe_psql('postgres', $worker_sessions);
like(
	wait_for_refusal($a, 30, qr/would pass the time the registry recorded/),
	qr/DETAIL: .*The last check-in failed: .*read-only transaction/s,
	'a holder whose registry turned read-only says why it stops at its promise');
ok( $a->log_contains(
		qr/did not extend this server's claim.*\n.*DETAIL: .*read-only transaction/
	),
	'and its log says so too, a reason besides the one it gave first');
my @read_only_lines =
  slurp_file($a->logfile) =~ /DETAIL: .*read-only transaction/g;
is(scalar(@read_only_lines),
	1, 'once, though check-ins failed so until the promise ran out');
{
	local $ENV{PGOPTIONS} = '-c default_transaction_read_only=off';
	$registry->safe_psql('postgres',
		'ALTER DATABASE postgres RESET default_transaction_read_only');
	$registry->safe_psql('postgres', $worker_sessions);
}
ok(defined((wait_for_pair($a))[0]), 'and generates again once it may write');
$new->stop;

# A full datacenter: every worker id of datacenter 7 held by other logins
# that extend their promises.
$registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, version, epoch, layout, floor,
	 promise, claimed_at, extended_at)
SELECT 7, w, 'elsewhere_' || w, 'held', 1, 1, '1288834974657/41/5/5/12',
	   clock_timestamp(), clock_timestamp() + s.lease,
	   clock_timestamp(), clock_timestamp()
FROM generate_series(0, 31) w, snowflake_registry.settings s});
my $full = snowflake_node('g', registry => $registry,
	extra_conf => "snowflake.datacenter_id = 7\n");
start_node($full);
my ($new_pair, $err) = next_pair($full);
ok(!defined $new_pair, 'a server in a full datacenter does not generate');
like(
	$err,
	qr/53400: could not generate a snowflake ID: all 32 worker ids of datacenter 7 are claimed.*HINT:  Release the claims of servers that are gone with snowflake_registry.release\(\)/s,
	'and says that the datacenter is full and how to free ids');
ok($full->log_contains('all 32 snowflake worker ids of datacenter 7 are claimed'),
	'the log says so too');

# A claim whose promise passed longer ago than reclaim_after (a day) passes
# to another login, above that promise.
$registry->safe_psql('postgres',
	"UPDATE snowflake_registry.claims SET promise = now() - interval '2 days' "
	  . "WHERE datacenter_id = 7 AND worker_id = 13");
($pair) = wait_for_pair($full);
is($pair, '7|13', 'a claim silent for longer than reclaim_after passes to another login');
is(claim_row('7|13', 'owner'), 'g', 'which owns it now');
$full->stop;

# A login holds one live claim a datacenter: a second server with the same
# login (a copy with its own system) is refused while the first extends.
$new->start;
wait_for_pair($new);
my $twin_login = snowflake_node('n', registry => $registry, login => 'f');
start_node($twin_login);
like(
	wait_for_refusal($twin_login, 10, qr/refused/),
	qr/55000: could not generate a snowflake ID: the registry refused this server's claim.*DETAIL:  Worker id \d+ of datacenter 5 is held by another start of this server's login: system \d+/s,
	"a second server on one login is refused, and told who holds the login's claim");
$twin_login->stop;
$new->stop;

# An operator releases a claim: the holder learns it at its next
# extension, confirms, and claims a worker id again by itself.
my $released_worker = (split /\|/, $pairs[0])[1];
is( $registry->safe_psql('postgres',
		"SELECT snowflake_registry.release(5, $released_worker) IS NOT NULL"),
	't',
	'snowflake_registry.release releases a claim and says when it is free');
ok( $a->wait_for_log(
		"this server's claim on snowflake worker id $released_worker of datacenter 5 was released on the registry"),
	'the holder of a released claim stops generating and says why');
ok( $registry->poll_query_until(
		'postgres',
		"SELECT confirmed FROM snowflake_registry.status "
		  . "WHERE datacenter_id = 5 AND worker_id = $released_worker"),
	'and confirms to the registry that it stopped');
($pair) = wait_for_pair($a);
ok(defined $pair, "and generates again, with the claim it made anew ($pair)");

# An operator reassigns a claim to another login: the holder stops, and the
# login it was given to takes it at its next claim, above the holder's IDs.
my $reassigned_worker = (split /\|/, $pairs[1])[1];
my $newest_b = $b->safe_psql('postgres', 'SELECT snowflake_next_id()');
$registry->safe_psql('postgres',
	"SELECT snowflake_registry.reassign(5, $reassigned_worker, 'o')");
ok( $b->wait_for_log(
		"this server's claim on snowflake worker id $reassigned_worker of datacenter 5 was released on the registry"),
	'the holder of a reassigned claim stops generating');
my $heir = snowflake_node('o', registry => $registry);
start_node($heir);
($pair) = wait_for_pair($heir);
is($pair, "5|$reassigned_worker", 'the login it was reassigned to takes it');
cmp_ok(
	$heir->safe_psql('postgres',
		"SELECT snowflake_timestamp(snowflake_next_id()) > snowflake_timestamp($newest_b)"),
	'eq', 't',
	"above the previous holder's newest ID");
$heir->stop;

# A registry database without the extension: the server says so.
$registry->safe_psql('postgres', 'CREATE DATABASE no_extension');
(my $no_extension_conninfo = registry_conninfo($registry, 'i')) =~
  s/dbname=postgres/dbname=no_extension/;
my $misdirected = snowflake_node('i', registry => $registry,
	extra_conf => "snowflake.registry = '$no_extension_conninfo'\n");
start_node($misdirected);
like(
	(next_pair($misdirected))[1],
	qr/the registry cannot be used\n.*DETAIL:  The registry database has no snowflake_registry extension: run CREATE EXTENSION snowflake_registry there\./s,
	'a registry database without the extension is named as the reason');
$misdirected->stop;

# Claims follow the server's layout: with one worker bit, a datacenter has
# worker ids 0 and 1 only.  That is another fleet, with a registry of its
# own: a registry serves one layout, its fleet's.
my $narrow_registry = snowflake_registry('narrow_registry',
	layout => '1288834974657/41/5/1/16');
$narrow_registry->safe_psql(
	'postgres', q{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, version, epoch, layout, floor,
	 promise, claimed_at, extended_at)
SELECT 9, w, 'elsewhere_' || w, 'held', 1, 1, '1288834974657/41/5/1/16',
	   clock_timestamp(), clock_timestamp() + s.lease,
	   clock_timestamp(), clock_timestamp()
FROM unnest(ARRAY[0, 5]) w, snowflake_registry.settings s});
my $one_bit_conf = "snowflake.datacenter_id = 9\nsnowflake.worker_bits = 1\n"
  . "snowflake.sequence_bits = 16\n";
my $small = snowflake_node('k', registry => $narrow_registry,
	extra_conf => $one_bit_conf);
start_node($small);
($pair) = wait_for_pair($small);
is($pair, '9|1', 'with one worker bit, the only free worker id is claimed');
my $too_many = snowflake_node('l', registry => $narrow_registry,
	extra_conf => $one_bit_conf);
start_node($too_many);
like((next_pair($too_many))[1],
	qr/all 2 worker ids of datacenter 9 are claimed/,
	'and the next server finds the datacenter full');
$_->stop foreach ($small, $too_many);
$narrow_registry->safe_psql('postgres',
	"UPDATE snowflake_registry.claims SET state = 'released', confirmed = true "
	  . "WHERE datacenter_id = 9");
my $other_layout = snowflake_node('p', registry => $narrow_registry,
	extra_conf => "snowflake.datacenter_id = 9\nsnowflake.worker_bits = 1\n");
start_node($other_layout);
like(
	(next_pair($other_layout))[1],
	qr/55000: could not generate a snowflake ID: this server's layout is not its fleet's\n.*DETAIL:  The registry records the fleet's layout \(epoch ms\/time\/datacenter\/worker\/sequence bits\) as 1288834974657\/41\/5\/1\/16; this server's is 1288834974657\/41\/5\/1\/12\./s,
	'a server of another layout gets no claim, not even a freed one');
$other_layout->stop;
$narrow_registry->stop;

# Nor does a server whose bits are split otherwise, though its pair is one
# the registry never granted: worker 32 of datacenter 0 in 4/6 bits is
# worker 0 of datacenter 1 in Twitter's 5/5, this fleet's layout.
my $split = snowflake_node('r', registry => $registry,
	extra_conf => "snowflake.datacenter_id = 0\nsnowflake.datacenter_bits = 4\n"
	  . "snowflake.worker_bits = 6\n");
start_node($split);
like(
	(next_pair($split))[1],
	qr/this server's layout is not its fleet's\n.*as 1288834974657\/41\/5\/5\/12; this server's is 1288834974657\/41\/4\/6\/12\./s,
	'a server whose datacenter and worker bits are split otherwise gets no claim');
ok( $split->log_contains(
		qr/LOG:  this server's snowflake layout is not its fleet's; no IDs are generated/),
	'and its log says why');
$split->stop;

# An operator who finds the fleet's layout wrong sets another with the same
# epoch and the time at the same bit (4/6 for 5/5): the servers of the old
# layout stop at their next extension, and a server of the new one starts
# above every ID made before, though its pair has the node bits of one of
# theirs (worker 32 of datacenter 0 in 4/6 is worker 0 of datacenter 1 in
# 5/5; worker ids 0 to 31 of datacenter 0 were used before).
my $changing = snowflake_registry('changing_registry');
$changing->safe_psql(
	'postgres', q{
INSERT INTO snowflake_registry.claims
	(datacenter_id, worker_id, owner, state, confirmed, version, epoch,
	 layout, floor, promise, claimed_at, extended_at)
SELECT 0, w, 'elsewhere_' || w, 'released', true, 1, 0,
	   '1288834974657/41/5/5/12', clock_timestamp() - interval '2 h',
	   clock_timestamp() - interval '1 h', clock_timestamp() - interval '2 h',
	   clock_timestamp() - interval '1 h'
FROM generate_series(0, 31) w});
my $five_five = snowflake_node('s', registry => $changing,
	extra_conf => "snowflake.datacenter_id = 1\n");
start_node($five_five);
is((wait_for_pair($five_five))[0], '1|0',
	"a server of Twitter's layout claims worker 0 of datacenter 1");
my $five_five_ids = start_id_stream($five_five, 'five_five');
ok(wait_for_stream($five_five_ids, '(SELECT count(*) FROM ids) > 0'),
	'and generates');
my $five_five_log = -s $five_five->logfile;
is( $changing->safe_psql(
		'postgres',
		"SELECT layout FROM snowflake_registry.configure(layout => '1288834974657/41/4/6/12')"
	),
	'1288834974657/41/4/6/12',
	'an operator sets the layout 4/6');
ok( $five_five->wait_for_log(
		qr/this server's claim on snowflake worker id 0 of datacenter 1 is not of the fleet's layout, which an operator changed; no IDs are generated/,
		$five_five_log),
	'the server of 5/5 learns at its next extension that its layout is no longer the fleet\'s'
);
ok( $five_five->wait_for_log(
		qr/this server's snowflake layout is not its fleet's; no IDs are generated/,
		$five_five_log),
	'and, claiming again, is refused');
stop_id_stream($five_five_ids);
my $four_six = snowflake_node('t', registry => $changing,
	extra_conf => "snowflake.datacenter_id = 0\nsnowflake.datacenter_bits = 4\n"
	  . "snowflake.worker_bits = 6\n");
start_node($four_six);
is((wait_for_pair($four_six))[0], '0|32',
	'a server of 4/6 claims worker 32 of datacenter 0');
my $four_six_ids = start_id_stream($four_six, 'four_six');
ok(wait_for_stream($four_six_ids, '(SELECT count(*) FROM ids) > 100'),
	'and generates');
stop_id_stream($four_six_ids);
my @before = stream_ids($five_five_ids);
my @after  = stream_ids($four_six_ids);
# ($a and $b name nodes here: the sort's are main's)
my $highest_before = (sort { $main::a <=> $main::b } @before)[-1];
my $lowest_after   = (sort { $main::a <=> $main::b } @after)[0];
cmp_ok($lowest_after, '>', $highest_before,
	'every ID of the new layout is above every ID of the old: '
	  . scalar(@before) . ' and ' . scalar(@after) . ' IDs, the same node bits');
$_->stop foreach ($five_five, $four_six, $changing);

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
	  . " dbname=postgres user=j connect_timeout=600'\n"
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

# A setting of 1.3's registry that 1.4 retired stops the server, saying so.
my $retired = snowflake_node('q', registry => $registry,
	extra_conf => "snowflake.registry_takeover_delay = '10s'\n");
ok(!start_node($retired, fail_ok => 1),
	'a server that still sets snowflake.registry_takeover_delay does not start');
ok( $retired->log_contains(
		'unrecognized configuration parameter "snowflake.registry_takeover_delay".*\n.*\n.*HINT:  Remove it: since 1.4 every claim is fenced by the promise the registry records'
	),
	'and says that 1.4 retired it');

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

# The registry worker terminated alone (an administrator's kill) marks its claim idle, as at a shutdown; the
# postmaster starts it again and it takes the claim back.  It exited so
# that it was never restarted, and the server refused every ID for good.
my $alone = snowflake_node('u', registry => $registry);
start_node($alone);
my ($pair_alone) = wait_for_pair($alone);
ok(defined $pair_alone, 'a server claims a worker id');
my $id_before = $alone->safe_psql('postgres', 'SELECT snowflake_next_id()');
my $worker_before = registry_worker_pid($alone, wait => 1);
signal_process('TERM', $worker_before, 'the registry worker');
my $worker_after;
foreach (1 .. 300)
{
	$worker_after = registry_worker_pid($alone);
	last if defined $worker_after && $worker_after != $worker_before;
	usleep(100_000);
}
isnt($worker_after // $worker_before, $worker_before,
	'its registry worker terminated alone: the postmaster starts another');
my ($pair_after) = wait_for_pair($alone, 30);
is($pair_after, $pair_alone, '... which claims the worker id again');
cmp_ok($alone->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $id_before, '... above the IDs it issued before');
$alone->stop;

# A session in a transaction that holds the fleet's row, running rather than
# idle (helper-39's N2: a call that starts an epoch and then sleeps), keeps
# an operator's change of the lease waiting; configure() fails after 5 s
# and names it, so that the operator can end it.
my $holder = $registry->background_psql('postgres');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
$holder->query_safe(
	'BEGIN; SELECT FROM snowflake_registry.fleet FOR SHARE');
$holder->query_until(qr/sleeping/, q{\echo sleeping
SELECT pg_sleep(60);
});
my ($rc, $out, $err) = $registry->psql('postgres',
	"SELECT snowflake_registry.configure(lease => '20 s')",
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$err,
	qr/55P03: could not configure the registry: another transaction holds its settings or its layout/,
	'a change of the lease fails while a session holds the fleet\'s row');
like(
	$err,
	qr/DETAIL: .*Sessions of this database in a transaction, and prepared transactions, the oldest first: \Q$holder_pid\E \([^,]+, active, in a transaction since /,
	'and names that session, running a statement');
$registry->safe_psql('postgres', "SELECT pg_terminate_backend($holder_pid)");
eval { $holder->quit };

done_testing();
