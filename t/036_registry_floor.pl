
# Copyright (c) 2026, the snowflake authors

# Floors: a new holder of a worker id starts above the previous holder's
# promise, and every holder above the floor of a new epoch of the registry.
#
# A takeover from a holder whose clock runs a minute ahead of the next
# holder's: the next holder's calls wait snowflake.max_clock_wait and then
# fail with "resuming above the floor of this server's registry claim" (55000),
# not with a clock error; with a max_lead that covers the minute, IDs come
# at once, above every ID of the old holder and above its promise.  The
# copy is made before the holder issues an ID, so that no high-water mark of
# the holder's comes with it: only the registry can tell it where to resume.
#
# The registry stopped while two holders generate: each goes on up to its
# promise, then refuses with "the ID would pass the time the registry
# recorded for this server's claim".  The registry started again is a new
# epoch: each holder moves above the epoch's floor, says so in its log, and
# generates again; its IDs stay strictly increasing, none repeats, and those
# after the outage lie above the floor.

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

my $registry = snowflake_registry('registry', lease => '2 s');

#
# A takeover from a holder a minute ahead.
#
my $holder =
  snowflake_node('holder', registry => $registry, allows_streaming => 1);
start_node($holder);
my $pair = registry_pair($registry, 'holder');
$holder->backup('base');
my $copy =
  snowflake_standby($holder, 'base', 'copy', clone => 1, offset => -60);

my $holder_stream = start_id_stream($holder, 'holder');
ok(wait_for_stream($holder_stream, '(SELECT count(*) FROM ids) > 0'),
	'the holder generates');
crash_node($holder);
stop_id_stream($holder_stream);

# The copy, its clock a minute behind the holder's, takes the claim once
# the holder's promise has passed, then refuses: its clock is a minute
# behind that promise.
start_node($copy);
check_clock_offset($copy, -60, "the copy's clock is a minute behind the holder's");
my ($stderr, $elapsed);
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
while (time() < $deadline)
{
	my $start = time();
	my $copy_pair;
	($copy_pair, $stderr) = next_pair($copy);
	$elapsed = time() - $start;
	ok(0, 'the copy issues no ID below the promise of the holder')
	  if defined $copy_pair;
	last if defined $copy_pair || $stderr =~ /registry claim/;
	usleep(100_000);
}
like(
	$stderr,
	qr/ERROR:  55000: could not generate a snowflake ID: resuming above the floor of this server's registry claim/,
	'the copy refuses: it resumes above the floor of its claim (55000)');
my ($ahead_ms) = $stderr =~ /above a floor (\d+) ms ahead of this clock/;
ok(defined $ahead_ms && $ahead_ms > 30_000 && $ahead_ms <= 61_000,
	'its detail says that the holder\'s IDs may reach a minute ahead of its clock'
) or diag $stderr;
cmp_ok($elapsed, '>=', 0.9,
	'after waiting snowflake.max_clock_wait (1 s) for the clock');
unlike($stderr, qr/the clock is behind/, 'not a clock error');

# With a lead that covers the minute, IDs come at once, above the holder's.
my @copy_ids = split /\n/,
  $copy->safe_psql('postgres',
	"SET snowflake.max_lead = '2min'; SELECT snowflake_next_ids(1000)");
is(scalar(@copy_ids), 1000,
	'with max_lead 2 min the copy issues IDs ahead of its clock');
start_node($holder);
my @holder_ids = stream_ids($holder_stream);
$holder->stop;
check_pair_holders(
	'the holder and the copy: no ID twice, their ranges of ID time disjoint',
	{ holder => \@holder_ids, copy => \@copy_ids });
check_takeover($registry, $pair, 'the copy', \@holder_ids, \@copy_ids);
$copy->stop;

#
# The registry stopped, then started again: a new epoch.
#
my @holders = map { snowflake_node($_, registry => $registry) } qw(x y);
start_node($_) foreach @holders;
wait_for_pair($_) foreach @holders;
my @streams = map { start_id_stream($_, $_->name) } @holders;
foreach my $stream (@streams)
{
	ok(wait_for_stream($stream, '(SELECT count(*) FROM ids) > 0'),
		"$stream->{label} generates");
}
my ($epoch) = $registry->safe_psql('postgres',
	'SELECT epoch FROM snowflake_registry.settings');
my %log_offset = map { $_->name => -s $_->logfile } @holders;

$registry->stop;
foreach my $stream (@streams)
{
	ok( wait_for_stream(
			$stream,
			"(SELECT count(*) FROM errors WHERE message = '55000: could not generate a snowflake ID: the ID would pass the time the registry recorded for this server''s claim') > 0"
		),
		"with the registry down, $stream->{label} stops at its promise, and says so"
	);
}
my %outage_ends = map {
	$_->{label} => $_->{node}->safe_psql('postgres',
		"SELECT max(n) FROM snowflake_stream_errors WHERE label = '$_->{label}'")
} @streams;

$registry->start;
foreach my $stream (@streams)
{
	my $label = $stream->{label};
	ok( wait_for_stream(
			$stream, "(SELECT count(*) FROM ids WHERE n > $outage_ends{$label}) > 0"),
		"once the registry is back, $label generates again");
	ok( $stream->{node}->wait_for_log(
			qr/snowflake IDs move above the floor of the registry's new epoch/,
			$log_offset{$label}),
		"$label says that its IDs move above the floor of the registry's new epoch"
	);
}
stop_id_stream($_) foreach @streams;

my ($new_epoch, $epoch_floor) = split /\|/,
  $registry->safe_psql('postgres',
	'SELECT epoch, epoch_floor FROM snowflake_registry.settings');
is($new_epoch, $epoch + 1, 'the registry started again is a new epoch');
my $epoch_floor_ms = registry_ms($registry, $epoch_floor);
my %ids;
foreach my $stream (@streams)
{
	my $label = $stream->{label};
	my @ids = stream_ids($stream);
	$ids{$label} = \@ids;
	my $not_increasing = grep { $ids[$_] <= $ids[ $_ - 1 ] } 1 .. $#ids;
	is($not_increasing, 0, "the IDs of $label are strictly increasing");
	my ($oldest_after) = sort { $a <=> $b }
	  map { id_unix_ms($_) }
	  stream_ids($stream, "n > $outage_ends{$label}");
	cmp_ok($oldest_after, '>', $epoch_floor_ms,
		"those $label issued after the outage lie above the new epoch's floor");
}
check_pair_holders('no ID of the two holders repeats', \%ids);

$_->stop foreach @holders;
done_testing();
