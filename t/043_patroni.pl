
# Copyright (c) 2026, the snowflake authors

# Patroni: HA groups of three members, managed by Debian's Patroni with an
# etcd of its own on loopback, configured as docs/ha.md says
# (synchronous_mode_strict, the node ids in postgresql.parameters, the
# dynamic settings through patronictl edit-config).  Four clients insert
# IDs through a multi-host connection string with
# target_session_attrs=read-write while the cluster goes through a
# switchover (patronictl) and a failover after kill -9 of the leader's
# postmaster; the switchover goes to a member whose clock is 60 s behind
# where libfaketime is installed.  Then no ID may be issued twice, every
# acknowledged insert must have survived, and every insert's IDs must lie
# above those of every insert that committed before it began, whichever
# member issued them.  Inserts that failed in a role change may or may not
# have committed: those that did are held to the same rules, by the
# interval from their start to their failure.
#
# The same again with a second cluster, in registry mode (without the
# clock behind): the members connect to a registry node as one login, the
# HA group's, and share its one claim; the switchover hands it over at once
# (the old leader marks it idle at its clean shutdown), and after the
# failover the promoted member refuses until the killed leader's promise
# has passed, with a message that says who holds the claim, that this is
# expected after a failover, and when generation resumes; the registry then
# gives it the claim above that promise.  Both clusters bootstrap at once,
# then go through their role changes one after the other.
#
# The Patroni helpers (etcd, the members' configuration, waiting for a
# whole cluster, patronictl) are t/PatroniTest.pm's.  Skipped where patroni
# or etcd is not installed (Debian's packages "patroni" and "etcd-server").

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use IPC::Run;
use PatroniTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes qw(time usleep);

my $missing = patroni_missing('runs a Patroni cluster');
plan skip_all => $missing if $missing;

my $clients         = 4;
my $rows_per_insert = 20;
my $bindir          = `pg_config --bindir`;
chomp $bindir;
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

# the clients, by cluster, for END to stop (PatroniTest's END stops the
# members and etcd after it)
my @client_clusters;

my $work = PostgreSQL::Test::Utils::tempdir('patroni');
start_etcd();

#### Patroni members

# The directory Patroni runs the node's server programs from: PostgreSQL's,
# but for a postgres that runs the real one under libfaketime, with a clock
# file of the node's own (offset 0), where libfaketime is installed.
# (Patroni starts the postmaster itself; libfaketime preloaded into Patroni
# would upset its own clock reads.)  The real programs find their libraries
# and the other programs relative to where they really are.
sub faketime_bin_dir
{
	my ($node) = @_;
	my $dir    = $node->basedir . '/bin';
	my %env    = faketime_env($node);

	mkdir $dir or die "could not create $dir: $!";
	opendir(my $dh, $bindir) or die "could not read $bindir: $!";
	foreach my $program (grep { -f "$bindir/$_" } readdir $dh)
	{
		next if $program eq 'postgres' && %env;
		symlink("$bindir/$program", "$dir/$program")
		  or die "could not link $dir/$program: $!";
	}
	closedir $dh;
	if (%env)
	{
		append_to_file("$dir/postgres",
			"#!/bin/sh\n"
			  . join('', map { "export $_='$env{$_}'\n" } sort keys %env)
			  . "exec '$bindir/postgres' \"\$@\"\n");
		chmod(0755, "$dir/postgres")
		  or die "could not chmod $dir/postgres: $!";
	}
	return $dir;
}

# Wait until the setting has the value on every member (a reload by
# Patroni after patronictl edit-config).
sub wait_for_setting
{
	my ($cluster, $name, $value) = @_;
	foreach my $member (@{ $cluster->{members} })
	{
		$member->{node}->poll_query_until('postgres',
			"SELECT current_setting('$name') = '$value'")
		  or die "$name is not $value on $member->{name}";
	}
	return;
}

#### clients

# One client: inserts $rows IDs a transaction, each through a new
# connection of the multi-host connection string, until the stop file
# exists.  It logs each insert: "ok seq start end count min max" or "err
# seq start end message", with the times on the monotonic clock.
my $client_code = <<'EOF';
use strict;
use warnings;
use IPC::Run;
use Time::HiRes qw(clock_gettime usleep CLOCK_MONOTONIC);
my ($client, $connstr, $rows, $stop_file, $out_file) = @ARGV;
open my $out, '>>', $out_file or die "could not open $out_file: $!";
$out->autoflush(1);
my $seq = 0;
until (-e $stop_file)
{
	$seq++;
	my ($stdout, $stderr) = ('', '');
	my $start = clock_gettime(CLOCK_MONOTONIC);
	my $ok = IPC::Run::run(
		[ 'psql', '-X', '-A', '-t', '-q', '-v', 'VERBOSITY=verbose',
		  '-d', $connstr, '-c',
		  "INSERT INTO ids (client, seq, id) SELECT $client, $seq, snowflake_next_id() "
		  . "FROM generate_series(1, $rows) RETURNING id" ],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
	my $end = clock_gettime(CLOCK_MONOTONIC);
	my @ids = sort { $a <=> $b } $stdout =~ /^(\d+)$/mg;
	if ($ok && @ids == $rows)
	{
		printf $out "ok %d %.6f %.6f %d %s %s\n", $seq, $start, $end,
		  scalar(@ids), $ids[0], $ids[-1];
	}
	else
	{
		$stderr =~ s/\n+/ /g;
		printf $out "err %d %.6f %.6f %s\n", $seq, $start, $end, $stderr;
		usleep(50_000);
	}
}
EOF

sub start_clients
{
	my ($cluster) = @_;
	my $dir = "$work/$cluster->{scope}";
	mkdir $dir or die "could not create $dir: $!";
	$cluster->{stop_file} = "$dir/stop";
	push @client_clusters, $cluster;
	foreach my $client (1 .. $clients)
	{
		push @{ $cluster->{client_logs} }, "$dir/client$client.log";
		push @{ $cluster->{clients} },
		  IPC::Run::start(
			[
				$^X, '-e', $client_code, $client, $cluster->{conninfo},
				$rows_per_insert, $cluster->{stop_file},
				"$dir/client$client.log"
			],
			'<', '/dev/null', '>', "$dir/client$client.out", '2>&1');
	}
	return;
}

# the inserts the clients acknowledged so far
sub acknowledged
{
	my ($cluster) = @_;
	my $n = 0;
	foreach my $log (@{ $cluster->{client_logs} })
	{
		next unless -e $log;
		$n += () = slurp_file($log) =~ /^ok /mg;
	}
	return $n;
}

# Wait until the clients acknowledged $more inserts more.
sub wait_for_inserts
{
	my ($cluster, $more) = @_;
	my $target   = acknowledged($cluster) + $more;
	my $deadline = time() + $timeout;
	while (acknowledged($cluster) < $target)
	{
		die "the clients of $cluster->{scope} made no progress"
		  if time() > $deadline;
		usleep(100_000);
	}
	return;
}

sub stop_clients
{
	my ($cluster) = @_;
	append_to_file($cluster->{stop_file}, '');
	foreach my $harness (@{ $cluster->{clients} })
	{
		$harness->finish;
	}
	$cluster->{clients_stopped} = 1;
	return;
}

#### checks

# Check the IDs the clients inserted, on the leader.
sub check_ids
{
	my ($cluster, $leader) = @_;
	my $scope = $cluster->{scope};
	my %ops;
	my ($acked, $failed) = (0, 0);
	foreach my $client (1 .. $clients)
	{
		foreach my $line (split /\n/,
			slurp_file($cluster->{client_logs}[ $client - 1 ]))
		{
			my ($status, $seq, $start, $end, @rest) = split / /, $line;
			$ops{"$client/$seq"} = {
				start => $start,
				end   => $end,
				acked => $status eq 'ok',
				($status eq 'ok')
				? (count => $rest[0], min => $rest[1], max => $rest[2])
				: (error => "@rest")
			};
			$status eq 'ok' ? $acked++ : $failed++;
		}
	}

	is( $leader->{node}->safe_psql(
			'postgres', 'SELECT count(*) - count(DISTINCT id) FROM ids'),
		'0',
		"$scope: no ID was issued twice");

	# the inserts that committed, with their IDs
	my @committed;
	my ($lost, $committed_unacked, $unknown) = (0, 0, 0);
	foreach my $row (
		split /\n/,
		$leader->{node}->safe_psql(
			'postgres',
			'SELECT client, seq, count(*), min(id), max(id) FROM ids GROUP BY 1, 2'
		))
	{
		my ($client, $seq, $count, $min, $max) = split /\|/, $row;
		my $op = $ops{"$client/$seq"};
		unless ($op)
		{
			$unknown++;
			next;
		}
		$op->{committed} = 1;
		if ($op->{acked})
		{
			$lost++
			  unless $count == $op->{count}
			  && $min eq $op->{min}
			  && $max eq $op->{max};
		}
		else
		{
			$committed_unacked++;
		}
		push @committed, { %$op, min => $min, max => $max };
	}
	$lost += grep { $_->{acked} && !$_->{committed} } values %ops;
	is($unknown, 0, "$scope: every committed insert is in a client's log");
	is($lost, 0,
		"$scope: each of the $acked acknowledged inserts committed, with the IDs it returned"
	);
	note "$scope: $failed inserts failed during the role changes, "
	  . "$committed_unacked of them committed nonetheless";

	# Sweep the committed inserts in the order they began: every insert's
	# IDs lie above those of every insert that ended before it began.
	my @by_end = sort { $a->{end} <=> $b->{end} } @committed;
	my ($i, $max_before, $decreases) = (0, undef, 0);
	foreach my $op (sort { $a->{start} <=> $b->{start} } @committed)
	{
		while ($i < @by_end && $by_end[$i]{end} < $op->{start})
		{
			$max_before = $by_end[$i]{max}
			  if !defined $max_before || $by_end[$i]{max} > $max_before;
			$i++;
		}
		if (defined $max_before && $op->{min} <= $max_before)
		{
			diag "an insert began after IDs up to $max_before had "
			  . "committed, and got $op->{min}"
			  if $decreases++ < 5;
		}
	}
	is($decreases, 0,
		"$scope: every insert's IDs lie above those of every insert that committed before it began"
	);
	return;
}

# Stop the clients of a test that died before it stopped them
# (PatroniTest's END then stops the members and etcd).
END
{
	local $?;
	foreach my $cluster (grep { !$_->{clients_stopped} } @client_clusters)
	{
		append_to_file($cluster->{stop_file}, '');
		$_->kill_kill(grace => 5) foreach @{ $cluster->{clients} };
	}
}

# Create the table the clients insert into, on the leader.
sub create_table
{
	my ($leader) = @_;
	$leader->{node}->safe_psql(
		'postgres', q{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE ids (
	client integer NOT NULL,
	seq integer NOT NULL,
	id bigint NOT NULL,
	port integer NOT NULL DEFAULT inet_server_port());});
	return;
}

# A switchover with patronictl, to the synchronous standby (the only
# candidate Patroni accepts in synchronous mode); returns the new leader and
# synchronous standby once the cluster is whole again.
sub switchover
{
	my ($cluster, $leader, $sync) = @_;
	ok( patronictl(
			$cluster, 'switchover', '--leader', $leader->{name},
			'--candidate', $sync->{name}, '--force'),
		"$cluster->{scope}: patronictl switchover from $leader->{name} to $sync->{name}"
	);
	return wait_until_whole($cluster, not_leader => $leader->{name});
}

# kill -9 of the leader's postmaster: Patroni fails over at once
# (primary_start_timeout: 0) to the synchronous standby.  Returns the new
# leader and synchronous standby once the cluster is whole again (the old
# leader back as a replica).
sub kill_leader
{
	my ($cluster, $leader) = @_;
	signal_process('KILL', postmaster_pid($leader),
		"the postmaster of $leader->{name}");
	note "$cluster->{scope}: killed the postmaster of $leader->{name}";
	return wait_until_whole($cluster, not_leader => $leader->{name});
}

#### the two clusters

# Manual mode: the node ids in each member's postgresql.parameters; all
# members of one HA group share one pair.
my $manual = patroni_cluster(
	'manual',
	strict  => 1,
	bin_dir => \&faketime_bin_dir,
	static  => {
		shared_preload_libraries  => 'snowflake',
		'snowflake.datacenter_id' => '5',
		'snowflake.worker_id'     => '11'
	});

# Registry mode: the members claim their worker id from the registry, as
# the HA group's login; the static settings name it, the dynamic one times
# the extensions.  The registry's lease is long enough for Patroni to fail
# over before the killed leader's promise has passed, so that the new
# leader is seen refusing.
my $login    = 'registry_group';
my $registry = snowflake_registry('registry', lease => '15 s');
my $reg      = patroni_cluster(
	'registry',
	strict  => 1,
	bin_dir => \&faketime_bin_dir,
	static  => {
		shared_preload_libraries  => 'snowflake',
		'snowflake.datacenter_id' => '5',
		'snowflake.registry'      => registry_conninfo($registry, $login)
	},
	dynamic => { 'snowflake.registry_check_in_interval' => '200ms' });

# Both bootstrap at once.
start_member($_) foreach @{ $manual->{members} }, @{ $reg->{members} };

#### manual mode

my ($leader, $sync) = wait_until_whole($manual);
my %leaders = ($leader->{node}->port => 1);
create_table($leader);

# a dynamic setting, through patronictl edit-config, reaches every member
ok( patronictl(
		$manual, 'edit-config', '--force', '-q', '-p',
		"snowflake.max_lead='2min'"),
	'manual: patronictl edit-config sets snowflake.max_lead');
wait_for_setting($manual, 'snowflake.max_lead', '2min');
pass('manual: snowflake.max_lead is 2min on every member');

start_clients($manual);
wait_for_inserts($manual, 10);

# A switchover to the synchronous standby, whose clock is 60 s behind: it
# resumes above the mark it replayed, ahead of its clock (max_lead covers
# the difference).
my $behind = defined $SnowflakeTest::libfaketime;
if ($behind)
{
	set_clock($sync->{node}, -60);
	check_clock_offset($sync->{node}, -60,
		"manual: the clock of $sync->{name}, the synchronous standby, is 60 s behind"
	);
}
else
{
	note 'libfaketime is not installed: the switchover goes to a member '
	  . 'on the real clock';
}
($leader, $sync) = switchover($manual, $leader, $sync);
$leaders{ $leader->{node}->port } = 1;
wait_for_inserts($manual, 10);
if ($behind)
{
	is( $leader->{node}->safe_psql(
			'postgres', 'SELECT ids_ahead_of_clock > 0 FROM snowflake_status'),
		't',
		'manual: the new leader, its clock behind, issued IDs ahead of it');
	set_clock($leader->{node}, 0);
}

($leader, $sync) = kill_leader($manual, $leader);
$leaders{ $leader->{node}->port } = 1;
wait_for_inserts($manual, 10);
stop_clients($manual);

check_ids($manual, $leader);
is( $leader->{node}->safe_psql(
		'postgres',
		q{SELECT string_agg(DISTINCT port::text, ' ' ORDER BY port::text) FROM ids}
	),
	join(' ', sort keys %leaders),
	'manual: each leader in turn issued IDs');

#### registry mode

($leader, $sync) = wait_until_whole($reg);
create_table($leader);
my ($pair) = wait_for_pair($leader->{node});
ok(defined $pair, "registry: the leader claims $pair");

start_clients($reg);
wait_for_inserts($reg, 10);

# A switchover: the old leader marks the claim idle at its clean shutdown,
# and the new one takes it at once.
($leader, $sync) = switchover($reg, $leader, $sync);
wait_for_inserts($reg, 10);
ok( $leader->{node}->log_contains(
		'claimed snowflake worker id \d+ of datacenter 5 from the registry'),
	"registry: $leader->{name} claimed the worker id after the switchover");
ok( !$leader->{node}->log_contains(
		'the snowflake registry refused this server\'s claim'),
	'without being refused');

# A failover: the killed leader's claim passes once its promise has passed,
# and meanwhile the new leader refuses, saying so.
my $killed = $leader;
my $killed_version = registry_claim($registry, $pair, 'version');
($leader, $sync) = kill_leader($reg, $leader);
wait_for_inserts($reg, 10);
stop_clients($reg);
my ($refusal) = grep { /the registry refused this server's claim/ }
  map { split /\n/, slurp_file($_) } @{ $reg->{client_logs} };
like(
	$refusal // '',
	qr/DETAIL:  Worker id \d+ of datacenter 5 is held by another start of this server's login: system -?\d+ \([^:]*:${\ $killed->{node}->port }, .*\), holding it since .* with IDs up to .*\. Unless it extends its claim again, the claim passes to this server in about \d+ ms\. HINT:  This is expected after a failover or a crash restart: the claim of the previous start passes once the time it promised has passed\./,
	'registry: until then the new leader refuses, and says who holds the claim, that this is expected after a failover, and when generation resumes'
);
ok( $leader->{node}->log_contains(
		'the snowflake registry refused this server\'s claim'),
	'registry: the new leader\'s log says so too');

check_ids($reg, $leader);
is( $leader->{node}->safe_psql(
		'postgres', q{
SELECT string_agg(DISTINCT p.datacenter_id || '|' || p.worker_id, ' ')
FROM ids, snowflake_parse(id) p}),
	$pair,
	"registry: every member generated with the one claim, $pair");
is( $registry->safe_psql(
		'postgres',
		"SELECT count(*) FROM snowflake_registry.status WHERE owner = '$login'"),
	'1',
	'registry: the registry holds one claim for the three members');
my ($port, $version, $passed) = split /\|/,
  registry_claim($registry, $pair, 'port, version, claimed_at > floor');
is($port, $leader->{node}->port, 'registry: the claim is the new leader\'s');
cmp_ok($version, '>', $killed_version,
	'registry: taken over from the killed leader, as a new version');
is($passed, 't',
	'registry: once the killed leader\'s promise, the new floor, had passed');

done_testing();
