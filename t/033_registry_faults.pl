
# Copyright (c) 2026, the snowflake authors

# A seeded, randomized fault run of registry mode with
# snowflake.registry_require_check_in on, the mode that promises no
# duplicate ID under any outage.  One registry (under libfaketime, so that
# its clock can be stepped), and three servers in datacenter 5 that claim
# their worker ids there: an original primary A, its pg_basebackup clone C
# started as a primary beside it (the same system: the registry treats it as
# another start of A), and a fresh server F, where pairs released or
# reassigned on the registry can go.
#
# The test generates batches of IDs on A, C and F, one psql statement at a
# time, while each cycle injects a fault chosen at random: registry outages
# shorter and longer than the takeover delay, registry clock steps of 30 s,
# server clock steps (a few seconds, sometimes 30 s) and resets, releases and
# reassignments of the pair A or C holds, clean restarts and crashes of A, C
# and F, and reloads of the lease settings.  Calls refused for want of a
# usable claim are expected and counted; a server that generated nothing for
# 4 s (its claim moved or was released, or it is a refused clone) is
# restarted, as an operator would.  In the end every committed ID of
# every server is checked: no duplicates, and for each (datacenter, worker)
# pair, no two servers' batches interleave (their id ranges are disjoint,
# and a batch that began after another server's batch ended has only
# greater IDs).
#
# SNOWFLAKE_FAULT_SEED=N replays the fault schedule of seed N (the test
#   prints its seed; the servers' timing may still differ between runs).
# SNOWFLAKE_FAULT_SECONDS=S injects faults for S seconds instead of 100
#   (the whole file takes about 15 s more).

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SnowflakeTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

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
my $batch_size = 200;
my $start_time = time();

# the time since the test began, for the log
sub elapsed
{
	return sprintf('%.2f s', time() - $start_time);
}

# max_clock_wait short, so that a refused call fails fast
my $server_conf = q{
snowflake.registry_require_check_in = on
snowflake.max_lead = 1000
snowflake.max_clock_wait = 200
};

my $registry = snowflake_registry('registry', clock => 1, no_cache => 1);

my $A = snowflake_node(
	'A',
	registry         => $registry,
	allows_streaming => 1,
	extra_conf       => $server_conf);
start_node($A);
$registry->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM snowflake_claims WHERE port = " . $A->port)
  or die 'A did not claim a worker id';

# The clone is made before A issues any ID (see t/031_fencing.pl), and
# started as a primary beside A.
$A->backup('base');
my $C = snowflake_standby($A, 'base', 'C', clone => 1);
start_node($C);

my $F =
  snowflake_node('F', registry => $registry, extra_conf => $server_conf);
start_node($F);

my @servers = ($A, $C, $F);
my %server  = map { $_->name => $_ } @servers;

# Each server's extension and table, made after the clone, so that C holds
# none of A's rows.
foreach my $node (@servers)
{
	my $name = $node->name;
	$node->safe_psql(
		'postgres', qq{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint NOT NULL, origin text NOT NULL DEFAULT '$name');}
	);
}

my %sysid = map {
	$_->name => $_->safe_psql('postgres',
		'SELECT system_identifier FROM pg_control_system()')
} $A, $F;
is( $C->safe_psql(
		'postgres', 'SELECT system_identifier FROM pg_control_system()'),
	$sysid{A},
	'the clone has the system identifier of A');

# what runs, and every clock's offset from the real one
my %up          = (A => 1, C => 1, F => 1);
my $registry_up = 1;
my %offset      = (A => 0, C => 0, F => 0, registry => 0);

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

# the worker ids the registry lists for a system identifier, or () while it
# is down
sub claims_of
{
	my ($sysid) = @_;
	return () unless $registry_up;
	return split /\n/,
	  $registry->safe_psql('postgres',
			"SELECT worker_id FROM snowflake_claims "
		  . "WHERE datacenter_id = $datacenter AND system_identifier = $sysid "
		  . "ORDER BY worker_id");
}

# Run an operator's call on the registry; its return type may change, so
# only whether it returned is asked.
sub registry_call
{
	my ($call) = @_;
	my ($stdout, $stderr);
	$registry->psql(
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
	set_clock($registry, $new);
	return unless $registry_up;
	$registry_steps++;
	my $measured = server_clock_offset($registry);
	note sprintf("  registry clock measured %.3f s off, set %d s",
		$measured, $new);
	$registry_steps_seen++ if abs($measured - $new) <= 1.5;
	return;
}

sub set_server_clock
{
	my ($name, $new) = @_;
	$offset{$name} = $new;
	set_clock($server{$name}, $new);
	return;
}

# The faults, each with its weight.  Each cycle draws the same number of
# values, so that a seed gives the same schedule however the servers answer.
my @faults = (
	[ registry_outage_short => 2 ],
	[ registry_outage_long  => 2 ],
	[ registry_clock_step   => 2 ],
	[ server_clock_step     => 3 ],
	[ server_clock_jump     => 1 ],
	[ clock_reset           => 3 ],
	[ release               => 1.5 ],
	[ reassign              => 1.5 ],
	[ restart               => 2 ],
	[ crash                 => 2 ],
	[ reload                => 1.5 ],
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
		  : scale($r[1], 3.5, 6.0);
		note sprintf("  registry down for %.2f s", $seconds);
		$registry->stop('fast');
		$registry_up = 0;
		generate_rounds($seconds);
		start_node($registry);
		$registry_up = 1;
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
		my @workers = claims_of($sysid{A});
		if (@workers)
		{
			my $w = choose($r[1], @workers);
			registry_call("snowflake_registry_release($datacenter, $w)");
		}
		else
		{
			note "  A and C hold no claim"
			  . ($registry_up ? '' : ' known: the registry is down');
		}
	}
	elsif ($fault eq 'reassign')
	{
		my @workers = claims_of($sysid{A});
		if (!@workers)
		{
			note "  A and C hold no claim"
			  . ($registry_up ? '' : ' known: the registry is down');
			return;
		}
		my $w  = choose($r[1], @workers);
		my $to = $r[2] < 0.6 ? 'F' : 'A';
		registry_call(
			"snowflake_registry_reassign($datacenter, $w, $sysid{$to})");
		# F prefers its own claim: release it and restart F, so that F
		# takes the pair it was given at its next start
		if ($to eq 'F' && $r[3] < 0.7)
		{
			registry_call("snowflake_registry_release($datacenter, $_)")
			  foreach grep { $_ != $w } claims_of($sysid{F});
			if ($up{F})
			{
				note "  restarting F";
				$F->stop('fast');
				start_node($F);
				$last_success{F} = time();
			}
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
		# undef resets them
		my ($delay, $interval) =
		  $r[1] < 0.25
		  ? (undef, undef)
		  : (sprintf('%dms', scale($r[2], 1000, 3000)),
			sprintf('%dms', scale($r[3], 100, 400)));
		alter_system(
			$node,
			'snowflake.registry_takeover_delay'    => $delay,
			'snowflake.registry_check_in_interval' => $interval);
	}
	return;
}

# A claim that moved or was released is lost until the server restarts; so
# is a clone's, refused while its original checks in.  As an operator would,
# restart a server that has generated nothing for a while, so that every
# server keeps taking part.
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
while (time() < $deadline)
{
	assert_running($_) foreach grep { $up{ $_->name } } @servers;
	assert_running($registry) if $registry_up;
	restart_stuck();
	$cycle++;
	my @r     = map { rnd() } 1 .. 6;
	my $fault = pick_fault(shift @r);
	$injected{$fault}++;
	note "cycle $cycle at " . elapsed() . ": $fault";
	inject($fault, @r);
	generate_rounds(scale($r[4], 0.3, 1.5));
}

# Every clock back at 0, every server running, then the final check.
set_registry_clock(0) if $offset{registry} != 0;
set_server_clock($_, 0) foreach grep { $offset{$_} != 0 } qw(A C F);
if ($registry_steps == 0)
{
	set_registry_clock(30);
	set_registry_clock(0);
}

note "after $cycle cycles and $round rounds at " . elapsed();
note "faults injected: "
  . join(', ', map { "$_ $injected{$_}" } sort keys %injected)
  . "; servers restarted for generating nothing: $operator_restarts";

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
}
my @dups = grep { @{ $ids_of{$_} } > 1 } keys %ids_of;
my $dups = @dups;
diag "duplicate $_ on " . join(', ', @{ $ids_of{$_} })
  foreach (sort { $a <=> $b } @dups)[ 0 .. ($dups < 5 ? $dups - 1 : 4) ];

# For each pair: batches of different servers whose id ranges overlap, or
# that come in real time after another server's batch ended but are not
# above it.  top2 keeps the largest max id of any server and the largest of
# the other servers, so that each batch is compared with the largest max id
# of the servers other than its own.
sub top2_add
{
	my ($top, $server, $max) = @_;
	if (defined $top->[0] && $top->[0][0] eq $server)
	{
		$top->[0][1] = $max if $max > $top->[0][1];
	}
	elsif (!defined $top->[0] || $max > $top->[0][1])
	{
		$top->[1] = $top->[0];
		$top->[0] = [ $server, $max ];
	}
	elsif (!defined $top->[1] || $max > $top->[1][1])
	{
		$top->[1] = [ $server, $max ];
	}
	return;
}

sub top2_other
{
	my ($top, $server) = @_;
	my $other =
	  defined $top->[0] && $top->[0][0] ne $server ? $top->[0] : $top->[1];
	return defined $other ? $other->[1] : undef;
}

sub describe_batch
{
	my ($b) = @_;
	return sprintf(
		'%s [%.3f, %.3f] %s..%s',
		$b->[0],
		$b->[1] - $start_time,
		$b->[2] - $start_time,
		$b->[4], $b->[5]);
}

my %by_pair;
push @{ $by_pair{ $_->[3] } }, $_ foreach @batches;
my $interleavings = 0;
my @examples;
foreach my $pair (sort keys %by_pair)
{
	my $list = $by_pair{$pair};
	my %bad;

	my @top;
	foreach my $b (sort { $a->[4] <=> $b->[4] } @$list)
	{
		my $other = top2_other(\@top, $b->[0]);
		$bad{$b} = $b if defined $other && $other >= $b->[4];
		top2_add(\@top, $b->[0], $b->[5]);
	}

	@top = ();
	my @by_end = sort { $a->[2] <=> $b->[2] } @$list;
	my $next   = 0;
	foreach my $b (sort { $a->[1] <=> $b->[1] } @$list)
	{
		while ($next < @by_end && $by_end[$next][2] < $b->[1])
		{
			top2_add(\@top, $by_end[$next][0], $by_end[$next][5]);
			$next++;
		}
		my $other = top2_other(\@top, $b->[0]);
		$bad{$b} = $b if defined $other && $other >= $b->[4];
	}

	$interleavings += keys %bad;
	foreach my $b (sort { $a->[1] <=> $b->[1] } values %bad)
	{
		last if @examples >= 5;
		my ($with) = grep {
				 $_->[0] ne $b->[0]
			  && $_->[5] >= $b->[4]
			  && ($_->[4] <= $b->[5] || $_->[2] < $b->[1])
		} @$list;
		push @examples,
			"pair $pair: "
		  . describe_batch($b)
		  . (defined $with ? ' against ' . describe_batch($with) : '');
	}

	my %count;
	$count{ $_->[0] } += $_->[6] foreach @$list;
	diag "pair $pair: "
	  . join(', ', map { "$_ " . ($count{$_} // 0) . " IDs" } qw(A C F))
	  . ", "
	  . scalar(keys %bad)
	  . " interleaving batches";
}
diag "interleaving: $_" foreach @examples;

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

is($dups, 0, 'no ID was committed twice, on one server or on two');
is($interleavings, 0,
	'no two servers\' IDs of one pair interleave, in ID or in time');
cmp_ok($rows_of{A},               '>', 0, 'A generated IDs');
cmp_ok($rows_of{C} + $rows_of{F}, '>', 0, 'C or F generated IDs');
ok( $registry_steps > 0 && $registry_steps_seen == $registry_steps,
	"the registry's clock moved as set ($registry_steps_seen of $registry_steps steps)"
);
foreach my $node (@servers, $registry)
{
	my @troubles = server_troubles($node);
	is_deeply(\@troubles, [],
		'no server process of ' . $node->name . ' exited abnormally');
}

done_testing();
