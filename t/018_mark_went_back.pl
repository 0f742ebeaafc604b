# Copyright (c) 2026, the snowflake authors
#
# A mark file that goes backwards: an older copy restored over it, or a
# file removed or replaced by hand.  Resuming under such a file after a
# crash would repeat IDs, so the server finds out and refuses to generate,
# with SQLSTATE XX001:
#  - while it runs, at the next write of the mark, which first checks that
#    the file still holds what was last written (and writes the true mark
#    back, so that a restart is safe);
#  - at a crash restart, from WAL: the mark writer logs the mark again
#    after each checkpoint, so the WAL that crash recovery replays always
#    holds a mark, which the file must not lie below.
# A new server logs that it has no mark file yet, and a failed write leaves
# no temporary file behind.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = snowflake_node(
	'main',
	allows_streaming => 1,
	extra_conf => "restart_after_crash = on\n");
start_node($node);
ok( $node->log_contains(
		qr/LOG:  snowflake high-water mark file "snowflake\.mark" does not exist; IDs start from the clock\n.*DETAIL:  This is expected the first time a server starts with snowflake\./
	),
	'a new server logs that it has no mark file yet');
$node->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
});

my $mark_path = $node->data_dir . '/snowflake.mark';

# Issue IDs until the mark on disk has moved past $mark_ms.
sub generate_past
{
	my ($mark_ms) = @_;
	my $deadline = time() + 30;
	do
	{
		$node->safe_psql('postgres',
			'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100); SELECT pg_sleep(0.1)'
		);
	} until (read_mark_file($mark_path)->{mark_ms} > $mark_ms
		  || time() > $deadline);
	return read_mark_file($mark_path)->{mark_ms};
}

# Is a SIGQUIT pending for process pid (stopped processes keep it pending)?
sub sigquit_pending
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/status" or return 0;
	my $status = do { local $/; <$fh> };
	close $fh;
	foreach my $field (qw(SigPnd ShdPnd))
	{
		return 1 if $status =~ /^$field:\s*([0-9a-f]+)/m && (hex($1) & 4);
	}
	return 0;
}

# Poll snowflake_next_id() until it fails; return its stderr.
sub first_refusal
{
	my $deadline = time() + 30;
	while (time() < $deadline)
	{
		my ($elapsed, $ret, $stdout, $stderr) = psql_timed($node,
			'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
		return $stderr if $ret != 0;
		usleep(100_000);
	}
	return '';
}

$node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100)');
my $old_bytes = slurp_file($mark_path);
my $old_mark  = mark_file_fields($old_bytes)->{mark_ms};
my $true_mark = generate_past($old_mark);
cmp_ok($true_mark, '>', $old_mark, 'the mark moved on while IDs were issued');

# An older copy put back while the server runs: the next write finds it.
write_mark_file($mark_path, $old_bytes);
my $stderr = first_refusal();
like(
	$stderr,
	qr/ERROR:  XX001: snowflake high-water mark file "snowflake\.mark" is invalid\n.*DETAIL:  The file's mark went back from (\d+) ms to $old_mark ms while the server ran\./,
	'an older mark file put in place while the server runs is refused at the next write'
);
like(
	$stderr,
	qr/HINT:  The true mark was written back\. Find out what replaced the file, then restart the server\./,
	'... and the hint says the true mark was written back');
ok( $node->log_contains(
		qr/LOG:  snowflake high-water mark file "snowflake\.mark" went backwards; ID generation is disabled/
	),
	'... and the server log says so');
cmp_ok(read_mark_file($mark_path)->{mark_ms},
	'>=', $true_mark, 'the file holds the true mark again');
my $max_before = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');

restart_node($node);
my $id = $node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() RETURNING id');
cmp_ok($id, '>', $max_before,
	'after a restart generation resumes above every earlier ID');

# A base backup copies the mark file while later marks go on being written
# to WAL: restored as a server of its own (no standby), its recovery is not
# a crash recovery, and a file older than the WAL is expected there.
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100)');
$node->backup('restore');
my $primary_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
my $restored = PostgreSQL::Test::Cluster->new('restored');
$restored->init_from_backup($node, 'restore');
$restored->start;
my $restored_id = $restored->safe_psql('postgres',
	"SET snowflake.max_lead = 60000;\nSELECT snowflake_next_id()");
cmp_ok($restored_id, '>', 0,
	'a server restored from a base backup generates IDs');
ok(!$restored->log_contains(qr/went backwards/),
	'... without taking its mark file for an older copy');
$restored->stop;

# Crash recovery: an older copy put in place after a checkpoint, then a
# crash of a backend, which makes the postmaster reinitialise and replay
# WAL from the checkpoint.
$old_bytes = slurp_file($mark_path);
$old_mark  = mark_file_fields($old_bytes)->{mark_ms};
generate_past($old_mark);
$node->safe_psql('postgres', 'CHECKPOINT');
my $redo = $node->safe_psql('postgres',
	'SELECT redo_lsn FROM pg_control_checkpoint()');
my $relogged = 0;
my $deadline = time() + 30;
until ($relogged || time() > $deadline)
{
	my ($out, $err) = run_command(
		[ 'pg_waldump', '--path', $node->data_dir . '/pg_wal', '--start', $redo ]);
	$relogged = $out =~ /rmgr: custom146/;
	usleep(100_000) unless $relogged;
}
ok($relogged, 'the mark writer logs the mark again after a checkpoint');

my $writer = mark_writer_pid($node, wait => 1);
signal_process('STOP', $writer, 'the mark writer');
write_mark_file($mark_path, $old_bytes);
my $victim = $node->background_psql('postgres');
my $victim_pid = $victim->query_safe('SELECT pg_backend_pid()');
signal_process('KILL', $victim_pid, 'the backend to crash');

# Let the stopped writer go only once the postmaster's SIGQUIT is pending
# for it, or it could put the true mark back before recovery reads the file.
my $deadline_quit = time() + 30;
until (sigquit_pending($writer) || time() > $deadline_quit)
{
	usleep(10_000);
}
signal_process('CONT', $writer, 'the mark writer');
$victim->quit;
wait_for_connections($node);
$stderr = first_refusal();
like(
	$stderr,
	qr/ERROR:  XX001: snowflake high-water mark file "snowflake\.mark" is invalid\n.*DETAIL:  WAL records a mark of \d+ ms, but the file holds $old_mark ms: it was replaced by an older copy, or removed\./,
	'after a crash, a mark file below the mark in WAL is refused');
ok( $node->log_contains(
		qr/LOG:  snowflake high-water mark file "snowflake\.mark" went backwards; ID generation is disabled\n.*DETAIL:  WAL records a mark/
	),
	'... and the server log says so at recovery');
$node->stop;

# The operator's recovery for a damaged file: with the clock past every ID,
# remove the file and restart.  A removed file is logged.
unlink $mark_path or die "could not remove $mark_path: $!";
my $log_offset = -s $node->logfile;
start_node($node);
ok( $node->log_contains(
		qr/LOG:  snowflake high-water mark file "snowflake\.mark" does not exist; IDs start from the clock\n.*\n.*HINT:  If the file was removed, IDs are unique only once the clock is past every ID this server issued before\./,
		$log_offset),
	'a removed mark file is logged at start');

# A directory in place of the mark file while the server runs: the file is
# found to be gone at the next write, writing the true mark back fails, and
# no temporary file is left behind.
$node->safe_psql('postgres',
	'INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100)');
generate_past(read_mark_file($mark_path)->{mark_ms});
unlink $mark_path or die "could not remove $mark_path: $!";
mkdir $mark_path  or die "could not create $mark_path: $!";
$stderr = first_refusal();
like(
	$stderr,
	qr/DETAIL:  The file was replaced by an invalid one while the server ran; it held a mark of \d+ ms\./,
	'a directory in place of the mark file is refused at the next write');
ok(!-e $node->data_dir . '/snowflake.mark.tmp',
	'a failed write leaves no temporary file behind');
ok( $node->log_contains(
		qr/LOG:  could not \w+ file "snowflake\.mark"[^\n]*: Is a directory/
	),
	'... and the failed write is logged');
is($node->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT id) FROM ids'),
	't', 'every ID issued is distinct');
$node->stop;
rmdir $mark_path;

done_testing();
