
# Copyright (c) 2026, the snowflake authors

# A registry in high availability: the registry itself is a Patroni cluster
# of three members with synchronous_mode, set up as docs/ha.md says ("A
# registry in high availability", and the roles of docs/fleet.md's setup
# block), while three plain servers, each with a login of its own, claim
# their worker ids from it through a multi-host connection string with
# target_session_attrs=read-write.  Two sessions on each server generate IDs
# while the registry's leader changes twice: once by patronictl switchover,
# once by kill -9 of its postmaster (Patroni fails over at once, with
# primary_start_timeout 0).  Each role change is a new epoch of the
# registry (a new timeline): every server logs that its IDs move above the
# new epoch's floor.  Then no ID may repeat across the three servers, every
# server's IDs must strictly increase (within a session, and every batch
# above every batch the server finished before it began), for each pair the
# servers that used it must have done so in disjoint ranges of ID time, and
# each server must end with a claim of its own login.  How long each server
# paused at each role change is printed as notes, not tested.
#
# The Patroni helpers are t/PatroniTest.pm's, as t/043_patroni.pl's, without
# the faked clock.
#
# SNOWFLAKE_REGISTRY_STRICT=1 adds synchronous_mode_strict, to compare what
# a role change costs with it.  Skipped where patroni or etcd is not
# installed (Debian's packages "patroni" and "etcd-server").

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
use Time::Local qw(timegm);

my $missing = patroni_missing('runs the registry as a Patroni cluster');
plan skip_all => $missing if $missing;

# the registry's lease (snowflake_registry.configure) and the servers'
# check-in interval
my $lease       = '5 s';
my $interval_ms = 200;

# synchronous_mode_strict, where asked for (not what docs/fleet.md advises)
my $strict = $ENV{SNOWFLAKE_REGISTRY_STRICT};

# Each server's two sessions insert this many IDs a batch, one batch a
# transaction, and sleep this long between batches.
my $sessions      = 2;
my $ids_per_batch = 10;
my $sleep_s       = 0.02;

my $new_epoch = qr/snowflake IDs move above the floor of the registry's new epoch/;

# The sessions, for END to stop (PatroniTest's END then stops the Patroni
# members and etcd).
my @session_harnesses;
my $sessions_stopped = 0;
my @servers;

my $work = PostgreSQL::Test::Utils::tempdir('patroni');
start_etcd();

# Stop the sessions of a test that died before it stopped them.  The
# generating servers are stopped by PostgreSQL::Test::Cluster.
END
{
	local $?;
	unless ($sessions_stopped)
	{
		foreach my $server (@servers)
		{
			eval {
				$server->{node}->safe_psql('postgres',
					'INSERT INTO stop VALUES (clock_timestamp())');
			};
		}
		$_->kill_kill(grace => 5) foreach @session_harnesses;
	}
}

#### the registry

my $registry = patroni_cluster('registry', strict => $strict);
start_member($_) foreach @{ $registry->{members} };
my ($leader, $sync) = wait_until_whole($registry);

# docs/fleet.md's setup, on the leader: the standbys get it by replication
$leader->{node}->safe_psql('postgres', fleet_doc_registry_sql());
$leader->{node}->safe_psql('postgres',
	"SELECT snowflake_registry.configure(lease => '$lease')");

# every member, in a multi-host connection string
my $registry_hosts = $registry->{conninfo};

# the registry's epoch, read on its leader
sub registry_epoch
{
	my ($member) = @_;
	return $member->{node}
	  ->safe_psql('postgres', 'SELECT epoch FROM snowflake_registry.settings');
}

#### three servers, each with a login of its own

# Each server's sessions call generate(session): batches of IDs, one a
# transaction, each recorded with when it began and ended on the server's
# clock, a batch that failed with its error instead, until a row is in
# "stop".  n is the order of the IDs within a session.
my $generator_sql = qq{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE ids (session integer, batch integer, n bigserial, id bigint);
CREATE TABLE batches (session integer, batch integer, started timestamptz,
	ended timestamptz, PRIMARY KEY (session, batch));
CREATE TABLE failures (session integer, at timestamptz, sqlstate text,
	message text);
CREATE TABLE stop (at timestamptz);
CREATE PROCEDURE generate(s integer)
LANGUAGE plpgsql
AS \$\$
DECLARE
	b integer := 0;
	started timestamptz;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop) LOOP
		b := b + 1;
		started := clock_timestamp();
		BEGIN
			INSERT INTO ids (session, batch, id)
			SELECT s, b, snowflake_next_id() FROM generate_series(1, $ids_per_batch);
			INSERT INTO batches VALUES (s, b, started, clock_timestamp());
		EXCEPTION WHEN OTHERS THEN
			INSERT INTO failures VALUES (s, clock_timestamp(), SQLSTATE, SQLERRM);
		END;
		COMMIT;
		PERFORM pg_sleep($sleep_s);
	END LOOP;
END
\$\$;};

# a and b with max_lead 0, c with a lead that covers a role change's pause
my %max_lead = (a => '0', b => '0', c => '10s');
foreach my $name (qw(a b c))
{
	my $login = "server_$name";
	$leader->{node}->safe_psql('postgres', fleet_doc_login_sql($login));
	my $node = snowflake_node(
		"gen_$name",
		node_ids   => 0,
		extra_conf => qq{
snowflake.datacenter_id = 5
snowflake.registry = '$registry_hosts user=$login'
snowflake.registry_check_in_interval = $interval_ms
snowflake.max_lead = '$max_lead{$name}'
});
	$node->start;
	push @servers, { name => $name, login => $login, node => $node };
}
foreach my $server (@servers)
{
	my ($pair) = wait_for_pair($server->{node});
	ok(defined $pair,
		"server $server->{name} claims a worker id: " . ($pair // 'none'));
	$server->{first_pair} = $pair;
	$server->{node}->safe_psql('postgres', $generator_sql);
}
is( scalar(keys %{ { map { ($_->{first_pair} // '') => 1 } @servers } }),
	3, 'the three servers claim three worker ids');

foreach my $server (@servers)
{
	foreach my $session (1 .. $sessions)
	{
		push @session_harnesses,
		  IPC::Run::start(
			[
				'psql', '-X', '-q',
				'-v' => 'ON_ERROR_STOP=1',
				'-d' => $server->{node}->connstr('postgres'),
				'-c' => "CALL generate($session)"
			],
			'<', '/dev/null', '>', "$work/$server->{name}.$session.out",
			'2>&1');
	}
}

# the batches a server finished
sub batches
{
	my ($server) = @_;
	return $server->{node}
	  ->safe_psql('postgres', 'SELECT count(*) FROM batches');
}

# Wait until every server finished $more batches more.
sub wait_for_batches
{
	my ($more) = @_;
	foreach my $server (@servers)
	{
		my $target = batches($server) + $more;
		$server->{node}->poll_query_until('postgres',
			"SELECT count(*) >= $target FROM batches")
		  or die "server $server->{name} made no progress";
	}
	return;
}

wait_for_batches(50);

# The time of a server log line (log_line_prefix %m, in UTC), or undef
sub log_time
{
	my ($line) = @_;
	my ($y, $mo, $d, $h, $mi, $sec) =
	  $line =~ /^(\d+)-(\d+)-(\d+) (\d+):(\d+):(\d+(?:\.\d+)?) UTC /
	  or return undef;
	return timegm(int($sec), $mi, $h, $d, $mo - 1, $y) + $sec - int($sec);
}

# What a role change of the registry cost each server, as notes: when its
# registry worker lost the registry, reached it again and moved its IDs
# above the new epoch's floor (from its log since the change), the longest
# time between two batches (of any session) from a second before the
# change to $until, and the batches that failed meanwhile, by error.
sub note_pauses
{
	my ($what, $from, $until) = @_;
	foreach my $server (@servers)
	{
		my $node = $server->{node};
		my %seen;
		foreach my $line (split /\n/,
			slurp_file($node->logfile, $server->{log_offset} // -s $node->logfile))
		{
			my $at = log_time($line) // next;
			foreach (
				[ lost    => qr/the snowflake registry did not (?:extend|answer)/ ],
				[ reached => qr/the snowflake registry answers this server again/ ],
				[ moved   => $new_epoch ])
			{
				$seen{ $_->[0] } //= sprintf('%.1f', $at - $from)
				  if $line =~ $_->[1];
			}
		}
		my $gap = $node->safe_psql(
			'postgres', qq{
SELECT coalesce(round(extract(epoch FROM max(gap))::numeric, 2), 0) || ' s, ending '
	|| coalesce(round((extract(epoch FROM (array_agg(ended ORDER BY gap DESC NULLS LAST))[1]) - $from)::numeric, 1), 0)
	|| ' s after it'
FROM (SELECT ended, ended - lag(ended) OVER (ORDER BY ended) AS gap
	  FROM batches
	  WHERE ended BETWEEN to_timestamp($from - 1) AND to_timestamp($until)) s});
		my $failed = $node->safe_psql(
			'postgres', qq{
SELECT coalesce(string_agg(n || ' x ' || message, '; '), 'none')
FROM (SELECT message, count(*) AS n FROM failures
	  WHERE at BETWEEN to_timestamp($from - 1) AND to_timestamp($until)
	  GROUP BY message ORDER BY n DESC) s});
		note "$what: server $server->{name} (max_lead $max_lead{$server->{name}}): "
		  . join('',
			map { defined $seen{$_} ? "$_ at $seen{$_} s, " : '' }
			  qw(lost reached moved))
		  . "longest pause $gap; batches failed: $failed";
	}
	return;
}

# One role change of the registry's leader, done by $change: the registry
# becomes whole again under another leader, in a new epoch, and every
# server logs that its IDs move above the new epoch's floor, and goes on
# generating.  Returns the new leader and synchronous standby.
sub role_change
{
	my ($what, $change) = @_;
	my $epoch_before = registry_epoch($leader);
	$_->{log_offset} = -s $_->{node}->logfile foreach @servers;
	my $start = time();
	my $old   = $leader;
	$change->();
	my ($new_leader, $new_sync) =
	  wait_until_whole($registry, not_leader => $old->{name});
	note sprintf("%s: the registry is whole again %.1f s later, led by %s",
		$what, time() - $start, $new_leader->{name});
	foreach my $server (@servers)
	{
		my $logged =
		  eval { $server->{node}->wait_for_log($new_epoch, $server->{log_offset}) };
		ok($logged,
			"$what: server $server->{name} logs that its IDs move above the floor of the registry's new epoch"
		);
	}
	wait_for_batches(50);
	cmp_ok(registry_epoch($new_leader), '>', $epoch_before,
		"$what: the new leader is a new epoch of the registry");
	note_pauses($what, $start, time());
	return ($new_leader, $new_sync);
}

#### the role changes

note_pauses('before the role changes', time() - 5, time());

# A switchover: Patroni stops the leader cleanly and promotes the
# synchronous standby.
($leader, $sync) = role_change(
	'switchover',
	sub {
		ok( patronictl(
				$registry, 'switchover', '--leader', $leader->{name},
				'--candidate', $sync->{name}, '--force'),
			"patronictl switchover of the registry from $leader->{name} to $sync->{name}"
		);
	});

# A failover: kill -9 of the leader's postmaster; Patroni promotes the
# synchronous standby at once, and the old leader comes back as a replica.
($leader, $sync) = role_change(
	'failover',
	sub {
		signal_process('KILL', postmaster_pid($leader),
			"the postmaster of $leader->{name}");
		note "killed the postmaster of the registry's leader, $leader->{name}";
	});

#### the checks

foreach my $server (@servers)
{
	$server->{node}->safe_psql('postgres',
		'INSERT INTO stop VALUES (clock_timestamp())');
}
foreach my $harness (@session_harnesses)
{
	ok($harness->finish, 'a generating session ran to the end without an error');
}
$sessions_stopped = 1;
foreach my $server (@servers)
{
	my $out = join '', map { slurp_file("$work/$server->{name}.$_.out") }
	  1 .. $sessions;
	is($out, '', "the sessions of server $server->{name} printed nothing");
	is(join("\n", server_troubles($server->{node})),
		'', "no process of server $server->{name} crashed");
}

# Every server's IDs, batches and errors, in one place: on server a.
my $hub = $servers[0]{node};
$hub->safe_psql(
	'postgres', q{
CREATE TABLE all_ids (server text, session integer, batch integer, n bigint,
	id bigint);
CREATE TABLE all_batches (server text, session integer, batch integer,
	started timestamptz, ended timestamptz);});
foreach my $server (@servers)
{
	foreach my $table (qw(ids batches))
	{
		my $file = "$work/$server->{name}.$table.copy";
		append_to_file($file,
			$server->{node}->safe_psql('postgres',
				"COPY (SELECT '$server->{name}', * FROM $table) TO STDOUT")
			  . "\n");
		$hub->safe_psql('postgres', "\\copy all_$table FROM '$file'");
	}
}
note 'IDs generated: '
  . $hub->safe_psql(
	'postgres', q{
SELECT string_agg(server || ' ' || n, ', ' ORDER BY server)
FROM (SELECT server, count(*) AS n FROM all_ids GROUP BY server) s});

is($hub->safe_psql('postgres', 'SELECT count(*) - count(DISTINCT id) FROM all_ids'),
	'0', 'no ID repeats across the three servers');

check_strictly_increasing($hub, 'all_ids',
	"every session's IDs strictly increase",
	partition_by => 'server, session');

# Every batch's IDs lie above those of every batch its server finished
# before it began, whichever session ran them: a sweep in the order the
# batches began.
my $decreases = 0;
foreach my $server (@servers)
{
	my @batches = map { [ split /\|/ ] } split /\n/,
	  $hub->safe_psql(
		'postgres', qq{
SELECT extract(epoch FROM b.started), extract(epoch FROM b.ended),
	min(i.id), max(i.id)
FROM all_batches b JOIN all_ids i USING (server, session, batch)
WHERE b.server = '$server->{name}'
GROUP BY b.session, b.batch, b.started, b.ended});
	my @by_end = sort { $a->[1] <=> $b->[1] } @batches;
	my ($i, $max_before) = (0, undef);
	foreach my $batch (sort { $a->[0] <=> $b->[0] } @batches)
	{
		while ($i < @by_end && $by_end[$i][1] < $batch->[0])
		{
			$max_before = $by_end[$i][3]
			  if !defined $max_before || $by_end[$i][3] > $max_before;
			$i++;
		}
		if (defined $max_before && $batch->[2] <= $max_before)
		{
			diag "server $server->{name}: a batch began after IDs up to "
			  . "$max_before, and got $batch->[2]"
			  if $decreases++ < 5;
		}
	}
}
is($decreases, 0,
	"every batch's IDs lie above those of every batch its server finished before it began"
);

# The servers that used each pair did so in disjoint ranges of ID time.
$hub->safe_psql(
	'postgres', q{
CREATE TABLE holders AS
SELECT p.datacenter_id || '|' || p.worker_id AS pair, server,
	min(p.ts) AS first_ts, max(p.ts) AS last_ts
FROM all_ids, snowflake_parse(id) p
GROUP BY 1, 2;});
note 'pairs by server: '
  . $hub->safe_psql('postgres',
	q{SELECT string_agg(server || ' ' || pair, ', ' ORDER BY server, first_ts) FROM holders});
is( $hub->safe_psql(
		'postgres', q{
SELECT coalesce(string_agg(a.pair || ': ' || a.server || ' and ' || b.server, ', '), '')
FROM holders a JOIN holders b ON a.pair = b.pair AND a.server < b.server
WHERE a.first_ts <= b.last_ts AND b.first_ts <= a.last_ts}),
	'',
	'for each pair, the servers that used it did so in disjoint ranges of ID time'
);

# Each server ends with a claim of its own login, the one it generates with.
foreach my $server (@servers)
{
	my ($pair) = wait_for_pair($server->{node});
	my ($dc, $worker) = split /\|/, ($pair // '|');
	is( $leader->{node}->safe_psql(
			'postgres', qq{
SELECT string_agg(owner || ' ' || state, ', ')
FROM snowflake_registry.status
WHERE datacenter_id = 5 AND worker_id = $worker}),
		"$server->{login} held",
		"server $server->{name} generates with worker id $worker, held by its own login"
	);
}
is( $leader->{node}->safe_psql(
		'postgres', q{
SELECT string_agg(owner, ' ' ORDER BY owner) FROM snowflake_registry.status
WHERE state = 'held'}),
	'server_a server_b server_c',
	'the registry holds one live claim for each of the three logins, none other');

done_testing();
