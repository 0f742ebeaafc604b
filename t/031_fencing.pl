
# Copyright (c) 2026, the snowflake authors

# Clones and split brain fenced by the registry's lease: a pg_basebackup
# clone started as a primary, and a standby promoted while its primary runs,
# are refused while the original checks in; a primary cut off from the
# registry loses its claim to its promoted standby after the takeover delay
# and, once it reaches the registry again, stops generating and says why;
# snowflake.registry_require_check_in stops generating without check-ins;
# after its primary is killed, a promoted standby generates within the
# takeover delay.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

# snowflake_node's registry settings: check-in every 200 ms, takeover 2 s
my $takeover = 2;

my $registry = snowflake_registry('registry');

# the port of the server holding the claim on a pair "dc|worker"
sub holder_port
{
	my ($pair) = @_;
	my ($dc, $worker) = split /\|/, $pair;
	return $registry->safe_psql('postgres',
		"SELECT port FROM snowflake_claims "
		  . "WHERE datacenter_id = $dc AND worker_id = $worker");
}

my $primary =
  snowflake_node('primary', registry => $registry, allows_streaming => 1);
start_node($primary);

# Back up the primary before it issues any ID: a backup taken while marks
# are being written holds a mark file older than the marks in its WAL, which
# a server started from it as a primary refuses for that reason first.
$registry->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM snowflake_claims WHERE port = "
	  . $primary->port)
  or die 'the primary did not claim a worker id';
my $pair = $registry->safe_psql('postgres',
	"SELECT datacenter_id || '|' || worker_id FROM snowflake_claims "
	  . "WHERE port = " . $primary->port);
$primary->backup('base');
is(next_pair($primary), $pair, "the primary claims $pair and generates with it");

# A pg_basebackup clone started as a primary beside its original.
my $clone = snowflake_standby($primary, 'base', 'clone', clone => 1);
ok(-f $clone->data_dir . '/snowflake.claim', 'the clone has the cached claim');
start_node($clone);
my ($pairs, $errors) = generate_for(3 * $takeover, $primary, $clone);
ok(!exists $pairs->{clone},
	'a clone started as a primary never generates while the original checks in');
is_deeply([ keys %{ $pairs->{primary} } ],
	[$pair], 'the original goes on generating with its pair, undisturbed');
like(
	$errors->{clone},
	qr/55000: could not generate a snowflake ID: the registry refused this server's claim\n.*DETAIL:  Worker id \d+ of datacenter 5 is held by the server at [^:]*:${\ $primary->port } \(data directory ${\ $primary->data_dir }, system identifier -?\d+\) since .* UTC, and last checked in at .* UTC, \d+ ms ago\. Unless it checks in again, the claim passes to this server in about \d+ ms\.\n.*HINT:  .* A holder that keeps checking in is a running server, of which this server is a copy\./s,
	'the clone says who holds the claim, since when, and when it last checked in');
ok($clone->log_contains('the snowflake registry refused this server\'s claim'),
	'the clone\'s log says so');
is(holder_port($pair), $primary->port, 'the registry still names the original');
$clone->stop;

# A standby promoted while its primary runs.
my $standby = snowflake_standby($primary, 'base', 'standby');
start_node($standby);
$primary->wait_for_catchup($standby);
$standby->promote;
($pairs, $errors) = generate_for(3 * $takeover, $primary, $standby);
ok(!exists $pairs->{standby},
	'a standby promoted while its primary checks in never generates');
is_deeply([ keys %{ $pairs->{primary} } ],
	[$pair], 'the primary goes on generating');
like($errors->{standby}, qr/the registry refused this server's claim/,
	'the promoted standby says why');

# The primary cut off from the registry (its registry worker stopped) goes
# on generating; its promoted standby takes the claim over after the
# takeover delay.
my $worker = registry_worker_pid($primary);
kill 'STOP', $worker;
my $stopped_at = time();
my ($standby_pair, $took) = wait_for_pair($standby);
is($standby_pair, $pair, 'the promoted standby takes the claim over');
my $since_stop = time() - $stopped_at;
cmp_ok($since_stop, '>=', $takeover - 0.5,
	'but only once the primary had not checked in for the takeover delay');
is(holder_port($pair), $standby->port, 'the registry names the new holder');
ok(defined next_pair($primary),
	'the cut-off primary still generates (the cost of availability)');

# Back in touch, the old primary learns that its claim moved.
kill 'CONT', $worker;
like(
	wait_for_refusal($primary),
	qr/could not generate a snowflake ID: this server's claim on worker id \d+ of datacenter 5 has moved to another server\n.*DETAIL:  It is held by the server at [^:]*:${\ $standby->port } /s,
	'the old primary stops generating once it learns its claim moved, and says to whom');
ok($primary->log_contains('claim on snowflake worker id \d+ of datacenter 5 has moved'),
	'its log says so');
$primary->stop;

# Safety over availability: no check-in for the takeover delay stops IDs.
$standby->append_conf('postgresql.conf',
	'snowflake.registry_require_check_in = on');
$standby->reload;
$worker = registry_worker_pid($standby);
kill 'STOP', $worker;
like(
	wait_for_refusal($standby, 30),
	qr/no check-in with the registry succeeded for "snowflake.registry_takeover_delay"/,
	'with registry_require_check_in, generation stops without check-ins');
kill 'CONT', $worker;
my ($resumed_pair) = wait_for_pair($standby);
is($resumed_pair, $pair, 'and resumes once check-ins succeed again');
$standby->append_conf('postgresql.conf',
	'snowflake.registry_require_check_in = off');
$standby->reload;

# Failover: the holder killed, its promoted standby generates within the
# takeover delay, above every ID the old primary issued.
$standby->backup('base2');
my $standby2 = snowflake_standby($standby, 'base2', 'standby2');
start_node($standby2);
$standby->safe_psql('postgres',
	'CREATE TABLE ids AS SELECT snowflake_next_id() AS id FROM generate_series(1, 1000)');
my $last_id = $standby->safe_psql('postgres', 'SELECT max(id) FROM ids');
$standby->wait_for_catchup($standby2);
crash_node($standby);
my $killed_at = time();
$standby2->promote;

# Until then it refuses, and says that this is expected after a failover,
# when the old primary last checked in and when the claim passes.
my ($refusal, $asked_at);
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
while (time() < $deadline)
{
	$asked_at = time();
	my ($ret, $stdout, $stderr) = $standby2->psql('postgres',
		"\\set VERBOSITY verbose\nSET snowflake.max_clock_wait = 0;\nSELECT snowflake_next_id();"
	);
	if ($stderr =~ /the registry refused this server's claim/)
	{
		$refusal = $stderr;
		last;
	}
	last if $ret == 0;
	usleep(50_000);
}
SKIP:
{
	skip 'the promoted standby took the claim over before it was refused', 4
	  unless defined $refusal;
	my ($ago, $left) = $refusal =~
	  /DETAIL:  Worker id \d+ of datacenter 5 is held by the server at [^:]*:${\ $standby->port } .* since .* UTC, and last checked in at .* UTC, (\d+) ms ago\. Unless it checks in again, the claim passes to this server in about (\d+) ms\./s;
	ok(defined $left,
		'the promoted standby says when the old primary last checked in, and when the claim passes'
	) or diag $refusal;
	($ago, $left) = ($ago // 0, $left // 0);
	cmp_ok($ago, '>=', ($asked_at - $killed_at) * 1000 - 100,
		'the old primary last checked in before it was killed');
	cmp_ok($left, '<=', $takeover * 1001 + 1,
		'the claim passes within the takeover delay');
	like(
		$refusal,
		qr/HINT:  This is expected after a failover or a crash restart: the claim of the previous start of this server passes once that start has not checked in for its takeover delay \(2000 ms\), and generation resumes then\./,
		'and that this is expected after a failover');
}

my ($new_pair) = wait_for_pair($standby2);
my $failover = time() - $killed_at;
is($new_pair, $pair, 'after its primary is killed, the promoted standby takes the claim');
cmp_ok($failover, '<', $takeover + 30,
	"and generates within the takeover delay ($failover s after the kill)");
cmp_ok($standby2->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $last_id, 'above every ID its old primary issued');

done_testing();
