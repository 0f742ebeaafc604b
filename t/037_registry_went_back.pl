
# Copyright (c) 2026, the snowflake authors

# The registry goes back in time, five ways, each crossed with the three
# things it can forget; no ID may repeat, and for each pair the IDs of its
# successive holders must lie in disjoint ranges of time, in the order in
# which the registry granted them.
#
# The six servers are shared by the five ways, one way after the other, each
# way with a registry and a datacenter of its own.
#
# The ways the registry goes back:
#   copy   a file copy of its data directory, taken while it runs
#          (pg_basebackup), copied back (stop, copy back, start);
#   dump   a pg_dump of the registry database, restored into the running
#          server with pg_restore --clean --if-exists, as a user restores a
#          database from its dump (the servers' connection strings stay as
#          they are, and so need no restart);
#   pitr   point-in-time recovery: the base backup, replayed from the WAL
#          archive to a restore point, in the registry's own data directory;
#   async  a failover to an asynchronous standby that stopped receiving WAL
#          at the backup point, while the old primary goes on acknowledging
#          for a moment ($moment) after the promotion;
#   sync   a synchronous standby stopped: every commit waits for it, the
#          waits are cancelled (the registry answers with a WARNING), and no
#          server may take such an answer; then the failover to that
#          standby, which never got those commits.
#
# What each way forgets, all three at once, on three pairs:
#   a claim      server n claims a pair after the backup point; after going
#                back, the pair is the lowest never claimed again, and a new
#                server b1 gets it;
#   an extension server a holds its pair from before the backup point and
#                extends it after; cut off from the registry (its registry
#                worker stopped with SIGSTOP), it issues IDs up to its newest
#                promise, which the registry forgot; an operator reassigns the
#                pair to server b2;
#   a successor  server s, cut off after the backup point, has its pair
#                reassigned to server t, which takes it above s's promise;
#                after going back the registry knows s as the holder again:
#                s comes back and goes on, while t, cut off too, issues up to
#                its own forgotten promise.
# The new holders t, b1 and b2 run with their clocks five minutes behind
# (libfaketime), and with a max_lead that lets them start above the floors
# the registry gives them at once; t's clock is set right after its takeover,
# so that its IDs reach its promise.  The holders cut off at the moment the
# registry goes back (a, n and t) generate until their promises run out.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

skip_without_libfaketime();

# the registry's lease, in seconds
my $lease = 3;

# the new holders' clocks, in seconds from the real one
my $behind = -300;

# how long the old primary of an asynchronous registry goes on acknowledging
# after its standby's promotion, in seconds: within the registry's margin
# (1 s), as docs/fleet.md's rule assumes of a failover (assumption 4)
my $moment = 0.5;

# IDs a batch
my $batch_size = 200;

# Every server: its registry worker extends every 200 ms, a max_lead covers
# a clock five minutes behind and the floors above it, and calls fail fast
# while the claim is not usable.
my $server_conf = qq{
snowflake.registry_check_in_interval = 200
snowflake.max_lead = '400s'
snowflake.max_clock_wait = 200
};

# every ID committed by any server of any way, to the servers that did
my %owners_of;

# the table of the way under way, on every server
my $table;

# a batch of IDs into the server's table, labelled with its holding; true
# if it committed, and psql's stderr
sub batch
{
	my ($node, $holding) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql(
		'postgres',
		"INSERT INTO $table SELECT snowflake_next_id(), '$holding' "
		  . "FROM generate_series(1, $batch_size)",
		stdout => \$stdout,
		stderr => \$stderr);
	return ($ret == 0, $stderr);
}

# n batches; the number that committed
sub generate
{
	my ($node, $holding, $n) = @_;
	my $ok = 0;
	foreach (1 .. $n)
	{
		$ok++ if (batch($node, $holding))[0];
	}
	return $ok;
}

# Batches on each [node, holding] in turn, each until its first refusal (its
# promise ran out), for at most $seconds (one round at least).  Returns, by
# node name, the batches that committed and the refusal.
sub generate_until_refused
{
	my ($seconds, @holdings) = @_;
	my (%ok, %refusal);
	my $end = time() + $seconds;
	do
	{
		foreach my $h (@holdings)
		{
			my ($committed, $stderr) = batch(@$h);
			if ($committed)
			{
				$ok{ $h->[0]->name }++;
			}
			else
			{
				$refusal{ $h->[0]->name } = $stderr;
			}
		}
		@holdings = grep { !exists $refusal{ $_->[0]->name } } @holdings;
	} while (@holdings && time() < $end);
	return (\%ok, \%refusal);
}

# Start a server for the way under way, and make its table of IDs, each
# with the holding it was issued under.
sub start_server
{
	my ($node) = @_;
	start_node($node);
	$node->safe_psql(
		'postgres', qq{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE $table (id bigint NOT NULL, holding text NOT NULL);});
	return;
}

# Cut a server off from the registry: its registry worker stops where it is
# (SIGSTOP), and its backends go on up to the promise they know.
my %stopped_worker;

sub cut_off_workers
{
	foreach my $node (@_)
	{
		my $pid = registry_worker_pid($node, wait => 1)
		  or die "no registry worker runs on " . $node->name;
		signal_process('STOP', $pid, 'the registry worker');
		$stopped_worker{ $node->name } = $pid;
		note "registry worker of " . $node->name . " ($pid) stopped";
	}
	return;
}

sub reconnect
{
	foreach my $node (@_)
	{
		my $pid = delete $stopped_worker{ $node->name };
		next unless defined $pid;
		signal_process('CONT', $pid, 'the registry worker');
		note "registry worker of " . $node->name . " ($pid) continued";
	}
	return;
}

# A promise recorded on the registry for a pair, as milliseconds since 1970,
# or undef where it has no such claim.
sub promise_ms
{
	my ($registry, $pair) = @_;
	my ($dc, $worker) = split /\|/, $pair;
	my $ms = $registry->safe_psql('postgres',
		"SELECT floor(extract(epoch FROM promise) * 1000)::bigint "
		  . "FROM snowflake_registry.claims "
		  . "WHERE datacenter_id = $dc AND worker_id = $worker");
	return $ms eq '' ? undef : $ms;
}

# Wait until a registry node has left recovery.
sub wait_for_primary
{
	my ($node) = @_;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $node->name . ' did not leave recovery';
	return;
}

# The servers' logins, each a server's name too: the old holders a, s and
# n, and the new holders t, b1 and b2.
my @logins = qw(a s n t b1 b2);

# A registry set up once, with the servers' logins, and stopped: each way's
# registry starts from a copy of it.
my $pristine;

# The registry nodes of a way, under its name: one, or a primary and a
# standby.  conninfo gives the connection string of the old holders (which
# were there before the registry went back), new_conninfo that of b1 and b2.
sub make_registry
{
	my ($way, %params) = @_;
	if (!$pristine)
	{
		$pristine = snowflake_registry(
			'pristine',
			lease      => "$lease s",
			init       => { allows_streaming => 1 },
			extra_conf => "max_connections = 40\n");
		registry_conninfo($pristine, $_) foreach @logins;
		$pristine->backup('pristine');
		$pristine->stop;
	}
	my $registry = PostgreSQL::Test::Cluster->new("${way}_registry");
	$registry->init_from_backup($pristine, 'pristine');
	$registry->enable_archiving if $params{archive};
	$registry->start;
	my %ctx = (registry => $registry, op => $registry);
	$ctx{conninfo} = sub { registry_nodes_conninfo($_[0], $registry) };
	$ctx{new_conninfo} = $ctx{conninfo};
	return \%ctx;
}

# A registry with a streaming standby: the servers name both, and write to
# the one that accepts writes.
sub make_replicated_registry
{
	my ($way) = @_;
	my $ctx = make_registry($way);
	my $primary = $ctx->{registry};
	$primary->backup('base');
	my $standby = PostgreSQL::Test::Cluster->new("${way}_standby");
	$standby->init_from_backup($primary, 'base', has_streaming => 1);
	$standby->start;
	$ctx->{standby} = $standby;
	$ctx->{conninfo} =
	  sub { registry_nodes_conninfo($_[0], $primary, $standby) };
	$ctx->{new_conninfo} = $ctx->{conninfo};
	return $ctx;
}

# The ways the registry goes back.  Each has a registry (setup), a backup
# point (backup) and the going back (back), which cuts off a, n and t (in
# $srv) at the last moment the old registry acknowledges their extensions.
my @ways = (
	{
		name  => 'copy',
		setup => sub { make_registry('copy') },
		backup => sub {
			my ($ctx) = @_;
			$ctx->{registry}->backup('copy');
		},
		back => sub {
			my ($ctx, $srv, $round) = @_;
			my $registry = $ctx->{registry};
			cut_off_workers(@$srv{qw(a n t)});
			$registry->stop('fast');
			$round->();
			restore_data_dir($registry, $registry->backup_dir . '/copy');
			$round->();
			$registry->start;
		},
	},
	{
		name  => 'dump',
		setup => sub { make_registry('dump') },
		backup => sub {
			my ($ctx) = @_;
			my $registry = $ctx->{registry};
			$ctx->{dump} = $registry->basedir . '/registry.dump';
			command_ok(
				[
					'pg_dump', '-Fc', '-f', $ctx->{dump}, '-d',
					$registry->connstr('postgres')
				],
				'dump: pg_dump dumps the registry database');
		},
		back => sub {
			my ($ctx, $srv) = @_;
			my $registry = $ctx->{registry};
			cut_off_workers(@$srv{qw(a n t)});
			my ($stdout, $stderr);
			my $ok = IPC::Run::run(
				[
					'pg_restore', '--clean', '--if-exists', '-d',
					$registry->connstr('postgres'), $ctx->{dump}
				],
				'>', \$stdout, '2>', \$stderr);
			ok($ok,
				'dump: pg_restore --clean --if-exists restores the dump into the running registry'
			) or diag "pg_restore: $stderr";
		},
	},
	{
		name  => 'pitr',
		setup => sub {
			my $ctx = make_registry('pitr', archive => 1);
			$ctx->{registry}->backup('base');
			return $ctx;
		},
		backup => sub {
			my ($ctx) = @_;
			$ctx->{registry}
			  ->safe_psql('postgres', "SELECT pg_create_restore_point('way_back')");
		},
		back => sub {
			my ($ctx, $srv, $round) = @_;
			my $registry = $ctx->{registry};
			cut_off_workers(@$srv{qw(a n t)});
			# the registry is lost; what it archived remains
			my $walfile = $registry->safe_psql('postgres',
				'SELECT pg_walfile_name(pg_switch_wal())');
			$registry->poll_query_until('postgres',
				"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
			  or die 'the registry did not archive its WAL';
			$registry->stop('immediate');
			$round->();
			restore_data_dir($registry, $registry->backup_dir . '/base');
			my $archive = $registry->archive_dir;
			$registry->append_conf(
				'postgresql.conf', qq{
restore_command = 'cp "$archive/%f" "%p"'
recovery_target_name = 'way_back'
recovery_target_action = 'promote'
});
			$registry->set_recovery_mode;
			$round->();
			$registry->start;
			wait_for_primary($registry);
		},
	},
	{
		name  => 'async',
		setup => sub {
			my $ctx = make_replicated_registry('async');
			# b1 starts on the standby, once it is promoted
			$ctx->{new_conninfo} =
			  sub { registry_nodes_conninfo($_[0], $ctx->{standby}) };
			return $ctx;
		},
		backup => sub {
			my ($ctx) = @_;
			my $standby = $ctx->{standby};
			$ctx->{registry}->wait_for_catchup($standby);
			$standby->safe_psql('postgres',
				"ALTER SYSTEM SET primary_conninfo = ''; SELECT pg_reload_conf()");
			$standby->poll_query_until('postgres',
				'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
			  or die 'the standby did not stop receiving WAL';
		},
		back => sub {
			my ($ctx, $srv, $round) = @_;
			my ($old, $new) = @$ctx{qw(registry standby)};
			# b1 waits for the standby to accept writes; the first call
			# there starts its epoch
			start_server($srv->{b1});
			$new->promote;
			my $promoted = time();
			# meanwhile a, n and t extend their claims on the old primary,
			# for the moment and no longer (the rule's assumption 4), however
			# slowly the machine runs: the rest comes after
			my $left = $promoted + $moment - time();
			note sprintf('the old primary acknowledges for %.2f s more',
				$left);
			usleep(1_000_000 * $left) if $left > 0;
			cut_off_workers(@$srv{qw(a n t)});
			$old->stop('immediate');
			wait_for_primary($new);
			$ctx->{op} = $new;
			$ctx->{reassign_b2}->();
			start_server($srv->{b2});
			$ctx->{b_started} = { b1 => 1, b2 => 1 };
		},
	},
	{
		name  => 'sync',
		setup => sub {
			my $ctx = make_replicated_registry('sync');
			my $primary = $ctx->{registry};
			$primary->wait_for_catchup($ctx->{standby});
			$primary->safe_psql('postgres',
				"ALTER SYSTEM SET synchronous_standby_names = '*'; SELECT pg_reload_conf()"
			);
			$primary->poll_query_until('postgres',
				"SELECT sync_state = 'sync' FROM pg_stat_replication")
			  or die 'the standby did not become synchronous';
			$ctx->{unacknowledged} = 1;
			return $ctx;
		},
		backup => sub {
			my ($ctx) = @_;
			$ctx->{registry}->wait_for_catchup($ctx->{standby});
			$ctx->{standby}->stop('fast');
		},
		back => sub {
			my ($ctx, $srv) = @_;
			my ($old, $new) = @$ctx{qw(registry standby)};
			cut_off_workers(@$srv{qw(a n t)});
			$old->stop('immediate');
			$new->start;
			$new->promote;
			wait_for_primary($new);
			$ctx->{op} = $new;
		},
	});

# On the sync way's primary, while its standby is stopped: cancel every
# wait for synchronous replication, as an operator would, so that the
# registry answers with a WARNING.  (The statement_timeout that the registry
# worker sets does not end such a wait: it comes at commit, after the
# statement.  The worker gives up on its own timeout, and the registry's
# backend waits on, holding the claim's row, until it is cancelled.)
sub cancel_sync_waits
{
	my ($registry) = @_;
	return $registry->safe_psql(
		'postgres', q{
SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
WHERE wait_event = 'SyncRep'});
}

# The servers, made once and given to each way in turn.
my %srv = map {
	$_ => snowflake_node($_, node_ids => 0, extra_conf => $server_conf)
} @logins;
my %new_holder = map { $_ => 1 } qw(t b1 b2);

my $datacenter = 0;

foreach my $way (@ways)
{
	my $name    = $way->{name};
	my $started = time();
	$datacenter++;
	$table = "ids_$name";
	note "way $name: datacenter $datacenter";
	my $ctx = $way->{setup}->();

	# The servers' logins are made on the registry before the backup point.
	foreach my $login (@logins)
	{
		registry_conninfo($ctx->{registry}, $login);
		my $conninfo =
		  $login =~ /^b/
		  ? $ctx->{new_conninfo}->($login)
		  : $ctx->{conninfo}->($login);
		$srv{$login}->append_conf('postgresql.conf',
			"snowflake.datacenter_id = $datacenter\n"
			  . "snowflake.registry = '$conninfo'");
		set_clock($srv{$login}, $new_holder{$login} ? $behind : 0);
	}
	# the servers that must not take an unacknowledged answer have logins
	# that hide warnings from their sessions, as any login may set: their
	# workers see the warning all the same
	$ctx->{registry}->safe_psql('postgres',
		'ALTER ROLE n SET client_min_messages = error; '
		  . 'ALTER ROLE t SET client_min_messages = error')
	  if $ctx->{unacknowledged};
	my %pair;

	# Before the backup point: a and s hold a pair each.
	foreach my $login (qw(a s))
	{
		start_server($srv{$login});
		($pair{$login}) = wait_for_pair($srv{$login});
	}
	generate($srv{a}, 'a',  3);
	generate($srv{s}, 's1', 3);
	$way->{backup}->($ctx);

	# After it: s is cut off, its pair reassigned to t; n claims a pair.
	cut_off_workers($srv{s});
	my ($dc, $worker_s) = split /\|/, $pair{s};
	if ($ctx->{unacknowledged})
	{
		# The operator's commit waits for the standby too, until the wait
		# is cancelled.
		my ($stdout, $stderr);
		my $operator = start_waiter($ctx->{op}, 'operator', \$stdout,
			\$stderr,
			"SELECT snowflake_registry.reassign($dc, $worker_s, 't')");
		while ($operator->pumpable)
		{
			cancel_sync_waits($ctx->{registry});
			usleep(100_000);
			$operator->pump_nb;
		}
		$operator->finish;
		like(
			$stderr,
			qr/WARNING:  (?:01000: )?canceling wait for synchronous replication/,
			"$name: the operator's reassignment commits, but not on the stopped standby");
	}
	else
	{
		$ctx->{op}->safe_psql('postgres',
			"SELECT snowflake_registry.reassign($dc, $worker_s, 't')");
	}
	start_server($srv{n});
	start_server($srv{t});
	check_clock_offset($srv{t}, $behind,
		"$name: the clock of t, the new holder of s's pair, is five minutes behind"
	);

	if ($ctx->{unacknowledged})
	{
		# Every commit waits for the stopped standby; the waits are
		# cancelled and answered with a WARNING.  No server takes such an
		# answer: n and t never generate, and a stops at the promise
		# acknowledged before the standby stopped.
		my (%got, @errors, $a_refusal);
		my $end = time() + $lease + 3;
		while (time() < $end)
		{
			cancel_sync_waits($ctx->{registry});
			foreach my $login (qw(n t))
			{
				my ($pair, $err) = next_pair($srv{$login});
				$got{$login}++ if defined $pair;
				push @errors, $err unless defined $pair;
			}
			my ($committed, $err) = batch($srv{a}, 'a');
			$a_refusal //= $err unless $committed;
			generate_until_refused(0, [ $srv{s}, 's1' ]);
		}
		ok(!$got{n},
			"$name: n, whose claim was never acknowledged, generates nothing");
		ok(!$got{t},
			"$name: t, whose takeover was never acknowledged, generates nothing");
		like(
			$a_refusal // '',
			qr/the ID would pass the time the registry recorded for this server's claim/,
			"$name: a stops at the promise acknowledged before the standby stopped"
		);
		my $warned = qr/The registry's answer came with a warning, so its commit may not be durable: canceling wait for synchronous replication/;
		ok( scalar(grep { $_ =~ $warned } @errors)
			  || scalar(grep { $srv{$_}->log_contains($warned) } qw(a n t)),
			"$name: servers answered with the registry's WARNING do not take the answer"
		) or diag "the last refusals: " . join("\n", grep { defined } @errors[ -2, -1 ]);
		# n's pair would have been the lowest never claimed, after a's and s's
		$pair{n} = "$dc|2";
		$pair{t} = $pair{s};
	}
	else
	{
		($pair{n}) = wait_for_pair($srv{n});
		generate($srv{n}, 'n', 3);
		# s runs up to its promise; then its pair passes to t, above it
		generate_until_refused(30, [ $srv{s}, 's1' ]);
		($pair{t}) = wait_for_pair($srv{t});
		is($pair{t}, $pair{s}, "$name: t takes over s's pair");
		generate($srv{t}, 't', 3);
		# t's clock set right, so that its IDs reach its promise
		set_clock($srv{t}, 0);
		check_clock_offset($srv{t}, 0, "$name: t's clock is set right");
		generate($srv{t}, 't', 3);
		generate($srv{a}, 'a', 3);
		generate($srv{n}, 'n', 3);
	}

	# The registry goes back.  a, n and t, cut off when the registry last
	# acknowledged them, generate until their promises run out, also while
	# the registry is being restored.
	my @cut = ([ $srv{a}, 'a' ], [ $srv{n}, 'n' ], [ $srv{t}, 't' ]);
	my %after;
	my $round = sub {
		my ($ok) = generate_until_refused(0, @cut);
		$after{$_} += $ok->{$_} foreach keys %$ok;
	};
	# b2 gets a's pair; what the registry knows of it just before is kept
	my ($dc_a, $worker_a) = split /\|/, $pair{a};
	my $known_a;
	$ctx->{reassign_b2} = sub {
		$known_a = promise_ms($ctx->{op}, $pair{a});
		$ctx->{op}->safe_psql('postgres',
			"SELECT snowflake_registry.reassign($dc_a, $worker_a, 'b2')");
	};
	$way->{back}->($ctx, \%srv, $round);
	my ($ok) = generate_until_refused(3 * $lease, @cut);
	$after{$_} += $ok->{$_} foreach keys %$ok;
	note "$name: after the registry went back, "
	  . join(', ',
		map { "$_ committed " . ($after{$_} // 0) . " batches" } qw(a n t));

	# The new holders: b2 gets a's pair, reassigned; b1 the lowest pair
	# never claimed, n's; s comes back to the registry, which knows it as the
	# holder of its pair again.
	$ctx->{reassign_b2}->() unless defined $known_a;
	my $newest_a =
	  $srv{a}->safe_psql('postgres', "SELECT max(id) FROM $table");
	if ($ctx->{unacknowledged})
	{
		cmp_ok(id_unix_ms($newest_a), '<=', $known_a,
			"$name: a issued no ID past the promise the registry kept");
	}
	else
	{
		cmp_ok(id_unix_ms($newest_a), '>', $known_a,
			"$name: a issued IDs under a newer promise, which the registry forgot"
		);
	}
	foreach my $login (qw(b1 b2))
	{
		start_server($srv{$login}) unless $ctx->{b_started}{$login};
		check_clock_offset($srv{$login}, $behind,
			"$name: the clock of $login, a new holder, is five minutes behind");
		my ($pair) = wait_for_pair($srv{$login});
		my $of = $login eq 'b1' ? 'n' : 'a';
		is($pair, $pair{$of}, "$name: $login gets the pair of $of");
	}
	reconnect($srv{s});
	my ($pair_s) = wait_for_pair($srv{s});
	is($pair_s, $pair{s}, "$name: s generates with its pair again");
	foreach (1 .. 3)
	{
		generate($srv{b1}, 'b1', 1);
		generate($srv{b2}, 'b2', 1);
		generate($srv{s},  's2', 1);
	}
	reconnect(@srv{qw(a n t)});

	# The check: no ID twice, and for each pair the holders' IDs in
	# disjoint ranges of time, in the order of their grants.
	my %holding;    # label => [pair, min id, max id, count] for each pair
	foreach my $login (@logins)
	{
		my $node = $srv{$login};
		foreach my $row (
			split /\n/,
			$node->safe_psql(
				'postgres', qq{
SELECT holding, p.datacenter_id, p.worker_id, min(id), max(id), count(*)
FROM $table, snowflake_parse(id) p GROUP BY 1, 2, 3 ORDER BY 1, 2, 3}))
		{
			my ($label, $dc_id, $worker_id, $min, $max, $count) = split /\|/,
			  $row;
			push @{ $holding{$label} },
			  [ "$dc_id|$worker_id", $min, $max, $count ];
		}
		push @{ $owners_of{$_} }, "$name $login"
		  foreach split /\n/,
		  $node->safe_psql('postgres', "SELECT id FROM $table");
		$node->stop('fast');
	}

	my %expected = (
		$pair{a} => [qw(a b2)],
		$pair{s} => [qw(s1 t s2)],
		$pair{n} => [qw(n b1)]);
	my %label_pair;
	foreach my $pair (keys %expected)
	{
		$label_pair{$_} = $pair foreach @{ $expected{$pair} };
	}
	foreach my $label (sort keys %holding)
	{
		my @pairs = map { $_->[0] } @{ $holding{$label} };
		is("@pairs", $label_pair{$label},
			"$name: the IDs of holding $label are all of pair $label_pair{$label}"
		);
	}
	foreach my $label (qw(a s1 s2 b1 b2), $ctx->{unacknowledged} ? () : qw(n t))
	{
		ok($holding{$label}, "$name: holding $label generated IDs");
	}
	foreach my $pair (sort keys %expected)
	{
		my @ranges =
		  map { [ $_, @{ $holding{$_}[0] }[ 1, 2, 3 ] ] }
		  grep { $holding{$_} } @{ $expected{$pair} };
		note "$name: pair $pair: "
		  . join(
			', ',
			map {
				sprintf('%s %d IDs in ms %d..%d',
					$_->[0], $_->[3], id_ms($_->[1]), id_ms($_->[2]))
			} @ranges);
		foreach my $i (1 .. $#ranges)
		{
			my ($prev, $next) = @ranges[ $i - 1, $i ];
			cmp_ok(id_ms($prev->[2]), '<', id_ms($next->[1]),
				"$name: pair $pair: every ID of $next->[0] lies in a later millisecond than every ID of $prev->[0]"
			);
		}
	}
	$_->stop('fast') foreach grep { defined $_ && defined $_->{_pid} }
	  @$ctx{qw(registry standby)};
	note sprintf('way %s took %.1f s', $name, time() - $started);
}

foreach my $login (@logins)
{
	my @troubles = server_troubles($srv{$login});
	is_deeply(\@troubles, [],
		"no server process of $login exited abnormally");
}

my @repeated = grep { @{ $owners_of{$_} } > 1 } keys %owners_of;
diag "ID $_ committed by " . join(', ', @{ $owners_of{$_} })
  foreach (sort { $a <=> $b } @repeated)[ 0 .. ($#repeated < 4 ? $#repeated : 4) ];
is(scalar(@repeated), 0,
	'no ID was committed twice, by one server or two, in '
	  . scalar(keys %owners_of)
	  . ' IDs');

done_testing();
