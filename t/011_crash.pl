
# Copyright (c) 2026, the snowflake authors

# A crash in the middle of generation, then a restart with the clock set back
# 10 s.
#
# Four clients generate IDs: they stream COPY (SELECT snowflake_next_id() ...)
# TO STDOUT, or run INSERT ... RETURNING in committed transactions.  Every ID
# a client prints is an ID it received.  The server is then crashed: the
# postmaster is stopped, and it and all its children get SIGKILL, so no
# shutdown hook runs (one round uses pg_ctl stop -m immediate instead).  After
# a restart with the clock 10 s behind, every new ID must be greater than
# every ID any client received before the crash: the high-water mark, on
# disk and in WAL ahead of the IDs, is what carries that across the crash.
#
# The rounds run with synchronous_commit on and off.  In the last round the
# clients only SELECT (COPY) and the WAL writer sleeps 10 s, so the marks'
# WAL records are still in WAL buffers when the server dies and crash
# recovery cannot bring them back: there the mark file alone must hold,
# whatever happens to WAL.
#
# The server's clock is moved with libfaketime (see SnowflakeTest.pm); the
# test checks that it moved and that the clock after the restart really lies
# below the IDs received before the crash, so that it would catch IDs being
# issued again.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

skip_without_libfaketime();

my $node = snowflake_node('main', extra_conf => "log_statement = none\n");
start_node($node);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint NOT NULL);
});
$node->stop;

my $outdir = $node->basedir . '/clients';
mkdir $outdir or die "could not create $outdir: $!";

# a psql script of committed single-statement transactions
my $insert_script = "$outdir/insert.sql";
PostgreSQL::Test::Utils::append_to_file($insert_script,
	"INSERT INTO ids SELECT snowflake_next_id() FROM generate_series(1, 100) RETURNING id;\n"
	  x 50000);

my @rounds = (
	{   name               => 'sync_on',
		synchronous_commit => 'on',
		crash              => 'kill',
		inserters          => 2 },
	{   name               => 'sync_off',
		synchronous_commit => 'off',
		crash              => 'kill',
		inserters          => 2 },
	{   name               => 'sync_off_immediate',
		synchronous_commit => 'off',
		crash              => 'immediate',
		inserters          => 2 },
	{   name               => 'select_only_no_wal_flush',
		synchronous_commit => 'off',
		crash              => 'kill',
		inserters          => 0,
		wal_writer_delay   => '10s' });

foreach my $round (@rounds)
{
	my $name = $round->{name};

	set_clock($node, 0);
	start_node($node);
	check_clock_offset($node, 0, "$name: server clock runs at the real time");
	alter_system(
		$node,
		synchronous_commit => $round->{synchronous_commit},
		wal_writer_delay   => $round->{wal_writer_delay} // '200ms');

	# Start four clients, the last ones inserting; each one's stdout is the
	# IDs it received.
	my @clients;
	foreach my $i (1 .. 4)
	{
		my $file   = "$outdir/$name.$i.out";
		my $stderr = '';
		my @cmd =
		  ('psql', '-X', '-q', '-A', '-t', '-d', $node->connstr('postgres'));
		if ($i <= 4 - $round->{inserters})
		{
			# generate_series() in the target list streams its rows; in FROM
			# it would first store all of them
			push @cmd, '-c',
			  'COPY (SELECT snowflake_next_id() FROM (SELECT generate_series(1, 1000000000)) s) TO STDOUT';
		}
		else
		{
			push @cmd, '-f', $insert_script;
		}
		my $h =
		  IPC::Run::start(\@cmd, '<', '/dev/null', '>', $file, '2>', \$stderr,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
		push @clients, { h => $h, file => $file, stderr => \$stderr };
	}

	# Let them run until each has received IDs and generation has gone on
	# long enough for the mark to move several times.
	my $started  = time();
	my $deadline = $started + $PostgreSQL::Test::Utils::timeout_default;
	my $running  = 0;
	while (time() < $deadline)
	{
		$running = !grep { (-s $_->{file} // 0) < 20_000 } @clients;
		last if $running && time() - $started > 1.5;
		usleep(50_000);
	}
	ok($running, "$name: all four clients are receiving IDs");

	if ($round->{crash} eq 'kill')
	{
		crash_node($node);
	}
	else
	{
		$node->stop('immediate');
	}
	foreach my $c (@clients)
	{
		$c->{h}->finish;    # they fail: the server went away
	}

	# Restart with the clock 10 s back.  Generate at once, while the clock
	# is still below the IDs issued before the crash; reading what the
	# clients got can wait.
	set_clock($node, -10);
	start_node($node);
	check_clock_offset($node, -10, "$name: server clock is 10 s behind");

	# With the default settings the first call waits 1 s and gives up.
	my ($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($node, 'SELECT snowflake_next_id()');
	like(
		$stderr,
		qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
		"$name: with default settings the restarted server refuses: clock behind"
	);

	# With max_lead = 20 s generation goes on, above the mark.
	$node->safe_psql(
		'postgres', q{
SET snowflake.max_lead = 20000;
CREATE TABLE new_ids AS
	SELECT n, snowflake_next_id() AS id, clock_timestamp() AS after
	FROM generate_series(1, 50000) n;
});

	# What the clients received: complete lines only (a line cut by the
	# crash was not received in full).
	my $received_max = 0;
	my $received     = 0;
	my $bad          = 0;
	foreach my $i (0 .. $#clients)
	{
		my ($n, $last, $unordered) = read_ids($clients[$i]->{file});
		cmp_ok($n, '>', 0, "$name: client " . ($i + 1) . " received IDs");
		$received_max = $last if $last > $received_max;
		$received += $n;
		$bad      += $unordered;
	}
	is($bad, 0,
		"$name: each client's IDs before the crash are strictly increasing");
	note "$name: clients received $received IDs before the crash";

	check_strictly_increasing($node, 'new_ids',
		"$name: new IDs strictly increase");
	my $result = $node->safe_psql(
		'postgres', qq{
SELECT min(id) FROM new_ids;
SELECT count(*) FROM new_ids WHERE id IN (SELECT id FROM ids);
SELECT extract(epoch FROM (snowflake_parse($received_max)).ts - max(after))
	FROM new_ids;
DROP TABLE new_ids;
});
	my ($new_min, $repeated, $ahead_s) = split /\n/, $result;
	cmp_ok($ahead_s, '>', 3,
		"$name: the clock was still well below the last ID received when the new IDs were made"
	);
	ok( $new_min > $received_max,
		"$name: every new ID is greater than every ID received before the crash"
	) or diag "new minimum $new_min, received maximum $received_max";
	note
	  sprintf(
		"$name: clock %.3f s below the last ID received; first new ID %d ms above it",
		$ahead_s, id_ms($new_min) - id_ms($received_max));
	is($repeated, '0',
		"$name: no new ID repeats one committed before the crash");

	$node->safe_psql('postgres', 'TRUNCATE ids');
	$node->stop;
}

done_testing();

# The IDs in a client's output file: how many complete lines, the last one,
# and how many lines are not a number greater than the line before.
sub read_ids
{
	my ($file) = @_;
	my $data = slurp_file($file);

	# drop a last line that the crash cut short
	substr($data, rindex($data, "\n") + 1) = '';
	my $bad  = () = $data =~ /^(?!\d+$)/mg;
	my $n    = 0;
	my $prev = 0;
	foreach my $id (split /\n/, $data)
	{
		$bad++ if $id <= $prev;
		$prev = $id;
		$n++;
	}
	return ($n, $prev, $bad);
}
