
# Copyright (c) 2026, the snowflake authors

# pg_upgrade from an older major keeps the high-water mark.
#
# pg_upgrade copies no file of snowflake's, so the new cluster starts
# without the old cluster's snowflake.mark.  Started with its clock a day
# behind, it would hand out IDs a day below the old ones.  Instead the
# restore leaves snowflake.upgraded, and the new cluster refuses to generate
# (55000) until the old mark is copied in, as docs/operations.md says; then
# it resumes above every ID the old cluster issued, with the clock a day
# behind.  A standby copied from the new cluster before the mark was (as
# PostgreSQL's rsync recipe for standbys does) ends its refusal with the
# first mark it replays, and after a promotion resumes above every ID too.
# A second upgrade, into a cluster that does not preload snowflake during
# pg_upgrade and had a mark of its own, shows that the restore leaves the
# file then too, sets that mark aside, and that the documented way out for
# a lost mark (remove snowflake.upgraded) lets the cluster generate.
#
# Needs SNOWFLAKE_UPGRADE_FROM_BINDIR: the bin directory of an older
# PostgreSQL major with snowflake installed (for example
# /usr/lib/postgresql/15/bin), or several, separated by colons; the
# PostgreSQL the tests run against is the new one.  All of the above runs
# from each of them in turn.  A directory that is no such installation, or
# whose major is not older, is skipped, and the whole test without one
# that is.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Copy     qw(copy);
use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# the major version a pg_config reports
sub pg_major
{
	my ($pg_config) = @_;
	my $version = `"$pg_config" --version 2>/dev/null` // '';
	return $version =~ /^PostgreSQL (\d+)/ ? $1 : undef;
}

my $new_major = pg_major('pg_config');
plan skip_all => 'cannot tell the major of the running PostgreSQL'
  unless defined $new_major;

# why pg_upgrade cannot run from the installation of the bin directory
# old_bindir to the running PostgreSQL; undef when it can
sub cannot_upgrade_from
{
	my ($old_bindir) = @_;
	my $old_install = dirname($old_bindir);

	return 'it has no pg_config, or is not the bin directory of an '
	  . 'installation'
	  unless -x "$old_bindir/pg_config" && -x "$old_install/bin/pg_config";
	my $old_major = pg_major("$old_bindir/pg_config");
	return 'cannot tell its major' unless defined $old_major;
	return "the running PostgreSQL $new_major is not newer than its "
	  . "PostgreSQL $old_major"
	  unless $new_major > $old_major;
	my $old_pkglibdir = `"$old_bindir/pg_config" --pkglibdir`;
	chomp $old_pkglibdir;
	return "snowflake is not installed in its PostgreSQL $old_major "
	  . "($old_pkglibdir/snowflake.so)"
	  unless -f "$old_pkglibdir/snowflake.so";
	return undef;
}

my (@old_bindirs, @unusable);
foreach my $old_bindir (split /:/, $ENV{SNOWFLAKE_UPGRADE_FROM_BINDIR} // '')
{
	next if $old_bindir eq '';
	$old_bindir =~ s{/+$}{};
	my $why = cannot_upgrade_from($old_bindir);
	if (defined $why)
	{
		push @unusable, "SNOWFLAKE_UPGRADE_FROM_BINDIR=$old_bindir: $why";
	}
	else
	{
		push @old_bindirs, $old_bindir;
	}
}
plan skip_all => 'SNOWFLAKE_UPGRADE_FROM_BINDIR names no bin directory of '
  . 'an older PostgreSQL major with snowflake installed'
  . join('', map { "; $_" } @unusable)
  unless @old_bindirs;
skip_without_libfaketime();

my $new_bindir = `pg_config --bindir`;
chomp $new_bindir;
my $day_ms = 86_400_000;

# pg_upgrade from the cluster old of the installation of old_bindir into
# new, as an operator runs it, with any extra options, from a directory of
# the test's own (it writes its delete script there)
sub run_pg_upgrade
{
	my ($old, $old_bindir, $new, $test_name, @options) = @_;
	my $cwd = $new->basedir . '/upgrade';
	mkdir $cwd;
	chdir $cwd or die "could not chdir to $cwd: $!";
	command_ok(
		[
			'pg_upgrade', '--no-sync',
			'--old-datadir' => $old->data_dir,
			'--new-datadir' => $new->data_dir,
			'--old-bindir' => $old_bindir,
			'--new-bindir' => $new_bindir,
			'--socketdir' => $new->host,
			'--old-port' => $old->port,
			'--new-port' => $new->port,
			@options
		],
		$test_name);
	chdir $FindBin::RealBin;
	return;
}

# Every step of the test, from the installation of old_bindir.  The names
# of its nodes and tests start with the old major.
sub test_upgrade_from
{
	my ($old_bindir) = @_;
	my $old_major = pg_major("$old_bindir/pg_config");
	my $from = "from $old_major";

	# Checksums on in both clusters: initdb's default changed in 18, and
	# pg_upgrade wants the two to match.
	my $old = snowflake_node(
		"old$old_major",
		install_path => dirname($old_bindir),
		initdb_extra => ['--data-checksums']);
	start_node($old);
	foreach my $db ('postgres', 'shop')
	{
		$old->safe_psql('postgres', "CREATE DATABASE $db")
		  if $db ne 'postgres';
		$old->safe_psql(
			$db, q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (
	n bigint GENERATED ALWAYS AS IDENTITY,
	id bigint NOT NULL DEFAULT snowflake_next_id() UNIQUE,
	phase text NOT NULL);
INSERT INTO orders (phase) SELECT 'old' FROM generate_series(1, 10000);
});
	}

	# Debian's PostgreSQL 15.20 (bookworm-security) stores an attribute
	# option pg_attver=<number> on every column it creates, which no later
	# major knows: pg_upgrade to 18.6 then fails in the schema restore, on
	# the first table (ERROR:  unrecognized parameter "pg_attver"), whatever
	# the extensions.  ALTER TABLE ... RESET does not remove it, so where it
	# is there the test strips it from the catalog, to test what snowflake
	# does across pg_upgrade.  PostgreSQL's own builds store none.
	foreach my $db ('postgres', 'shop')
	{
		my $stripped = $old->safe_psql(
			$db, q{
WITH s AS (
	UPDATE pg_catalog.pg_attribute
	SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(attoptions) o
								  WHERE o NOT LIKE 'pg\_attver=%'), '{}')
	WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg\_attver=%'
	RETURNING 1)
SELECT count(*) FROM s});
		note "$from: $db: stripped pg_attver from $stripped columns"
		  if $stripped;
	}

	my $old_max = $old->safe_psql('postgres',
		"SELECT max(id) FROM orders WHERE phase = 'old'");
	$old_max = $old->safe_psql('shop',
		"SELECT greatest($old_max, max(id)) FROM orders WHERE phase = 'old'");
	like($old_max, qr/^\d+$/,
		"$from: PostgreSQL $old_major issued IDs in two databases");
	$old->stop;
	my $old_mark_path = $old->data_dir . '/snowflake.mark';
	my $old_mark = read_mark_file($old_mark_path);
	is( $old_mark->{mark_ms},
		id_ms($old_max) + 1,
		"$from: the old cluster shut down with its mark just past its newest ID"
	);

	# The new cluster preloads snowflake, with the same node ids, and its
	# clock is a day behind whenever it runs outside pg_upgrade.  It keeps
	# its WAL for the standby made from it below, which starts late.
	my $new = snowflake_node(
		"new$old_major",
		allows_streaming => 1,
		initdb_extra => ['--data-checksums'],
		offset => -86400,
		extra_conf => "wal_keep_size = '128MB'\n");
	run_pg_upgrade($old, $old_bindir, $new,
		"$from: pg_upgrade from $old_major to $new_major with snowflake in use"
	);

	my $new_data = $new->data_dir;
	ok(-f "$new_data/snowflake.upgraded",
		"$from: the restore left snowflake.upgraded in the new data directory"
	);
	ok(!-e "$new_data/snowflake.mark", "$from: ... and pg_upgrade copied no mark");
	like(
		-f "$new_data/snowflake.upgraded"
		? slurp_file("$new_data/snowflake.upgraded")
		: '',
		qr/copy snowflake\.mark from the old cluster's data\s+directory into this one/,
		"$from: ... the file says what to do");
	is(read_mark_file($old_mark_path)->{mark_ms},
		$old_mark->{mark_ms},
		"$from: pg_upgrade's start of the old cluster left its mark");
	ok(!-e $old->data_dir . '/snowflake.upgraded',
		"$from: ... and left no snowflake.upgraded in the old cluster");

	# A standby copied from the new cluster before the mark is (PostgreSQL's
	# recipe for standbys runs rsync before the new primary starts).
	$new->backup_fs_cold('upgraded');
	my $standby = snowflake_standby($new, 'upgraded', "standby$old_major",
		offset => -86400);

	# (a) Started without the old mark, with the clock a day behind: refused.
	start_node($new);
	check_clock_offset($new, -86400,
		"$from: the new cluster runs a day behind");
	my ($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($new, "INSERT INTO orders (phase) VALUES ('refused')");
	isnt($ret, 0, "$from: without the old mark the new cluster refuses IDs");
	like(
		$stderr,
		qr/ERROR:  55000: snowflake high-water mark file "snowflake\.mark" is missing after pg_upgrade/,
		"$from: ... with SQLSTATE 55000: the mark is missing after pg_upgrade");
	like(
		$stderr,
		qr/DETAIL:  pg_upgrade made this cluster from one that had snowflake, and does not copy the mark file; "snowflake\.upgraded" records the upgrade\./,
		"$from: ... a detail that says why");
	like(
		$stderr,
		qr/HINT:  Stop the server, copy "snowflake\.mark" from the old cluster's data directory into this one, and start the server again\. If the old cluster's mark is lost, wait until the clock is past every ID the old cluster issued, then remove "snowflake\.upgraded" and restart\./,
		"$from: ... and a hint that names the step, and what to do without the mark"
	);
	is( $new->safe_psql(
			'shop',
			"SELECT mark_invalid, durable_mark IS NULL FROM snowflake_status"),
		't|t',
		"$from: snowflake_status shows the refusal");
	ok( $new->log_contains(
			'snowflake high-water mark file "snowflake.mark" is missing after pg_upgrade; ID generation is disabled'
		),
		"$from: the server log says so at the start");
	$new->stop;
	ok( !-e "$new_data/snowflake.mark" && -f "$new_data/snowflake.upgraded",
		"$from: a clean shutdown wrote no mark of its own, and kept snowflake.upgraded"
	);

	# (b) The documented step: copy the old cluster's mark, then start.
	copy($old_mark_path, "$new_data/snowflake.mark")
	  or die "could not copy the mark: $!";
	chmod 0600, "$new_data/snowflake.mark";
	my $log_offset = -s $new->logfile;
	start_node($new);
	ok( $new->log_contains(
			'snowflake accepted the high-water mark file "snowflake.mark" copied after pg_upgrade',
			$log_offset),
		"$from: the new cluster accepts the copied mark, and logs it");
	ok(!-e "$new_data/snowflake.upgraded",
		"$from: ... and removes snowflake.upgraded");

	# (c) The clock is a day behind the old IDs: the mark holds generation
	# back, as after any restart, until max_lead covers the step.
	($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($new, 'SELECT snowflake_next_id()');
	like(
		$stderr,
		qr/ERROR:  58000: could not generate a snowflake ID: the clock is behind/,
		"$from: with max_lead 0 the clock a day behind the old IDs is refused");
	my ($behind_ms) = $stderr =~ /The clock is (\d+) ms behind/;
	ok( defined $behind_ms
		  && $behind_ms > $day_ms - 3_600_000
		  && $behind_ms < $day_ms + 60_000,
		"$from: ... by a day")
	  or diag 'the detail says ' . ($behind_ms // 'nothing');
	alter_system($new, 'snowflake.max_lead' => '2d');
	foreach my $db ('postgres', 'shop')
	{
		$new->safe_psql($db,
			"INSERT INTO orders (phase) SELECT 'new' FROM generate_series(1, 10000)"
		);
	}
	my $new_max = 0;
	foreach my $db ('postgres', 'shop')
	{
		my $result = $new->safe_psql(
			$db, q{
SELECT count(*), count(DISTINCT id) FROM orders;
SELECT (SELECT min(id) FROM orders WHERE phase = 'new') >
	(SELECT max(id) FROM orders WHERE phase = 'old');
SELECT max(id) FROM orders;
SELECT extract(epoch FROM
	(SELECT (snowflake_parse(min(id))).ts FROM orders WHERE phase = 'new') -
	clock_timestamp()) BETWEEN 82800 AND 86460;
});
		my ($counts, $greater, $max, $ahead) = split /\n/, $result;
		is($counts, '20000|20000',
			"$from: $db: no ID repeats across the upgrade");
		is($greater, 't',
			"$from: $db: every ID after the upgrade is greater than every ID before"
		);
		check_strictly_increasing($new, 'orders',
			"$from: $db: IDs strictly increase in the order issued, across the upgrade"
		) if $db eq 'postgres';
		is($ahead, 't',
			"$from: $db: the new IDs lie a day ahead of the new cluster's clock, above the old mark"
		);
		$new_max = $max if $max > $new_max;
	}
	cmp_ok(
		$new->safe_psql(
			'postgres',
			"SELECT min(id) >> 22 FROM orders WHERE phase = 'new'"),
		'>=',
		$old_mark->{mark_ms},
		"$from: generation resumed at or above the old mark");
	is( $new->safe_psql(
			'postgres', 'SELECT mark_invalid FROM snowflake_status'),
		'f',
		"$from: snowflake_status no longer shows a refusal");

	# The standby copied before the mark: it refuses until it has replayed a
	# mark of its primary, which lies above the old cluster's.
	$standby->append_conf('postgresql.conf', "snowflake.max_lead = '2d'\n");
	start_node($standby);
	$new->wait_for_replay_catchup($standby);
	$standby->wait_for_log(
		qr/snowflake high-water mark replayed from WAL ends the refusal after pg_upgrade/
	);
	ok( !-e $standby->data_dir . '/snowflake.upgraded',
		"$from: the standby replayed a mark of its primary, and removed snowflake.upgraded"
	);
	is( $standby->safe_psql(
			'postgres', 'SELECT mark_invalid FROM snowflake_status'),
		'f',
		"$from: ... and no longer refuses");
	ok( $standby->log_contains(
			'snowflake high-water mark file "snowflake.mark" is missing after pg_upgrade; ID generation is disabled'
		),
		"$from: ... which it did at its start");
	$new->stop;
	$standby->promote;
	$standby->safe_psql('postgres',
		"INSERT INTO orders (phase) SELECT 'promoted' FROM generate_series(1, 1000)"
	);
	is( $standby->safe_psql(
			'postgres', qq{
SELECT min(id) > $new_max AND min(id) > $old_max FROM orders
WHERE phase = 'promoted'}),
		't',
		"$from: the promoted standby issues IDs above every ID before and after the upgrade"
	);
	$standby->stop;

	# In binary upgrade mode, as pg_upgrade starts it, the server issues no
	# ID, runs no mark writer (nor registry worker), and leaves the mark file
	# as it is at its shutdown.
	my $mark_bytes = slurp_file("$new_data/snowflake.mark");
	command_ok(
		[
			'pg_ctl', '--wait',
			'--pgdata' => $new_data,
			'--log' => $new->logfile,
			'--options' => '-b',
			'start'
		],
		"$from: the new cluster starts in binary upgrade mode");
	($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($new, 'SELECT snowflake_next_id()');
	like(
		$stderr,
		qr/ERROR:  55000: cannot generate snowflake IDs in binary upgrade mode/,
		"$from: ... where it refuses IDs");
	# a normal start has the mark writer running well within this second
	sleep 1;
	is( $new->safe_psql(
			'postgres', 'SELECT mark_writer_running FROM snowflake_status'),
		'f',
		"$from: ... and runs no mark writer");
	command_ok([ 'pg_ctl', '--wait', '--pgdata' => $new_data, 'stop' ],
		"$from: ... and stops");
	is(slurp_file("$new_data/snowflake.mark"),
		$mark_bytes, "$from: ... leaving the mark file as it was");

	# A second upgrade, with --link, into a cluster that does not preload
	# snowflake during pg_upgrade (its postgresql.conf gets the preload
	# afterwards, as often happens) and holds a mark of its own: the restore
	# loads the library to validate its C functions, leaves
	# snowflake.upgraded all the same, and sets that mark aside, since it is
	# not the old cluster's.  pg_upgrade --check restores nothing, and leaves
	# neither.
	my $bare = PostgreSQL::Test::Cluster->new("bare$old_major");
	$bare->init(extra => ['--data-checksums']);
	my $bare_data = $bare->data_dir;
	write_mark_file("$bare_data/snowflake.mark",
		mark_file_bytes(mark_ms => 1000));
	run_pg_upgrade($old, $old_bindir, $bare, "$from: pg_upgrade --check",
		'--check');
	ok( !-e "$bare_data/snowflake.upgraded"
		  && read_mark_file("$bare_data/snowflake.mark")->{mark_ms} == 1000,
		"$from: pg_upgrade --check leaves no snowflake.upgraded, and the mark in place"
	);
	run_pg_upgrade($old, $old_bindir, $bare,
		"$from: pg_upgrade --link into a cluster that does not preload snowflake",
		'--link');
	ok(-f $old_mark_path,
		"$from: the old cluster's mark stays in its data directory");
	ok(-f "$bare_data/snowflake.upgraded",
		"$from: the restore left snowflake.upgraded without the preload too");
	ok( !-e "$bare_data/snowflake.mark"
		  && read_mark_file("$bare_data/snowflake.mark.before-upgrade")
		  ->{mark_ms} == 1000,
		"$from: ... and set the mark found in the new cluster aside");
	$bare->append_conf(
		'postgresql.conf', q{
shared_preload_libraries = 'snowflake'
snowflake.datacenter_id = 6
snowflake.worker_id = 12
});
	$bare->start;
	($elapsed, $ret, $stdout, $stderr) =
	  psql_timed($bare, 'SELECT snowflake_next_id()');
	like(
		$stderr,
		qr/ERROR:  55000: snowflake high-water mark file "snowflake\.mark" is missing after pg_upgrade/,
		"$from: the cluster upgraded without the preload refuses IDs once preloaded"
	);

	# The old mark lost: once the clock is past every old ID (it is, here),
	# removing snowflake.upgraded lets the cluster generate from its clock.
	$bare->stop;
	unlink("$bare_data/snowflake.upgraded")
	  or die "could not remove snowflake.upgraded: $!";
	$bare->start;
	is( $bare->safe_psql(
			'postgres', qq{
INSERT INTO orders (phase) VALUES ('lost mark') RETURNING id > $old_max}),
		't',
		"$from: without snowflake.upgraded the cluster generates from its clock"
	);
	$bare->stop;
	return;
}

foreach my $reason (@unusable)
{
  SKIP:
	{
		skip "no pg_upgrade from $reason", 1;
	}
}
test_upgrade_from($_) foreach @old_bindirs;

done_testing();
