# Copyright (c) 2026, the snowflake authors
#
# Uninstalling in any restart order.  A server replays a WAL record of the
# mark only with the library preloaded, so while a primary writes them a
# standby restarted without the library fails to start: HA managers such as
# Patroni restart the standbys first.  The README's steps: switch
# snowflake.enabled off, CHECKPOINT, wait until every standby has replayed
# past snowflake.uninstall_lsn and CHECKPOINT there, then drop the library
# from shared_preload_libraries everywhere and restart in any order.  Here
# the standby restarts first, then the primary, and replication goes on.
#
# Then switching it on again: generation resumes above every ID issued
# before, across a crash while it was off, with the clock set back.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(usleep);

# No timed checkpoint in the middle: the test decides where they fall.
my $conf = "checkpoint_timeout = '1h'\nmax_wal_size = '1GB'\n";

# The error of a generating call, with VERBOSITY verbose.
sub generate_error
{
	my ($node) = @_;
	my (undef, $ret, undef, $stderr) =
	  psql_timed($node, 'SELECT snowflake_next_id()');
	return $ret == 0 ? '' : $stderr;
}

# The snowflake mark records in node's WAL from lsn on, as pg_waldump lists
# them; pg_waldump ends with an error at the end of WAL, which is expected.
sub mark_records_from
{
	my ($node, $lsn) = @_;
	my ($stdout, $stderr);
	IPC::Run::run(
		[
			'pg_waldump', '--path',
			$node->data_dir . '/pg_wal', '--start',
			$lsn
		],
		'>',
		\$stdout,
		'2>',
		\$stderr);
	return grep { /rmgr: custom146/ } split /\n/, $stdout;
}

# Restart the standby without the library; it must fail, stopped by a mark
# record it replays.  Then start it with the library again.
sub standby_needs_library
{
	my ($standby, $test_name) = @_;
	$standby->stop('fast');
	$standby->append_conf('postgresql.conf',
		"shared_preload_libraries = ''\n");
	my $log_offset = -s $standby->logfile;
	ok(!$standby->start(fail_ok => 1), $test_name);
	like(
		slurp_file($standby->logfile, $log_offset),
		qr/FATAL:  resource manager with ID 146 not registered/,
		"... for the mark record it replays: $test_name");
	$standby->append_conf('postgresql.conf',
		"shared_preload_libraries = 'snowflake'\n");
	start_node($standby);
	return;
}

my $primary = snowflake_node(
	'primary',
	allows_streaming => 1,
	extra_conf => $conf);
start_node($primary);
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_next_id(),
                     n int);
INSERT INTO orders (n) SELECT g FROM generate_series(1, 100) g;
});
$primary->backup('backup');
my $standby = snowflake_standby($primary, 'backup', 'standby');
$standby->append_conf('postgresql.conf', $conf);
start_node($standby);

# While the primary writes marks, a standby cannot leave the library behind,
# not even after DROP EXTENSION: the mark writer logs the mark after every
# checkpoint, and the standby replays from its last restartpoint on.
$primary->safe_psql(
	'postgres', q{
INSERT INTO orders (n) SELECT g FROM generate_series(101, 200) g;
ALTER TABLE orders ALTER COLUMN id DROP DEFAULT;
DROP EXTENSION snowflake;
CHECKPOINT;
});
my $redo_lsn =
  $primary->safe_psql('postgres',
	'SELECT redo_lsn FROM pg_control_checkpoint()');
my $relogged = 0;
foreach (1 .. 50)
{
	$relogged = mark_records_from($primary, $redo_lsn);
	last if $relogged;
	usleep(100_000);
}
ok($relogged,
	'after DROP EXTENSION the primary still logs the mark after a checkpoint'
);
$primary->wait_for_catchup($standby);
standby_needs_library($standby,
	'after DROP EXTENSION a standby still cannot restart without the library'
);

# snowflake.enabled = off on every server, and a reload; it is read by the
# postmaster, so SET cannot change it, and uninstall_lsn is read-only.
my (undef, undef, undef, $set_err) =
  psql_timed($primary, 'SET snowflake.enabled = off');
like(
	$set_err,
	qr/ERROR:  55P02: parameter "snowflake.enabled" cannot be changed now/,
	'SET cannot switch snowflake.enabled');
(undef, undef, undef, $set_err) =
  psql_timed($primary, "ALTER SYSTEM SET snowflake.uninstall_lsn = '0/0'");
like(
	$set_err,
	qr/ERROR:  55P02: parameter "snowflake.uninstall_lsn" cannot be changed/,
	'snowflake.uninstall_lsn is read-only');
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
ALTER TABLE orders ALTER COLUMN id SET DEFAULT snowflake_next_id();
INSERT INTO orders (n) SELECT g FROM generate_series(201, 300) g;
});
is($primary->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn'),
	'', 'snowflake.uninstall_lsn is empty while marks are written');

# A session in the middle of a long statement has not reloaded the
# configuration, and still stops generating.
my ($long_out, $long_err) = ('', '');
my $long = IPC::Run::start(
	[
		'psql',
		'-XAtq',
		'-v',
		'VERBOSITY=verbose',
		'-d',
		$primary->connstr('postgres'),
		'-c',
		'DO $$BEGIN FOR i IN 1 .. 400 LOOP '
		  . 'PERFORM snowflake_next_id(); PERFORM pg_sleep(0.02); '
		  . 'END LOOP; END$$'
	],
	'>',
	\$long_out,
	'2>',
	\$long_err);
usleep(1_500_000);
$standby->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.enabled = off');
$standby->safe_psql('postgres', 'SELECT pg_reload_conf()');
alter_system($primary, 'snowflake.enabled' => 'off');
$long->finish;
like(
	$long_err,
	qr/ERROR:  55000: snowflake ID generation is disabled/,
	'a statement that began before the reload stops generating');
like(
	generate_error($primary),
	qr/ERROR:  55000: snowflake ID generation is disabled\n.*DETAIL:  snowflake\.enabled is off, so this server writes no new high-water mark, and without one an ID could be issued again after a crash or a failover\.\n.*HINT:  Set snowflake\.enabled to on and reload the configuration, once every server of the replication group preloads snowflake\./s,
	'generation is refused, saying why and how to resume');
like(
	generate_error($standby),
	qr/ERROR:  25006: cannot generate snowflake IDs during recovery/,
	'the standby still refuses as a standby');

# The last mark record lies past the last checkpoint: no LSN until the next.
is( $primary->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn'),
	'',
	'snowflake.uninstall_lsn is empty until a checkpoint follows the last mark'
);

# Nor is it enough for a standby to have replayed past the last mark
# record: it restarts from its last restartpoint, before that record.
$primary->wait_for_catchup($standby);
standby_needs_library($standby,
	'a standby that replayed past the last mark record still needs the library'
);

$primary->safe_psql('postgres', 'CHECKPOINT');
my $uninstall_lsn =
  $primary->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn');
is( $uninstall_lsn,
	$primary->safe_psql(
		'postgres', 'SELECT checkpoint_lsn FROM pg_control_checkpoint()'),
	'after a checkpoint snowflake.uninstall_lsn is that checkpoint');
is($standby->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn'),
	'', 'a standby shows no snowflake.uninstall_lsn');

# Nothing is logged any more, after checkpoints either (the writer looks
# once a second), nor in the statement that stopped.
sleep(2);
$primary->safe_psql('postgres', 'CHECKPOINT');
sleep(2);
$primary->safe_psql('postgres', 'CHECKPOINT');
is(scalar(mark_records_from($primary, $uninstall_lsn)),
	0, 'no mark record follows snowflake.uninstall_lsn');
cmp_ok($primary->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn'),
	'ne', '', 'snowflake.uninstall_lsn stays set');

# Wait until the standby has replayed past it, and make a restart point
# there with CHECKPOINT, as the README says.
$primary->safe_psql('postgres', 'INSERT INTO orders (id, n) VALUES (1, 301)');
$standby->poll_query_until('postgres',
	"SELECT pg_last_wal_replay_lsn() > '$uninstall_lsn'")
  or die 'the standby did not replay past snowflake.uninstall_lsn';
$standby->safe_psql('postgres', 'CHECKPOINT');

# Then drop the library everywhere, keep snowflake.enabled = off until every
# server runs without it, and restart the standby first: even a crash of it
# restarts past the mark records.  (DROP EXTENSION, the README's first step,
# comes here, since the checks above call the functions.)
$primary->safe_psql(
	'postgres', q{
ALTER TABLE orders ALTER COLUMN id DROP DEFAULT;
DROP EXTENSION snowflake;
});
$primary->wait_for_catchup($standby);
$_->append_conf('postgresql.conf', "shared_preload_libraries = ''\n")
  foreach ($standby, $primary);
$standby->stop('immediate');
ok($standby->start(fail_ok => 1),
	'the standby restarts first, without the library, even after a crash');
is($standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'the standby runs without snowflake');
$primary->safe_psql('postgres', 'INSERT INTO orders (id, n) VALUES (2, 302)');
$primary->wait_for_catchup($standby);
is( $standby->safe_psql('postgres', 'SELECT count(*) FROM orders'),
	'302',
	'the standby goes on replicating from the primary, which still preloads snowflake'
);

restart_node($primary);
is($primary->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'then the primary restarts without the library');
$primary->safe_psql('postgres', 'INSERT INTO orders (id, n) VALUES (3, 303)');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM orders'),
	'303', 'and the standby goes on replicating after that');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is still a standby');
$standby->stop;
$primary->stop;

# Switching it on again: IDs resume above every ID issued before, across a
# crash while it was off, with the clock set back 5 s.
SKIP:
{
	skip 'libfaketime is not installed: the rest moves the server\'s clock',
	  5
	  unless defined $SnowflakeTest::libfaketime;

	my $node = snowflake_node('again', extra_conf => $conf);
	start_node($node);
	check_clock_offset($node, 0, 'the server clock starts at the real time');
	$node->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (n serial, id bigint DEFAULT snowflake_next_id());
INSERT INTO ids DEFAULT VALUES;
INSERT INTO ids SELECT FROM generate_series(1, 1000);
});
	alter_system($node, 'snowflake.enabled' => 'off');
	crash_node($node);
	set_clock($node, -5);
	start_node($node);
	like(
		generate_error($node),
		qr/snowflake ID generation is disabled/,
		'after a crash, generation is still off');
	is( $node->safe_psql('postgres', 'SHOW snowflake.uninstall_lsn'),
		$node->safe_psql(
			'postgres', 'SELECT checkpoint_lsn FROM pg_control_checkpoint()'),
		'the checkpoint that ends crash recovery follows the replayed marks');

	# The mark on disk lies up to a stride above the last ID; let IDs lead
	# the clock by the 5 s it was set back instead of failing.
	my $off_lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');
	alter_system(
		$node,
		'snowflake.enabled' => 'on',
		'snowflake.max_lead' => '10s');
	$node->safe_psql('postgres',
		'INSERT INTO ids SELECT FROM generate_series(1, 1000)');
	check_strictly_increasing($node, 'ids',
		'IDs resume above every ID issued before');
	ok( mark_records_from($node, $off_lsn) > 0,
		'and their marks are in WAL again');
	$node->stop;
}

done_testing();
