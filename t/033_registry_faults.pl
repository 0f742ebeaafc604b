
# Copyright (c) 2026, the snowflake authors

# A seeded, randomized fault run of registry mode, checked against the
# registry's own history.  The registry is a primary with a streaming
# standby, both under libfaketime on one clock.  Three servers in datacenter
# 5 claim their worker ids there, naming both registry nodes (the one that
# accepts writes is used): an original primary A, its pg_basebackup clone C
# started as a primary beside it (same login, so the registry takes it for
# another start of A), and a fresh server F, with a login of its own.
#
# The test generates batches of IDs on A, C and F, one psql statement at a
# time, while each cycle injects a fault chosen at random: registry outages
# shorter and longer than the lease, copies of the registry taken while it
# runs (pg_basebackup) and restores of one of them (stop, copy back, start),
# failovers to the registry's standby (often after cutting its replication
# for a while, so that it misses commits) while the old primary is killed,
# registry clock steps of 30 s, server clock steps (a few seconds, sometimes
# 30 s) and resets, releases and reassignments of the pair A or C holds,
# clean restarts and crashes of A, C and F, and reloads of the check-in
# interval.  Calls refused for want of a usable claim are expected and
# counted; a server that generated nothing for 4 s is restarted, as an
# operator would.
#
# The registry's clock is stepped back as well as forward, but before a
# restore or a failover it is set no further back than the margin (1 s)
# from the latest time it showed since the copy or the cut: docs/fleet.md
# names that as what a registry going back in time rests on.  The lease
# stays as it is.
#
# The registry's history: a trigger (test instrumentation, deferred to
# commit) logs every committed row of snowflake_registry.claims to the
# registry's server log.  In the end, for each pair, in the order the
# registry committed them (the logs of both nodes, in the order they were
# primary): every grant (a new holder, version or floor) starts at or above
# the bound of every grant before it (its highest promise, or the lower one
# its holder's clean shutdown set), including the promises that a restore
# or a failover made the registry forget; no grant is extended again once a
# later one was made; and every batch of IDs of a server lies in the window
# (floor, bound] of one of the grants made to it.  So the ID time ranges of
# successive holders are disjoint and in the order of their grants.
# Besides, no ID is committed twice, and each server's IDs grow.  The first
# copy of the registry is taken before the first fault.
#
# SNOWFLAKE_FAULT_SEED=N replays the fault schedule of seed N (the test
#   prints its seed; the servers' timing may still differ between runs).
# SNOWFLAKE_FAULT_SECONDS=S injects faults for S seconds instead of 100
#   (the whole file takes about 20 s more).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

skip_without_libfaketime();

my $seed = $ENV{SNOWFLAKE_FAULT_SEED} // int(rand(2**31));
die "SNOWFLAKE_FAULT_SEED must be a non-negative integer"
  unless $seed =~ /^\d+$/;
my $fault_seconds = $ENV{SNOWFLAKE_FAULT_SECONDS} // 100;
die "SNOWFLAKE_FAULT_SECONDS must be a number of seconds"
  unless $fault_seconds =~ /^\d+(\.\d+)?$/;
diag "seed $seed (replay with SNOWFLAKE_FAULT_SEED=$seed), "
  . "faults for $fault_seconds s";

# The fault schedule's own generator (xorshift32), so that nothing else that
# calls rand() changes it: the same seed gives the same faults.
my $rng_state = ($seed % 4294967296) || 0x9E3779B9;

sub rnd
{
	my $x = $rng_state;
	$x ^= ($x << 13) & 0xFFFFFFFF;
	$x ^= $x >> 17;
	$x ^= ($x << 5) & 0xFFFFFFFF;
	$rng_state = $x;
	return $x / 4294967296;
}
rnd() for 1 .. 8;

# a number in [lo, hi) from a draw r in [0, 1)
sub scale
{
	my ($r, $lo, $hi) = @_;
	return $lo + $r * ($hi - $lo);
}

# an element of a list from a draw r in [0, 1)
sub choose
{
	my ($r, @list) = @_;
	return $list[ int($r * @list) ];
}

my $datacenter = 5;
my $batch_size = 1000;
# the registry's margin (snowflake_registry.settings), in seconds
my $margin     = 1;
my $start_time = time();

# the time since the test began, for the log
sub elapsed
{
	return sprintf('%.2f s', time() - $start_time);
}

# The registry: a primary and a streaming standby, on one clock.  The
# trigger that logs its history is made before the standby, which gets it
# with the rest.
my $primary = snowflake_registry(
	'registry1',
	clock      => 1,
	no_cache   => 1,
	init       => { allows_streaming => 1 },
	extra_conf => "max_connections = 60\n");
$primary->safe_psql(
	'postgres', q{
CREATE FUNCTION public.snowflake_audit() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	RAISE LOG 'snowflake audit %|%|%|%|%|%|%|%|%|%', NEW.datacenter_id,
		NEW.worker_id, NEW.version, NEW.token, NEW.nonce, NEW.port,
		NEW.state, NEW.confirmed, extract(epoch FROM NEW.floor),
		extract(epoch FROM NEW.promise);
	RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER snowflake_audit
	AFTER INSERT OR UPDATE ON snowflake_registry.claims
	DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW EXECUTE FUNCTION public.snowflake_audit();});
# the logins, made before the standby is
my %login = (A => 'A', C => 'A', F => 'F');
registry_conninfo($primary, $_) foreach qw(A F);
$primary->backup('standby');
my $standby =
  snowflake_standby($primary, 'standby', 'registry2', no_cache => 1);
start_node($standby);

# max_clock_wait short, so that a refused call fails fast; a max_lead that
# lets a server start above a floor the registry's clock put ahead of its
# own at once
sub server_conf
{
	my ($login) = @_;
	return "snowflake.registry = '"
	  . registry_nodes_conninfo($login, $primary, $standby) . "'\n" . q{
snowflake.max_lead = 60000
snowflake.max_clock_wait = 200
};
}

my $A = snowflake_node(
	'A',
	registry         => $primary,
	allows_streaming => 1,
	extra_conf       => server_conf('A'));
start_node($A);
wait_for_pair($A);

# The clone is made before A issues any ID into its table (see
# t/031_fencing.pl), and started as a primary beside A.
$A->backup('base');
my $C = snowflake_standby($A, 'base', 'C', clone => 1);
start_node($C);

my $F = snowflake_node('F', registry => $primary, extra_conf => server_conf('F'));
start_node($F);

my @servers = ($A, $C, $F);
my %server  = map { $_->name => $_ } @servers;
my %port    = map { $_->port => $_->name } @servers;

# Each server's table, made after the clone, so that C holds none of A's
# rows; n orders a server's IDs as it committed them.
foreach my $node (@servers)
{
	$node->safe_psql(
		'postgres', q{
CREATE EXTENSION IF NOT EXISTS snowflake;
CREATE TABLE ids (n bigserial, id bigint NOT NULL);});
}
is( $C->safe_psql(
		'postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$A->safe_psql(
		'postgres', 'SELECT system_identifier FROM pg_control_system()'),
	'the clone has the system identifier of A');

# what runs, and every clock's offset from the real one
my %up          = (A => 1, C => 1, F => 1);
my $registry_up = 1;
my %offset      = (A => 0, C => 0, F => 0, registry => 0);
# the registry's offsets, each with the real time from which it held
my @registry_offsets = ([ time(), 0 ]);

# The registry's history: the stretches of each node's log written while it
# was the primary, in order, as [node, from, to]; the last one is open.
my @history = ([ $primary, 0, undef ]);

# Every successful batch, as [server, start, end, pair, min id, max id,
# count] for each pair it carries; the failed ones counted by server and
# reason, with the seconds they took; when each server last generated (or
# started).
my @batches;
my %succeeded;
my (%refused, %refused_seconds);
my %last_success;
my $batch_sql = qq{
WITH g AS (
	INSERT INTO ids (id)
	SELECT snowflake_next_id() FROM generate_series(1, $batch_size)
	RETURNING id)
SELECT p.datacenter_id, p.worker_id, min(g.id), max(g.id), count(*)
FROM g, snowflake_parse(g.id) p
GROUP BY 1, 2};

sub run_batch
{
	my ($node) = @_;
	my ($stdout, $stderr);
	my $t0  = time();
	my $ret = $node->psql(
		'postgres', $batch_sql,
		stdout => \$stdout,
		stderr => \$stderr);
	my $t1 = time();
	if ($ret == 0)
	{
		foreach my $line (split /\n/, $stdout)
		{
			my ($dc, $worker, $min, $max, $count) = split /\|/, $line;
			push @batches,
			  [ $node->name, $t0, $t1, "$dc|$worker", $min, $max, $count ];
		}
		$last_success{ $node->name } = $t1;
		$succeeded{ $node->name }++;
		return;
	}
	my $reason;
	if ($stderr =~ /could not generate a snowflake ID: ([^\n]*)/)
	{
		$reason = $1;
		$reason =~ s/\d+/N/g;
	}
	else
	{
		($reason) = $stderr =~ /^([^\n]*)/;
		$reason = "other: " . ($reason // "psql exit code $ret");
	}
	$refused{ $node->name }{$reason}++;
	$refused_seconds{ $node->name }{$reason} += $t1 - $t0;
	return;
}

# One batch on every running server, by turns, for the given seconds.
my $round = 0;

sub generate_rounds
{
	my ($seconds) = @_;
	my $end = time() + $seconds;
	do
	{
		my @running = grep { $up{ $_->name } } @servers;
		$round++;
		foreach my $i (0 .. $#running)
		{
			run_batch($running[ ($i + $round) % @running ]);
		}
	} while (time() < $end);
	return;
}

# the worker ids the registry lists for a login, or () while it is down
sub claims_of
{
	my ($login) = @_;
	return () unless $registry_up;
	return split /\n/,
	  $primary->safe_psql('postgres',
			"SELECT worker_id FROM snowflake_registry.claims "
		  . "WHERE datacenter_id = $datacenter AND owner = '$login' "
		  . "ORDER BY worker_id");
}

# Run an operator's call on the registry; only whether it returned is asked.
sub registry_call
{
	my ($call) = @_;
	my ($stdout, $stderr);
	$primary->psql(
		'postgres', "SELECT $call IS NOT NULL",
		stdout => \$stdout,
		stderr => \$stderr);
	note "  $call: " . ($stderr ne '' ? $stderr : $stdout);
	return;
}

# the registry's clock steps, and how many of them the registry's
# clock_timestamp() followed
my ($registry_steps, $registry_steps_seen) = (0, 0);

sub set_registry_clock
{
	my ($new) = @_;
	$offset{registry} = $new;
	set_clock($_, $new) foreach $primary, $standby;
	push @registry_offsets, [ time(), $new ];
	return unless $registry_up;
	$registry_steps++;
	my $measured = server_clock_offset($primary);
	note sprintf("  registry clock measured %.3f s off, set %d s",
		$measured, $new);
	$registry_steps_seen++ if abs($measured - $new) <= 1.5;
	return;
}

# Before the registry goes back to what it was at real time $since: its
# clock is set no further back than the margin from the latest it showed
# since then (the assumption docs/fleet.md names).
sub keep_registry_clock_since
{
	my ($since) = @_;
	my $needed;
	foreach my $i (0 .. $#registry_offsets)
	{
		my ($from, $offset) = @{ $registry_offsets[$i] };
		my $until =
		  $i < $#registry_offsets ? $registry_offsets[ $i + 1 ][0] : time();
		next if $until < $since;
		$needed = $offset if !defined $needed || $offset > $needed;
	}
	return unless defined $needed && $offset{registry} < $needed - $margin;
	note "  the registry's clock goes back to $needed s first";
	set_registry_clock($needed);
	return;
}

sub set_server_clock
{
	my ($name, $new) = @_;
	$offset{$name} = $new;
	set_clock($server{$name}, $new);
	return;
}

# The standby, made again from a base backup of the primary: after a
# restore or a failover its history is not the primary's.
my $backups = 0;

sub rebuild_standby
{
	my $name = 'rebuild' . ++$backups;
	$primary->backup($name);
	$standby->stop('immediate') if defined $standby->{_pid};
	restore_data_dir($standby, $primary->backup_dir . "/$name");
	system_or_bail('rm', '-rf', $primary->backup_dir . "/$name");
	# after postgresql.auto.conf's, where a cut of replication may linger
	$standby->append_conf('postgresql.auto.conf',
		"primary_conninfo = '" . $primary->connstr . "'");
	$standby->set_standby_mode;
	start_node($standby);
	return;
}

# Wait until the primary accepts writes.
sub wait_for_writes
{
	$primary->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $primary->name . ' does not accept writes';
	return;
}

# copies of the registry taken during the run: [path, real time taken];
# restores and failovers done
my @copies;
my ($restores, $failovers) = (0, 0);

# The faults, each with its weight.  Each cycle draws the same number of
# values, so that a seed gives the same schedule however the servers answer.
my @faults = (
	[ registry_outage_short => 2 ],
	[ registry_outage_long  => 2 ],
	[ registry_copy         => 1.5 ],
	[ registry_restore      => 1.5 ],
	[ registry_failover     => 1.5 ],
	[ registry_clock_step   => 2 ],
	[ server_clock_step     => 3 ],
	[ server_clock_jump     => 1 ],
	[ clock_reset           => 3 ],
	[ release               => 1.5 ],
	[ reassign              => 1.5 ],
	[ restart               => 2 ],
	[ crash                 => 2 ],
	[ reload                => 1 ],
	[ none                  => 1 ],);
my $total_weight = 0;
$total_weight += $_->[1] foreach @faults;

sub pick_fault
{
	my ($r) = @_;
	my $x = $r * $total_weight;
	foreach my $f (@faults)
	{
		return $f->[0] if $x < $f->[1];
		$x -= $f->[1];
	}
	return $faults[-1][0];
}

my %injected;

# A copy of the registry, taken while it runs (pg_basebackup).
sub copy_registry
{
	my $name = 'copy' . (@copies + 1);
	$primary->backup($name);
	push @copies, [ $primary->backup_dir . "/$name", time() ];
	return;
}

sub registry_restore
{
	my ($r1, $r2) = @_;
	my ($copy, $taken) = @{ choose($r1, @copies) };
	note sprintf('  registry restored from the copy taken at %.2f s',
		$taken - $start_time);
	keep_registry_clock_since($taken);
	$primary->stop($r2 < 0.5 ? 'immediate' : 'fast');
	$registry_up = 0;
	generate_rounds(0);
	restore_data_dir($primary, $copy);
	start_node($primary);
	wait_for_writes();
	$registry_up = 1;
	rebuild_standby();
	$restores++;
	return;
}

sub registry_failover
{
	my ($r1, $r2) = @_;
	my $since = time() - 2;
	if ($r1 < 0.7)
	{
		# the standby stops receiving: it misses what follows
		my $seconds = scale($r2, 0.3, 1.5);
		note sprintf('  the standby misses %.2f s of commits', $seconds);
		$standby->safe_psql('postgres',
			"ALTER SYSTEM SET primary_conninfo = ''; SELECT pg_reload_conf()");
		$standby->poll_query_until('postgres',
			'SELECT count(*) = 0 FROM pg_stat_wal_receiver')
		  or die 'the standby did not stop receiving WAL';
		$since = time();
		generate_rounds($seconds);
	}
	keep_registry_clock_since($since);
	$primary->stop('immediate');
	$history[-1][2] = -s $primary->logfile;
	push @history, [ $standby, -s $standby->logfile, undef ];
	$standby->promote;
	($primary, $standby) = ($standby, $primary);
	wait_for_writes();
	note '  ' . $primary->name . ' is the registry\'s primary now';
	rebuild_standby();
	$failovers++;
	return;
}

sub inject
{
	my ($fault, @r) = @_;
	my $target = choose($r[0], qw(A C F));
	my $node   = $server{$target};

	if ($fault eq 'registry_outage_short' || $fault eq 'registry_outage_long')
	{
		my $seconds =
		  $fault eq 'registry_outage_short'
		  ? scale($r[1], 0.3, 1.0)
		  : scale($r[1], 2.5, 5.0);
		note sprintf("  registry down for %.2f s", $seconds);
		$primary->stop($r[2] < 0.3 ? 'immediate' : 'fast');
		$registry_up = 0;
		generate_rounds($seconds);
		start_node($primary);
		$registry_up = 1;
	}
	elsif ($fault eq 'registry_copy')
	{
		copy_registry();
	}
	elsif ($fault eq 'registry_restore')
	{
		if (@copies)
		{
			registry_restore(@r[ 1, 2 ]);
		}
		else
		{
			note '  no copy of the registry taken yet';
		}
	}
	elsif ($fault eq 'registry_failover')
	{
		registry_failover(@r[ 1, 2 ]);
	}
	elsif ($fault eq 'registry_clock_step')
	{
		my $new =
			$r[1] < 0.3 ? 0
		  : $r[2] < 0.5 ? $offset{registry} - 30
		  :               $offset{registry} + 30;
		$new = 0 if abs($new) > 60;
		set_registry_clock($new);
	}
	elsif ($fault eq 'server_clock_step')
	{
		my $step = 1 + int(scale($r[1], 0, 4));
		$step = -$step if $r[2] < 0.5;
		my $new = $offset{$target} + $step;
		$new = 0 if abs($new) > 60;
		set_server_clock($target, $new);
	}
	elsif ($fault eq 'server_clock_jump')
	{
		# 30 s ahead stays; 30 s back (where the server cannot generate)
		# only for a while
		my $old = $offset{$target};
		if ($r[2] < 0.5)
		{
			set_server_clock($target, $old - 30);
			generate_rounds(scale($r[1], 1, 3));
			set_server_clock($target, $old);
		}
		else
		{
			set_server_clock($target, $old + 30 > 60 ? 0 : $old + 30);
		}
	}
	elsif ($fault eq 'clock_reset')
	{
		my @off = grep { $offset{$_} != 0 } sort keys %offset;
		if (!@off)
		{
			note "  every clock is at offset 0";
		}
		elsif ((my $name = choose($r[1], @off)) eq 'registry')
		{
			set_registry_clock(0);
		}
		else
		{
			set_server_clock($name, 0);
		}
	}
	elsif ($fault eq 'release')
	{
		my @workers = claims_of('A');
		if (@workers)
		{
			my $w = choose($r[1], @workers);
			registry_call("snowflake_registry.release($datacenter, $w)");
		}
		else
		{
			note "  A and C hold no claim"
			  . ($registry_up ? '' : ' known: the registry is down');
		}
	}
	elsif ($fault eq 'reassign')
	{
		my @workers = claims_of('A');
		if (!@workers)
		{
			note "  A and C hold no claim"
			  . ($registry_up ? '' : ' known: the registry is down');
			return;
		}
		my $w  = choose($r[1], @workers);
		my $to = $r[2] < 0.6 ? 'F' : 'A';
		registry_call(
			"snowflake_registry.reassign($datacenter, $w, '$to')");
		# F holds a claim of its own: released, F claims again, and takes
		# the one it was given
		if ($to eq 'F' && $r[3] < 0.7)
		{
			registry_call("snowflake_registry.release($datacenter, $_)")
			  foreach grep { $_ != $w } claims_of('F');
		}
	}
	elsif ($fault eq 'restart' || $fault eq 'crash')
	{
		return unless $up{$target};
		if ($fault eq 'crash')
		{
			crash_node($node);
		}
		else
		{
			$node->stop('fast');
		}
		$up{$target} = 0;
		generate_rounds(scale($r[1], 0, 1.5));
		start_node($node);
		$up{$target}           = 1;
		$last_success{$target} = time();
	}
	elsif ($fault eq 'reload')
	{
		return unless $up{$target};
		# undef resets it
		alter_system($node,
			'snowflake.registry_check_in_interval' => $r[1] < 0.25
			? undef
			: sprintf('%dms', scale($r[2], 100, 400)));
	}
	return;
}

# As an operator would, restart a server that has generated nothing for a
# while (a clone refused while its original extends its claim, or a server
# behind a floor), so that every server keeps taking part.
my $stuck_seconds     = 4;
my $operator_restarts = 0;

sub restart_stuck
{
	foreach my $node (@servers)
	{
		my $name = $node->name;
		next
		  unless $up{$name}
		  && time() - $last_success{$name} > $stuck_seconds;
		note "  $name generated nothing for $stuck_seconds s: restarting it";
		$node->stop('fast');
		start_node($node);
		$last_success{$name} = time();
		$operator_restarts++;
	}
	return;
}

# The fault run.
my $deadline = time() + $fault_seconds;
my $cycle    = 0;
$last_success{$_} = time() foreach keys %up;
generate_rounds(1);
copy_registry();
while (time() < $deadline)
{
	assert_running($_) foreach grep { $up{ $_->name } } @servers;
	assert_running($_) foreach $primary, $standby;
	restart_stuck();
	$cycle++;
	my @r     = map { rnd() } 1 .. 6;
	my $fault = pick_fault(shift @r);
	$injected{$fault}++;
	note "cycle $cycle at " . elapsed() . ": $fault";
	inject($fault, @r);
	generate_rounds(scale($r[4], 0.3, 1.5));
}

# Every clock back at 0; a restore and a failover, if the schedule had
# none; every server running; then the final check.
set_registry_clock(0) if $offset{registry} != 0;
set_server_clock($_, 0) foreach grep { $offset{$_} != 0 } qw(A C F);
if ($registry_steps == 0)
{
	set_registry_clock(30);
	set_registry_clock(0);
}
if (!$restores)
{
	note 'a restore of the registry, which the schedule did not have';
	registry_restore(0.99, 0.7);
}
if (!$failovers)
{
	note 'a failover of the registry, which the schedule did not have';
	registry_failover(0, 0.5);
}
generate_rounds(2);
$history[-1][2] = -s $primary->logfile;

note "after $cycle cycles and $round rounds at " . elapsed();
note "faults injected: "
  . join(', ', map { "$_ $injected{$_}" } sort keys %injected)
  . "; registry restores $restores, failovers $failovers; "
  . "servers restarted for generating nothing: $operator_restarts";

my %ids_of;     # id => servers that committed it
my %rows_of;    # server => rows in its table
my %batched;    # server => IDs of its successful batches
$batched{ $_->[0] } += $_->[6] foreach @batches;
foreach my $node (@servers)
{
	my $name = $node->name;
	my @ids  = split /\n/, $node->safe_psql('postgres', 'SELECT id FROM ids');
	$rows_of{$name} = scalar @ids;
	push @{ $ids_of{$_} }, $name foreach @ids;
	is( $rows_of{$name},
		$batched{$name} // 0,
		"every ID committed on $name is in a batch the test saw succeed");
	check_strictly_increasing($node, 'ids',
		"every ID $name committed is greater than the ones before it");
}
my @dups = grep { @{ $ids_of{$_} } > 1 } keys %ids_of;

# The registry's history, in the order it was committed.  A grant is a new
# holder, version or floor of a pair: [port, token, version, floor, bound,
# highest promise, nonces seen, newest nonce], times in seconds since 1970
# (undef where NULL).  Its bound is the highest promise it had, or the lower
# one its holder's clean shutdown or confirmed release set (idle() alone
# lowers a promise) on its newest extension.  Only an extension brings a
# nonce the grant had not had: one after a later grant is a fault.  A row
# that comes back as it was (the registry went back, and an operator
# released it, or its holder found it expired and marked it idle) brings an
# older nonce, and a promise no higher than the grant's highest (a clean
# shutdown may have lowered its bound since): it is no new grant, and
# changes no bound.
my %grants_of;    # pair => grants, in order
my @floor_below;  # faults of the history
foreach my $stretch (@history)
{
	my ($node, $from, $to) = @$stretch;
	my $log = slurp_file($node->logfile, $from);
	$log = substr($log, 0, $to - $from) if defined $to;
	while ($log =~
		/snowflake audit (\d+)\|(\d+)\|(\d+)\|([^|]*)\|([^|]*)\|([^|]*)\|(\w+)\|(\w+)\|([^|]*)\|(\S*)/g
	  )
	{
		my ($dc, $worker, $version, $token, $nonce, $port, $state, $confirmed,
			$floor, $promise)
		  = ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);
		next if $token eq '<NULL>';
		($floor, $promise) =
		  map { $_ eq '<NULL>' ? undef : $_ } $floor, $promise;
		my $pair   = "$dc|$worker";
		my $grants = $grants_of{$pair} //= [];
		my ($grant) = grep {
			     $_->[1] eq $token
			  && $_->[2] == $version
			  && ($_->[3] // '') eq ($floor // '')
		} @$grants;
		if (!$grant)
		{
			foreach my $before (@$grants)
			{
				push @floor_below,
				  sprintf(
					'pair %s: the grant of version %d to port %s has floor %s, below the promise %s of version %d to port %s',
					$pair, $version, $port, $floor // 'none',
					$before->[4], $before->[2], $before->[0])
				  if defined $before->[4]
				  && (!defined $floor || $floor < $before->[4]);
			}
			push @$grants,
			  [ $port, $token, $version, $floor, $promise, $promise,
				{ $nonce => 1 }, $nonce ];
			next;
		}
		my $last = $grant == $grants->[-1];
		if (!$grant->[6]{$nonce})
		{
			push @floor_below,
			  sprintf(
				'pair %s: version %d of port %s extended to %s after a later grant',
				$pair, $version, $port, $promise // 'none')
			  unless $last;
			$grant->[6]{$nonce} = 1;
			$grant->[7] = $nonce;
		}
		elsif (defined $promise
			&& defined $grant->[5]
			&& $promise > $grant->[5])
		{
			push @floor_below,
			  sprintf(
				'pair %s: version %d of port %s came back with promise %s, above its highest %s',
				$pair, $version, $port, $promise, $grant->[5]);
		}
		next unless defined $promise;
		if (!defined $grant->[5] || $promise > $grant->[5])
		{
			$grant->[5] = $promise;
			$grant->[4] = $promise;
		}
		elsif ($last
			&& $nonce eq $grant->[7]
			&& ($state eq 'idle' || ($state eq 'released' && $confirmed eq 't')))
		{
			$grant->[4] = $promise;
		}
	}
}
my $grant_count = 0;
$grant_count += @{ $grants_of{$_} } foreach keys %grants_of;
diag "the registry's history: $grant_count grants on "
  . scalar(keys %grants_of)
  . " pairs";

# Each batch in the window of a grant to its server.
my @outside;
foreach my $b (@batches)
{
	my ($name, $t0, $t1, $pair, $min, $max, $count) = @$b;
	my $port = $server{$name}->port;
	my $min_ms = id_unix_ms($min);
	my $max_ms = id_unix_ms($max);
	next if grep {
		     $_->[0] eq $port
		  && (!defined $_->[3] || $min_ms > 1000 * $_->[3])
		  && defined $_->[4]
		  && $max_ms <= 1000 * $_->[4]
	} @{ $grants_of{$pair} // [] };
	push @outside,
	  sprintf('%s [%.3f, %.3f] pair %s, ms %d..%d',
		$name, $t0 - $start_time, $t1 - $start_time, $pair, $min_ms, $max_ms);
}

foreach my $pair (sort keys %grants_of)
{
	my %count;
	$count{ $_->[0] } += $_->[6] foreach grep { $_->[3] eq $pair } @batches;
	diag "pair $pair: "
	  . scalar(@{ $grants_of{$pair} })
	  . " grants; "
	  . join(', ', map { "$_ " . ($count{$_} // 0) . " IDs" } qw(A C F));
}
foreach my $name (qw(A C F))
{
	my $refusals = 0;
	$refusals += $_ foreach values %{ $refused{$name} // {} };
	diag "$name: $rows_of{$name} IDs checked, from "
	  . ($succeeded{$name} // 0)
	  . " batches; $refusals batches refused";
	foreach my $reason (sort keys %{ $refused{$name} // {} })
	{
		note sprintf("%s: %d refused (%.1f s): %s",
			$name, $refused{$name}{$reason},
			$refused_seconds{$name}{$reason}, $reason);
	}
}

# Each check prints its first five faults, and the seed, beside it: the end
# of the log, which CI shows, holds them.
sub check_none
{
	my ($name, @faults) = @_;
	return if is(scalar(@faults), 0, $name);
	diag $_ foreach @faults[ 0 .. ($#faults < 4 ? $#faults : 4) ];
	diag "seed $seed (replay with SNOWFLAKE_FAULT_SEED=$seed)";
	return;
}
check_none('no ID was committed twice, on one server or on two',
	map { "duplicate $_ on " . join(', ', @{ $ids_of{$_} }) }
	  sort { $a <=> $b } @dups);
check_none(
	'every grant of the registry starts at or above every promise made before it on its pair, forgotten ones too',
	@floor_below);
check_none(
	'every batch lies in the window of a grant the registry made to its server',
	map { "outside the windows of its server's grants: $_" } @outside);
cmp_ok($grant_count, '>', 0, 'the registry\'s history was read');
cmp_ok($rows_of{A},               '>', 0, 'A generated IDs');
cmp_ok($rows_of{C} + $rows_of{F}, '>', 0, 'C or F generated IDs');
ok( $registry_steps > 0 && $registry_steps_seen == $registry_steps,
	"the registry's clock moved as set ($registry_steps_seen of $registry_steps steps)"
);
foreach my $node (@servers, $primary, $standby)
{
	my @troubles = server_troubles($node);
	is_deeply(\@troubles, [],
		'no server process of ' . $node->name . ' exited abnormally');
}

done_testing();
