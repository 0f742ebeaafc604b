# Configuration that must stop the server or be refused: bad node ids and
# epochs in postgresql.conf, and a server without the preload.
#
# A custom setting whose value from postgresql.conf fails validation would
# normally draw only a WARNING and keep its default; for node ids and the
# epoch that would hand out colliding IDs, so the server must not start.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The tests write the node ids themselves.  The server logs at PostgreSQL's
# default level: with log_min_messages = log, as snowflake_node sets it, the
# mark writer's warning after a reload (below) does not appear.
my $node = snowflake_node(
	'settings',
	node_ids   => 0,
	extra_conf => "log_min_messages = warning\n");
my $base_conf = slurp_file($node->data_dir . '/postgresql.conf');

# Replace postgresql.conf with the base configuration and then $extra.
sub write_conf
{
	my ($extra) = @_;
	open my $fh, '>', $node->data_dir . '/postgresql.conf' or die $!;
	print $fh $base_conf . $extra;
	close $fh;
	return;
}

my $valid_conf = q{
snowflake.datacenter_id = 31
snowflake.worker_id = 30
snowflake.epoch = 1420070400000
};

# Start with one extra line of configuration; expect failure and a log line.
sub refuses_to_start
{
	my ($setting, $log_like, $name) = @_;

	write_conf("$setting\n");

	my $log_offset = -s $node->logfile;
	ok(!start_node($node, fail_ok => 1), "server refuses to start: $name");
	my $log = slurp_file($node->logfile, $log_offset);
	like($log, $log_like, "the log names the setting and what is valid: $name");
	return;
}

refuses_to_start(
	'snowflake.worker_id = 32',
	qr/FATAL:  invalid value for parameter "snowflake.worker_id": "32"\n.*DETAIL:  "snowflake.worker_id" must be an integer from 0 to 31\./,
	'worker_id 32');
refuses_to_start(
	'snowflake.datacenter_id = -1',
	qr/FATAL:  invalid value for parameter "snowflake.datacenter_id": "-1"\n.*DETAIL:  "snowflake.datacenter_id" must be an integer from 0 to 31\./,
	'datacenter_id -1');
refuses_to_start(
	"snowflake.worker_id = 'three'",
	qr/FATAL:  invalid value for parameter "snowflake.worker_id": "three"/,
	'worker_id not a number');
refuses_to_start(
	'snowflake.wokrer_id = 5',
	qr/FATAL:  unrecognized configuration parameter "snowflake.wokrer_id"\n.*DETAIL:  "snowflake" is a reserved prefix\.\n.*HINT:  SELECT name FROM pg_settings WHERE name LIKE 'snowflake\.%' lists the snowflake settings\./,
	'a misspelt setting');
refuses_to_start(
	"snowflake.epoch = 'yesterday-ish'",
	qr/FATAL:  invalid value for parameter "snowflake.epoch": "yesterday-ish"\n.*DETAIL:  The epoch must be a timestamp with a time zone/,
	'epoch that does not parse');
refuses_to_start(
	"snowflake.epoch = '2999-01-01 00:00:00+00'",
	qr/FATAL:  invalid value for parameter "snowflake.epoch": "2999-01-01 00:00:00\+00"\n.*DETAIL:  The epoch must not be in the future\./,
	'epoch in the future');
refuses_to_start(
	"snowflake.epoch = '2015-01-01 00:00:00'",
	qr/DETAIL:  The epoch must name its time zone/,
	'epoch without a time zone');

# Setting names are case-insensitive, so the reserved prefix is too: a
# misspelling with capitals is as unknown as one without.
refuses_to_start(
	'Snowflake.Wokrer_Id = 7',
	qr/FATAL:  unrecognized configuration parameter "Snowflake.Wokrer_Id"\n.*DETAIL:  "snowflake" is a reserved prefix\./,
	'a misspelt setting with capitals in its prefix');

# Node ids are plain integers: PostgreSQL would round a fraction.
refuses_to_start(
	'snowflake.worker_id = 31.4',
	qr/FATAL:  invalid value for parameter "snowflake.worker_id": "31.4"\n.*DETAIL:  "snowflake.worker_id" must be an integer from 0 to 31\./,
	'a worker id with a fraction');
refuses_to_start(
	"snowflake.datacenter_id = '1.5'",
	qr/FATAL:  invalid value for parameter "snowflake.datacenter_id": "1.5"/,
	'a datacenter id with a fraction, quoted');

# The epoch is a fixed moment.
refuses_to_start(
	"snowflake.epoch = 'today +00'",
	qr/FATAL:  invalid value for parameter "snowflake.epoch": "today \+00"\n.*DETAIL:  The epoch must be a fixed moment; "today" is a special or relative value\./,
	'a relative epoch');
refuses_to_start(
	"snowflake.epoch = 'tomorrow +00'",
	qr/DETAIL:  The epoch must be a fixed moment; "tomorrow" is a special or relative value\./,
	'an epoch of tomorrow');
refuses_to_start(
	"snowflake.epoch = '2015-01-01 00:00:00 IST'",
	qr/DETAIL:  The time zone abbreviation "ist" depends on timezone_abbreviations/,
	'an epoch with a zone abbreviation');

# The reloadable settings are checked at start as strictly as the node ids:
# PostgreSQL would warn and use the default.
refuses_to_start(
	"snowflake.max_lead = '1 hour'",
	qr/FATAL:  invalid value for parameter "snowflake.max_lead": "1 hour"\n.*DETAIL:  "snowflake.max_lead" must be a duration from 0 to 2147483647ms/,
	'max_lead with a unit PostgreSQL does not know');
refuses_to_start(
	"snowflake.max_lead = '30d'",
	qr/FATAL:  invalid value for parameter "snowflake.max_lead": "30d"/,
	'max_lead beyond its range');
refuses_to_start(
	'snowflake.max_clock_wait = -5',
	qr/FATAL:  invalid value for parameter "snowflake.max_clock_wait": "-5"\n.*DETAIL:  "snowflake.max_clock_wait" must be a duration from 0 to 1h\./,
	'a negative max_clock_wait');
refuses_to_start(
	"snowflake.max_clock_jump = '1 day'",
	qr/FATAL:  invalid value for parameter "snowflake.max_clock_jump": "1 day"/,
	'a max_clock_jump that does not parse');
refuses_to_start(
	'snowflake.enabled = maybe',
	qr/FATAL:  invalid value for parameter "snowflake.enabled": "maybe"\n.*DETAIL:  "snowflake.enabled" must be a Boolean value\./,
	'an enabled that is not a Boolean');
refuses_to_start(
	"snowflake.uninstall_lsn = '0/0'",
	qr/FATAL:  parameter "snowflake.uninstall_lsn" cannot be changed/,
	'the read-only uninstall_lsn');

# A real setting spelt with capitals is honoured.
write_conf("SnowFlake.Worker_ID = 7\n");
start_node($node);
is($node->safe_psql('postgres', 'SHOW snowflake.worker_id'),
	'7', 'a setting spelt with capitals is honoured');

# What the next start would refuse is warned about at a reload, when the
# change is made, not at some later restart.
$node->append_conf('postgresql.conf',
	"Snowflake.Wokrer_Id = 3\nsnowflake.max_lead = '30d'\n");
my $reload_offset = -s $node->logfile;
$node->reload;
ok( $node->wait_for_log(
		qr/WARNING:  unrecognized configuration parameter "Snowflake.Wokrer_Id" in file ".*postgresql.conf" line \d+\n.*DETAIL:  "snowflake" is a reserved prefix\.\n.*HINT:  The next server start will refuse it\./,
		$reload_offset),
	'a reload warns about a misspelt setting that the next start will refuse');
ok( $node->log_contains(
		qr/WARNING:  invalid value for parameter "snowflake.max_lead": "30d"\n.*DETAIL:  .*\n.*HINT:  The next server start will refuse it\./,
		$reload_offset),
	'... and about a value out of range');
$node->stop;

# Valid settings, in both forms of the epoch, are taken as given.
write_conf($valid_conf);
start_node($node);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# A bad epoch in a reload is refused with a message; the server stays up
# (PostgreSQL checks server-start settings on every reload too).
$node->append_conf('postgresql.conf',
	"snowflake.epoch = '2015-01-01 00:00:00 Europe/Nowhere'");
my $log_offset = -s $node->logfile;
$node->reload;
$node->poll_query_until('postgres', 'SELECT true');
like(
	slurp_file($node->logfile, $log_offset),
	qr/invalid value for parameter "snowflake.epoch": "2015-01-01 00:00:00 Europe\/Nowhere"\n.*DETAIL:  The epoch's time zone is not recognized\./,
	'an unknown time zone in a reloaded epoch is reported');
is($node->safe_psql('postgres', 'SELECT 1'), '1',
	'and the server keeps running');
write_conf($valid_conf);
$node->reload;

is( $node->safe_psql(
		'postgres', q{
SET TimeZone = 'UTC';
SHOW snowflake.epoch;
SELECT datacenter_id, worker_id, abs(extract(epoch FROM ts - now())) < 60
FROM snowflake_parse(snowflake_next_id());}),
	"2015-01-01 00:00:00+00\n31|30|t",
	'an epoch in milliseconds is shown as a timestamp; node ids are used');
$node->stop;

# Without the preload: CREATE EXTENSION and decoding work, generating is
# refused with SQLSTATE 55000 and a hint that names the setting.
$base_conf =~ s/^shared_preload_libraries.*$//m;
write_conf('');
start_node($node);
$node->safe_psql('postgres', 'DROP EXTENSION snowflake');
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'\set VERBOSITY verbose' . "\n" . 'SELECT snowflake_next_id()');
isnt($ret, 0, 'generating without the preload fails');
like(
	$stderr,
	qr/ERROR:  55000: snowflake must be loaded via "shared_preload_libraries" to generate IDs\n.*HINT:  Add snowflake to "shared_preload_libraries"/s,
	'the error names the missing setting');
is( $node->safe_psql(
		'postgres',
		"SET TimeZone = 'UTC'; SELECT ts FROM snowflake_parse(4194304)"),
	'2010-11-04 01:42:54.658+00',
	'decoding works without the preload');

# A width that is not valid, without the preload: decoding says so rather
# than use the default layout; a reload with a valid one mends it.
$node->append_conf('postgresql.conf', "snowflake.time_bits = 70\n");
$node->reload;
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SELECT * FROM snowflake_parse(4194304)');
like(
	$stderr,
	qr/ERROR:  invalid value for parameter "snowflake.time_bits": "70"\n.*DETAIL:  "snowflake.time_bits" must be an integer from 32 to 63\./,
	'without the preload, a bad width makes decoding fail with the reason');
$node->append_conf('postgresql.conf', "snowflake.time_bits = 41\n");
$node->reload;
$node->poll_query_until('postgres',
	"SELECT (snowflake_parse(4194304)).sequence = 0");
is($node->safe_psql('postgres', 'SELECT (snowflake_parse(4194304)).ts IS NOT NULL'),
	't', '... until a reload gives a valid one');
$node->stop;

done_testing();
