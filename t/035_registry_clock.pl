
# Copyright (c) 2026, the snowflake authors

# Steps of the registry's clock move no claim (issue 14, finding 8): with
# the registry's clock stepped 30 s forward, then back, a running original
# keeps its claim and a copy waiting for it never gets it; once the original
# is gone, the copy takes the claim over after the takeover delay, as it
# would with a true clock.  1.1 compared the registry's timestamps, and gave
# the claim to the copy within a check-in interval of the step.

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

# snowflake_node's registry settings: check-in every 200 ms, takeover 2 s
my $takeover = 2;

my $registry = snowflake_registry('registry', clock => 1, no_cache => 1);

my $original = snowflake_node(
	'original',
	registry         => $registry,
	allows_streaming => 1,
	extra_conf       => "snowflake.registry_require_check_in = on\n");
start_node($original);
my ($pair) = wait_for_pair($original);
$original->backup('base');
my $copy = snowflake_standby($original, 'base', 'copy', clone => 1);
start_node($copy);
ok(!defined next_pair($copy), 'a copy of the running original is refused');

foreach my $step (30, 0, -30)
{
	# The step lands while the original's check-ins are held back for 0.6 s,
	# less than the takeover delay, so that the copy's next claim reaches
	# the registry before the original's next check-in: only the step could
	# then give the copy the claim.
	my $worker = registry_worker_pid($original);
	kill 'STOP', $worker;
	set_clock($registry, $step);
	usleep(600_000);
	kill 'CONT', $worker;
	check_clock_offset($registry, $step,
		"the registry's clock is stepped to $step s");
	my ($pairs, $errors) = generate_for(3 * $takeover, $original, $copy);
	ok(!exists $pairs->{copy},
		"with the registry's clock at $step s, the copy never gets the claim");
	ok(!exists $errors->{original},
		'and the original generates throughout with its pair')
	  or diag $errors->{original};
	is_deeply([ keys %{ $pairs->{original} } ],
		[$pair], 'the original keeps its pair');
}

# With the registry's clock still 30 s behind, the original gone: the copy
# takes the claim over after the takeover delay, not 30 s later.
my $last_id = $original->safe_psql('postgres', 'SELECT snowflake_next_id()');
crash_node($original);
my $crashed_at = time();
my ($copy_pair) = wait_for_pair($copy, 60);
my $took = time() - $crashed_at;
is($copy_pair, $pair, 'once the original is gone, the copy takes the claim');
cmp_ok($took, '>=', $takeover - 0.5, 'after the takeover delay');
cmp_ok($took, '<', $takeover + 20, "and not much later ($took s)");
cmp_ok($copy->safe_psql('postgres', 'SELECT snowflake_next_id()'),
	'>', $last_id, 'above every ID the original issued');

$copy->stop;
done_testing();
