
# Copyright (c) 2026, the snowflake authors

=pod

=head1 NAME

PatroniTest - helpers for the snowflake TAP tests that run Patroni clusters

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use PatroniTest;

  my $missing = patroni_missing('runs a Patroni cluster');
  plan skip_all => $missing if $missing;
  start_etcd();
  my $cluster = patroni_cluster('ha', static => { ... });
  start_member($_) foreach @{ $cluster->{members} };
  my ($leader, $sync) = wait_until_whole($cluster);
  patronictl($cluster, 'switchover', ...);

=head1 DESCRIPTION

t/043_patroni.pl (the generator in HA groups) and t/045_registry_patroni.pl
(the registry as an HA group) both run groups of three members under
Debian's Patroni, with an etcd of their own on loopback, configured as
docs/ha.md says.  This module starts etcd, writes each member's Patroni
configuration, starts the members and waits on Patroni's REST API until a
cluster is whole; its END block stops every member and etcd, after the
test's own END has stopped what drives them.

Each member is a PostgreSQL::Test::Cluster node that Patroni initialises
(its port, socket directory, data directory and log file) and starts; the
node object is used only for those names and to run queries.

=cut

package PatroniTest;

use strict;
use warnings;

use Exporter 'import';
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(
  patroni_missing
  start_etcd
  patroni_cluster
  start_member
  cluster_state
  member_named
  wait_until_whole
  patronictl
  postmaster_pid
);

# the programs, where Debian installs them or on the PATH
my %program;
foreach my $name (qw(patroni patronictl etcd))
{
	($program{$name}) =
	  grep { -x $_ } map { "$_/$name" } split(/:/, $ENV{PATH}), '/usr/bin';
}

my $user    = getpwuid($<);
my $http    = HTTP::Tiny->new(timeout => 5);
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

# Everything this module starts, for END to stop: Patroni members, etcd.
my @members;
my $etcd;
my $etcd_port;

=pod

=head1 FUNCTIONS

=over

=item patroni_missing(what)

The reason to skip a test that "what" (a phrase such as "runs a Patroni
cluster") where Patroni or etcd is not installed, or undef where both are.

=cut

sub patroni_missing
{
	my ($what) = @_;
	my @missing = grep { !defined $program{$_} } sort keys %program;
	return undef unless @missing;
	return "@missing not installed (Debian's packages \"patroni\" and "
	  . "\"etcd-server\"): this test $what";
}

=pod

=item start_etcd()

Start an etcd of one member on loopback, its data in a temporary directory
and its output in etcd.log beside the test's logs, and wait until it
reports itself healthy.

=cut

sub start_etcd
{
	my $peer_port = PostgreSQL::Test::Cluster::get_free_port();
	my $data_dir  = PostgreSQL::Test::Utils::tempdir('etcd');

	$etcd_port = PostgreSQL::Test::Cluster::get_free_port();
	open my $log, '>>', "$PostgreSQL::Test::Utils::log_path/etcd.log"
	  or die "could not open etcd's log: $!";
	$etcd = IPC::Run::start(
		[
			$program{etcd},
			'--name'                  => 'etcd',
			'--data-dir'              => $data_dir,
			'--listen-client-urls'    => "http://127.0.0.1:$etcd_port",
			'--advertise-client-urls' => "http://127.0.0.1:$etcd_port",
			'--listen-peer-urls'      => "http://127.0.0.1:$peer_port",
			'--initial-advertise-peer-urls' => "http://127.0.0.1:$peer_port",
			'--initial-cluster'       => "etcd=http://127.0.0.1:$peer_port",
			'--initial-cluster-token' => 'snowflake-test'
		],
		'<', '/dev/null', '>', $log, '2>', $log);

	my $deadline = time() + $timeout;
	until (
		($http->get("http://127.0.0.1:$etcd_port/health")->{content} // '')
		=~ /"health":\s*"true"/)
	{
		die "etcd did not become healthy; see etcd.log" if time() > $deadline;
		usleep(100_000);
	}
	note "etcd runs on 127.0.0.1:$etcd_port";
	return;
}

# a YAML single-quoted string
sub yaml_quote
{
	my ($value) = @_;
	return "'" . ($value =~ s/'/''/gr) . "'";
}

# The Patroni configuration of one member: what docs/ha.md gives, on
# loopback, with short timings for a test (Patroni's defaults are a ttl of
# 30 s and a loop of 10 s), synchronous_mode, and a failover at once after a
# crash of the leader's postmaster (primary_start_timeout 0; by default
# Patroni restarts it in place first).  fsync off, as in the other tests:
# nothing here crashes the machine.
sub patroni_config
{
	my ($cluster, $member) = @_;
	my $node   = $member->{node};
	my $strict = $cluster->{strict} ? "    synchronous_mode_strict: true\n" : '';
	my $static = join '',
	  map { "    $_: " . yaml_quote($cluster->{static}{$_}) . "\n" }
	  sort keys %{ $cluster->{static} };
	my $dynamic = join '',
	  map { "        $_: " . yaml_quote($cluster->{dynamic}{$_}) . "\n" }
	  sort keys %{ $cluster->{dynamic} };
	$dynamic = "      parameters:\n$dynamic" if $dynamic;
	my ($port, $rest_port) = ($node->port, $member->{rest_port});
	my ($data_dir, $basedir, $host) =
	  ($node->data_dir, $node->basedir, $node->host);

	return <<"EOF";
scope: $cluster->{scope}
name: $member->{name}
restapi:
  listen: 127.0.0.1:$rest_port
  connect_address: 127.0.0.1:$rest_port
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    synchronous_mode: true
${strict}    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: true
$dynamic  initdb:
    - encoding: UTF8
postgresql:
  listen: 127.0.0.1:$port
  connect_address: 127.0.0.1:$port
  data_dir: $data_dir
  bin_dir: $member->{bin_dir}
  pgpass: $basedir/pgpass
  authentication:
    superuser:
      username: $user
    replication:
      username: $user
    rewind:
      username: $user
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: '$host'
    fsync: 'off'
    shared_buffers: 16MB
    log_min_messages: log
$static
EOF
}

=pod

=item patroni_cluster(scope, %params)

A new cluster of three members, named scope1 to scope3, not started; start
the etcd first.  Parameters: static, the settings of every member's
postgresql.parameters; dynamic, those of bootstrap.dcs (which patronictl
edit-config changes later); strict, true for synchronous_mode_strict;
bin_dir, a function of the member's node that returns the directory
Patroni runs the server's programs from (by default pg_config's bindir).
Returns the cluster: its scope, its members (name, node, rest_port, config)
and conninfo, a multi-host connection string to the database postgres of
whichever member accepts writes.

=cut

sub patroni_cluster
{
	my ($scope, %params) = @_;
	my $bindir = `pg_config --bindir`;
	chomp $bindir;
	die "no initdb in \"$bindir\", the bindir of pg_config"
	  unless -x "$bindir/initdb";

	my $cluster = {
		scope   => $scope,
		static  => $params{static} // {},
		dynamic => $params{dynamic} // {},
		strict  => $params{strict},
		members => []
	};
	foreach my $i (1 .. 3)
	{
		my $node   = PostgreSQL::Test::Cluster->new("${scope}$i");
		my $member = {
			name      => "${scope}$i",
			node      => $node,
			rest_port => PostgreSQL::Test::Cluster::get_free_port(),
			config    => $node->basedir . '/patroni.yml',
			bin_dir   => $params{bin_dir} ? $params{bin_dir}->($node) : $bindir
		};
		append_to_file($member->{config}, patroni_config($cluster, $member));
		push @{ $cluster->{members} }, $member;
	}
	$cluster->{conninfo} =
	    'host='
	  . join(',', ('127.0.0.1') x 3)
	  . ' port='
	  . join(',', map { $_->{node}->port } @{ $cluster->{members} })
	  . ' dbname=postgres target_session_attrs=read-write connect_timeout=2';
	return $cluster;
}

=pod

=item start_member(member)

Start a member's Patroni, its output and its server's in the node's log
file.

=cut

sub start_member
{
	my ($member) = @_;
	open my $log, '>>', $member->{node}->logfile
	  or die "could not open " . $member->{node}->logfile . ": $!";
	# stdin from /dev/null, as a service has it: a backend whose wait for a
	# synchronous standby ends with the postmaster's death reads its next
	# command from stdin, and would hold on to the server's shared memory
	# while stdin stays open
	$member->{harness} =
	  IPC::Run::start([ $program{patroni}, $member->{config} ],
		'<', '/dev/null', '>', $log, '2>', $log);
	push @members, $member;
	return;
}

=pod

=item cluster_state(cluster)

The cluster as Patroni's REST API shows it (GET /cluster), or undef.

=cut

sub cluster_state
{
	my ($cluster) = @_;
	foreach my $member (@{ $cluster->{members} })
	{
		my $response =
		  $http->get("http://127.0.0.1:$member->{rest_port}/cluster");
		next unless $response->{success};
		my $state = eval { decode_json($response->{content}) };
		return $state if $state;
	}
	return undef;
}

=pod

=item member_named(cluster, name)

The member of that name.

=cut

sub member_named
{
	my ($cluster, $name) = @_;
	my ($member) = grep { $_->{name} eq $name } @{ $cluster->{members} };
	die "no member $name" unless $member;
	return $member;
}

=pod

=item wait_until_whole(cluster, [not_leader => name])

Wait until the cluster is whole: a leader that accepts writes, unlike the
one named by not_leader, a synchronous standby, and every member running
on the leader's timeline.  Returns the leader and the synchronous standby.

=cut

sub wait_until_whole
{
	my ($cluster, %params) = @_;
	my $deadline = time() + $timeout;
	my $seen     = '';
	while (time() < $deadline)
	{
		my $state = cluster_state($cluster);
		if ($state)
		{
			my @m = @{ $state->{members} };
			$seen = join ', ', map {
				"$_->{name} $_->{role} $_->{state} tl "
				  . ($_->{timeline} // '?')
			} @m;
			my ($leader) = grep { $_->{role} eq 'leader' } @m;
			my ($sync)   = grep { $_->{role} eq 'sync_standby' } @m;
			if (   @m == 3
				&& $leader
				&& $sync
				&& (!defined $params{not_leader}
					|| $leader->{name} ne $params{not_leader})
				&& !grep {
					$_->{state} !~ /^(running|streaming)$/
					  || ($_->{timeline} // -1) !=
					  ($leader->{timeline} // -2)
				} @m)
			{
				my $leader_member = member_named($cluster, $leader->{name});
				my $writable      = $leader_member->{node}->safe_psql(
					'postgres',
					'SELECT NOT pg_is_in_recovery()',
					on_error_die => 0);
				if (($writable // '') eq 't')
				{
					note "cluster $cluster->{scope}: $seen";
					return ($leader_member,
						member_named($cluster, $sync->{name}));
				}
			}
		}
		usleep(200_000);
	}
	die "cluster $cluster->{scope} did not become whole; last seen: $seen";
}

=pod

=item patronictl(cluster, args...)

Run patronictl with the configuration of the cluster's first member; its
output goes to the test's log.  Returns true if it succeeded.

=cut

sub patronictl
{
	my ($cluster, @args) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(
		[
			$program{patronictl}, '-c',
			$cluster->{members}[0]{config}, @args
		],
		'<', \undef, '>', \$out, '2>', \$err);
	note "patronictl @args: $out$err";
	return $ok;
}

=pod

=item postmaster_pid(member)

The process id in the member's postmaster.pid.  A file caught while the
postmaster writes it is read again, up to the default timeout; then this
dies rather than return something that is not a process id.

=cut

sub postmaster_pid
{
	my ($member) = @_;
	my $pidfile = $member->{node}->data_dir . '/postmaster.pid';
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (1)
	{
		if (open my $fh, '<', $pidfile)
		{
			my $pid = <$fh> // '';
			close $fh;
			chomp $pid;
			return $pid if $pid =~ /^[0-9]+$/;
		}
		die "no process id in $pidfile" if time() > $deadline;
		usleep(50_000);
	}
}

=pod

=back

=cut

# Stop Patroni (which stops its server), then etcd; a server whose Patroni
# did not stop it is stopped with pg_ctl.  A test's own END, defined after
# this one, runs first and stops what it drove against the members.
END
{
	local $?;
	$_->{harness}->signal('TERM') foreach @members;
	foreach my $member (@members)
	{
		$member->{harness}->kill_kill(grace => 60);
		my $data_dir = $member->{node}->data_dir;
		system($member->{bin_dir} . '/pg_ctl',
			'-D', $data_dir, '-m', 'immediate', 'stop')
		  if -e "$data_dir/postmaster.pid";
	}
	$etcd->kill_kill(grace => 10) if $etcd;
}

1;
