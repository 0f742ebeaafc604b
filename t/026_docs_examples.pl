
# Copyright (c) 2026, the snowflake authors
#
# Every SQL example of the documentation runs as written.  The ```sql blocks
# of README.md and of each page of docs/ are run in order, through psql, on
# a throwaway server started as scripts/quickstart.sh starts its own (its
# initdb options and its settings: the preload, datacenter 1, worker 1):
#
#  - in a fresh database: the README's blocks, then each page's;
#  - in the quick start's database, where a newcomer pastes them: a fresh
#    database that scripts/quickstart.sql (the quick start's demo) set up,
#    then the README's blocks from "Getting started" on, then each page's.
#
# Any error or warning fails the page it came from.  Where a page shows a
# statement's output, as comment lines right under it (no blank line
# between), psql must print that output, up to IDs and times: a number of
# 15 to 19 digits stands for any ID, a timestamp for any timestamp.  Lines
# are compared with their runs of spaces collapsed (aligned columns are as
# wide as their values), without psql's "(N rows)", and without the header
# where the page shows none.  "..." in a line stands for any text, and a
# line of "..." alone for any number of lines.
#
# A block that cannot run here (it needs a registry, a second server,
# Patroni, root, a package the quick start does not install, or a psql
# variable from outside) says so, with the reason, in an HTML comment on the
# line before its fence: <!-- not run: REASON -->.
#
# It also holds the quick start and the README to one schema, and the
# comments of the extension's functions and views (\df+, \dv+) to the first
# sentence of their rows in docs/functions.md's reference.
use strict;
use warnings;

use File::Spec;
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX qw(strftime);
use Time::Local qw(timegm);

my $top = "$FindBin::RealBin/..";

my @pages = (
	'README.md',
	map { File::Spec->abs2rel($_, $top) } sort glob("$top/docs/*.md"));

#
# Reading the pages
#

# the code part of a line of SQL: without a trailing -- comment outside
# quotes
sub code_part
{
	my ($line) = @_;
	my $quoted = 0;
	for (my $i = 0; $i < length $line; $i++)
	{
		my $c = substr($line, $i, 1);
		$quoted = !$quoted if $c eq "'";
		return substr($line, 0, $i) if !$quoted && substr($line, $i, 2) eq '--';
	}
	return $line;
}

# whether a line ends a statement: a semicolon, or a psql meta-command
# (\gset, \gexec, or a line of its own such as \dconfig)
sub ends_statement
{
	my ($line) = @_;
	return 1 if $line =~ /^\s*\\/;
	return code_part($line) =~ /(?:;|\\g\w*)\s*$/;
}

# The ```sql blocks of a page, in order: its page, the page's line of its
# first line, its lines (without the indentation of its fence), and why it
# is not run (undef: it is).  Also what is wrong with the page's "not run"
# marks: one without a reason, or one that marks no sql block.
sub sql_blocks
{
	my ($page) = @_;
	my @lines = split /\n/, slurp_file("$top/$page");
	my (@blocks, @wrong, $block, $fence, $indent, $mark);
	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];
		if (defined $fence)
		{
			if ($line =~ /^\s*\Q$fence\E\s*$/)
			{
				push @blocks, $block if $block;
				undef $block;
				undef $fence;
			}
			elsif ($block)
			{
				$line =~ s/^ {0,$indent}//;
				push @{ $block->{lines} }, $line;
			}
			next;
		}
		if ($line =~ /^(\s*)(```+|~~~+)\s*(\S*)\s*$/)
		{
			($indent, $fence) = (length $1, $2);
			if (lc $3 eq 'sql')
			{
				$block = {
					page => $page,
					line => $i + 2,
					lines => [],
					not_run => defined $mark ? $mark->[1] : undef
				};
			}
			elsif (defined $mark)
			{
				push @wrong, "$page:$mark->[0]: a \"not run\" mark before a block that is not sql";
			}
			undef $mark;
			next;
		}
		next if $line =~ /^\s*$/;
		if (defined $mark)
		{
			push @wrong, "$page:$mark->[0]: a \"not run\" mark that marks no block";
			undef $mark;
		}
		if ($line =~ /<!--\s*not run\b:?\s*(.*?)\s*-->/)
		{
			$mark = [ $i + 1, $1 ];
			push @wrong, "$page:$mark->[0]: a \"not run\" mark without a reason"
			  if $1 eq '';
		}
	}
	push @wrong, "$page:$mark->[0]: a \"not run\" mark that marks no block"
	  if defined $mark;
	return (\@blocks, \@wrong);
}

# The statements of a block whose output the page shows: for each, the
# indexes of its first and last lines in the block, the page's line of the
# output, and the output's lines (comment lines right under the statement,
# without their "-- ").
sub shown_outputs
{
	my ($block) = @_;
	my @lines = @{ $block->{lines} };
	my (@shown, $start, $dollar);
	my $i = 0;
	while ($i < @lines)
	{
		my $line = $lines[$i];
		if (!defined $start)
		{
			if ($line =~ /^\s*(?:--.*)?$/)
			{
				$i++;
				next;
			}
			$start = $i;
		}
		foreach my $tag (code_part($line) =~ /(\$[A-Za-z_]*\$)/g)
		{
			if (!defined $dollar) { $dollar = $tag; }
			elsif ($tag eq $dollar) { undef $dollar; }
		}
		if (defined $dollar || !ends_statement($line))
		{
			$i++;
			next;
		}
		my @output;
		my $j = $i + 1;
		while ($j < @lines && $lines[$j] =~ /^--(?: (.*))?$/)
		{
			push @output, $1 // '';
			$j++;
		}
		push @shown,
		  {
			start => $start,
			end => $i,
			line => $block->{line} + $i + 1,
			output => \@output
		  }
		  if @output;
		undef $start;
		$i = $j;
	}
	return @shown;
}

#
# Comparing output
#

# An ID or a time of this run, which the page cannot know, is one of the
# day of the run: a time, or the time of an ID of the quick start's layout
# and epoch (Twitter's), between a day before the test started and a day
# after now.  Other IDs and times, those that the examples compute from
# their constants, are compared as they are.
my $id_pattern = qr/(?<![\w.])\d{15,19}(?![\w.])/;
my $time_pattern =
  qr/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d(?::?\d\d)?)?/;
my $twitter_epoch_ms = 1288834974657;

sub of_this_run
{
	my ($seconds) = @_;
	return $seconds >= $^T - 86400 && $seconds <= time() + 86400;
}

sub id_of_this_run
{
	my ($id) = @_;
	return of_this_run((int($id / 4194304) + $twitter_epoch_ms) / 1000);
}

sub time_of_this_run
{
	my ($year, $month, $day, $hour, $minute, $second, $zone) = $_[0] =~
	  /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d+)?(Z|[+-]\d\d(?::?\d\d)?)?$/;
	my $seconds = eval {
		timegm($second, $minute, $hour, $day, $month - 1, $year);
	} // return 0;
	if (defined $zone && $zone =~ /^([+-])(\d\d):?(\d\d)?$/)
	{
		$seconds -= ($1 eq '-' ? -1 : 1) * ($2 * 3600 + ($3 // 0) * 60);
	}
	return of_this_run($seconds);
}

# a line as compared: spaces collapsed, an aligned table's separator line
# shortened
sub normalise
{
	my ($line) = @_;
	$line =~ s/^\s+|\s+$//g;
	$line =~ s/\s+/ /g;
	$line =~ s/-+/-/g if $line =~ /^-+(?:\+-+)*$/;
	return $line;
}

# a printed line as compared: normalised, with the times and IDs of this
# run replaced by <time> and <id>
sub printed_line
{
	my ($line) = @_;
	$line = normalise($line);
	$line =~ s/($time_pattern)/time_of_this_run($1) ? '<time>' : $1/ge;
	$line =~ s/($id_pattern)/id_of_this_run($1) ? '<id>' : $1/ge;
	return $line;
}

sub is_separator { return $_[0] =~ /^-(?:\+-)*$/; }

# whether one shown line matches one printed line: "..." stands for any
# text, and a time or an ID of the page for itself or for one of this run
sub line_matches
{
	my ($shown, $printed) = @_;
	my @pieces;
	foreach my $piece (split /\.\.\./, $shown, -1)
	{
		my $pattern = '';
		foreach my $part (split /($time_pattern|$id_pattern)/, $piece)
		{
			next unless defined $part;
			if ($part =~ /^$time_pattern$/)
			{
				$pattern .= '(?:' . quotemeta($part) . '|<time>)';
			}
			elsif ($part =~ /^$id_pattern$/)
			{
				$pattern .= '(?:' . quotemeta($part) . '|<id>)';
			}
			else
			{
				$pattern .= quotemeta($part);
			}
		}
		push @pieces, $pattern;
	}
	my $pattern = join '.*', @pieces;
	return $printed =~ /^$pattern$/;
}

# whether the shown lines match the printed ones, a line "..." standing for
# any number of lines
sub lines_match
{
	my ($shown, $printed) = @_;
	return !@$printed unless @$shown;
	my ($first, @rest) = @$shown;
	if ($first eq '...')
	{
		foreach my $k (0 .. scalar @$printed)
		{
			return 1
			  if lines_match(\@rest, [ @$printed[ $k .. $#$printed ] ]);
		}
		return 0;
	}
	return 0 unless @$printed && line_matches($first, $printed->[0]);
	return lines_match(\@rest, [ @$printed[ 1 .. $#$printed ] ]);
}

# whether psql's output of a statement is the one the page shows
sub output_matches
{
	my ($shown, $printed) = @_;
	my @shown = grep { $_ ne '' && !/^\(\d+ rows?\)$/ } map { normalise($_) } @$shown;
	my @printed =
	  grep { $_ ne '' && !/^\(\d+ rows?\)$/ } map { printed_line($_) } @$printed;
	splice(@printed, 0, 2)
	  if !grep({ is_separator($_) } @shown)
	  && @printed >= 2
	  && is_separator($printed[1]);
	return lines_match(\@shown, \@printed);
}

# the comparison itself, on outputs of this documentation, and that it can
# fail
ok( output_matches(
		[ 'INV-2017091509350484802050000' ],
		[ ' snowflake_serial ', '---------', ' INV-2017091509350484802050000', '(1 row)', '' ]),
	'comparison: a value without its header');
ok( !output_matches(
		[ 'INV-2017091509350484802050000' ],
		[ ' snowflake_serial ', '---------', ' INV-2017091509350484802050001', '(1 row)' ]),
	'comparison: a digit off fails');
# a time and an ID of now, as the server prints them
my $now = strftime('%Y-%m-%d %H:%M:%S', gmtime) . '.123+00';
my $now_id = (int(time() * 1000) - $twitter_epoch_ms) * 4194304 + (1 << 17) + (1 << 12);
ok( output_matches(
		[
			'             ts             | datacenter_id | worker_id | sequence',
			'----------------------------+---------------+-----------+----------',
			' 2016-04-30 11:18:25.796+00 |             1 |         0 |        7'
		],
		[
			'           ts            | datacenter_id | worker_id | sequence ',
			'-------------------------+---------------+-----------+----------',
			" $now |             1 |         0 |        7 ",
			'(1 row)'
		]),
	'comparison: a table, up to a time of this run and column widths');
ok( !output_matches(
		[ ' 2016-04-30 11:18:25.796+00 |             1 |         0 |        7' ],
		[ ' ts | datacenter_id | worker_id | sequence', '---+---+---+---',
			" $now | 1 | 1 | 7" ]),
	'comparison: another worker fails');
ok( !output_matches(
		[ ' 2016-04-30 11:18:25.796+00' ], [ ' 2016-04-30 11:18:25.797+00' ]),
	'comparison: a time that is not of this run is compared');
ok( output_matches(
		[ '{"id": "2126221290644836352", "ts": "2026-11-01T09:35:04.848Z", "sequence": 0}' ],
		[ qq({"id": "$now_id", "ts": "${\ substr($now, 0, 10)}T00:00:00.001Z", "sequence": 0}) ]),
	'comparison: IDs and times of this run in JSON');
ok( !output_matches([ '908625204492914688' ], [ '908625204492914689' ]),
	'comparison: an ID that is not of this run is compared');
ok( output_matches(
		[ ' Append', ' ->  Seq Scan on events_20261102 events_1', '...' ],
		[ 'QUERY PLAN', '----', ' Append', '   ->  Seq Scan on events_20261102 events_1',
			'         Filter: (id >= 1)', '(3 rows)' ]),
	'comparison: a line of "..." stands for the rest');
ok( output_matches(
		[ '   Index Cond: ((id >= snowflake_between_min_id(...)) AND (id <= snowflake_between_max_id(...)))' ],
		[ '   Index Cond: ((id >= snowflake_between_min_id(1, 2)) AND (id <= snowflake_between_max_id(1, 2)))' ]),
	'comparison: "..." in a line stands for any text');
ok( !output_matches(
		[ ' Index Scan using orders_pkey on orders' ],
		[ 'QUERY PLAN', '----', ' Seq Scan on orders', '   Filter: (id >= 1)' ]),
	'comparison: another plan fails');

#
# The pages
#

my (%blocks, $shown_count);
foreach my $page (@pages)
{
	my ($blocks, $wrong) = sql_blocks($page);
	ok(!@$wrong, "$page: every \"not run\" mark gives a reason and marks an sql block")
	  or diag(join("\n", @$wrong));
	note "$page: $_->{line}: not run: $_->{not_run}"
	  foreach grep { defined $_->{not_run} } @$blocks;
	$blocks{$page} = [ grep { !defined $_->{not_run} } @$blocks ];
	$shown_count += scalar(shown_outputs($_)) foreach @{ $blocks{$page} };
}
cmp_ok(scalar(map { @$_ } values %blocks), '>=', 25, 'the pages have sql blocks to run');
cmp_ok($shown_count, '>=', 10, "the pages show outputs to compare ($shown_count)");

# the README's blocks from "Getting started" on: what a newcomer pastes into
# the quick start's database
my @readme = split /\n/, slurp_file("$top/README.md");
my ($getting_started) =
  grep { $readme[ $_ - 1 ] =~ /^## Getting started\s*$/ } 1 .. @readme;
ok(defined $getting_started, 'README.md has "Getting started"');
$getting_started //= 0;

# the quick start and the README make the same tables
my $quickstart_sql = slurp_file("$top/scripts/quickstart.sql");
sub create_tables
{
	my ($text) = @_;
	my @tables = $text =~ /^(CREATE TABLE IF NOT EXISTS (?:orders|order_items) .*?^\);)/msg;
	s/\s+/ /g foreach @tables;
	return join("\n", @tables);
}
my $readme_tables = create_tables(
	join("\n",
		map { @{ $_->{lines} } }
		  grep { $_->{line} > $getting_started } @{ $blocks{'README.md'} }));
like($readme_tables, qr/orders.*order_items/s,
	"README.md's Getting started makes orders and order_items");
is(create_tables($quickstart_sql), $readme_tables,
	'scripts/quickstart.sql makes the tables of the README\'s Getting started');

# the migration recipe of docs/functions.md is the one sql/migrate.sql runs
my ($recipe) = slurp_file("$top/docs/functions.md") =~
  /^### Moving a serial or identity table to snowflake IDs\n(.*?)^## /ms;
my @recipe_blocks = ($recipe // '') =~ /^```sql\n(.*?)^```$/msg;
foreach my $file ([ 'test/migrate_tables.sql', 0 ], [ 'test/migrate_switch.sql', 1 ])
{
	(my $sql = slurp_file("$top/$file->[0]")) =~ s/\A(?:--.*\n)+//;
	is($sql, $recipe_blocks[ $file->[1] ] // '',
		"$file->[0] is block " . ($file->[1] + 1) . ' of the migration recipe, word for word');
}

#
# The server, as the quick start starts it
#

my $quickstart = slurp_file("$top/scripts/quickstart.sh");
my @initdb_extra = map { split / / }
  $quickstart =~ /\/initdb" .*?(-E \S+).*?(--locale=\S+)/s;
is(scalar @initdb_extra, 3, 'the quick start\'s initdb options: encoding and locale')
  or diag(join(' ', @initdb_extra));
my @settings = $quickstart =~ /^((?:shared_preload_libraries|snowflake\.\w+) = .*)$/mg;
ok((grep { /^shared_preload_libraries = 'snowflake'$/ } @settings),
	'the quick start preloads snowflake') or diag(join("\n", @settings));

my $node = PostgreSQL::Test::Cluster->new('docs');
$node->init(extra => \@initdb_extra);
$node->append_conf('postgresql.conf', join("\n", @settings) . "\n");
$node->start;

# Runs blocks (and, first, the SQL text $prelude) in a new database $db with
# one psql, and checks them: no error or warning, and each shown output.
sub run_blocks
{
	my ($db, $where, $prelude, @blocks) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");

	# the script, with the page and line of each of its lines, and markers
	# around the statements whose output the pages show
	my (@script, @origin, @checks);
	my $add = sub { push @script, $_[0]; push @origin, $_[1]; };
	$add->($_, 'scripts/quickstart.sql') foreach split /\n/, $prelude;
	foreach my $block (@blocks)
	{
		my %around;
		foreach my $shown (shown_outputs($block))
		{
			push @checks, { %$shown, page => $block->{page} };
			$around{ $shown->{start} }{begin} = $#checks;
			$around{ $shown->{end} }{end} = $#checks;
		}
		my $n = 0;
		foreach my $line (@{ $block->{lines} })
		{
			my $origin = "$block->{page}:" . ($block->{line} + $n);
			$add->("\\echo '\@\@begin $around{$n}{begin}'", $origin)
			  if defined $around{$n}{begin};
			$add->($line, $origin);
			$add->("\\echo '\@\@end $around{$n}{end}'", $origin)
			  if defined $around{$n}{end};
			$n++;
		}
	}
	my $file = "${PostgreSQL::Test::Utils::tmp_check}/docs_$db.sql";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh join("\n", @script), "\n";
	close $fh;

	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-h', $node->host, '-p', $node->port,
			'-d', $db, '-f', $file
		],
		'<', \undef, '>', \$stdout, '2>', \$stderr);
	is($?, 0, "psql ran every block ($where)");

	# errors and warnings, by page
	my %errors;
	my $last;
	foreach my $line (split /\n/, $stderr)
	{
		if ($line =~ /^psql:\Q$file\E:(\d+): (?:(\w+):\s+)?(.*)$/)
		{
			my ($n, $level, $text) = ($1, $2 // '', $3);
			undef $last;
			next if $level =~ /^(?:NOTICE|INFO|LOG|DEBUG\d?)$/;
			my ($page) = $origin[ $n - 1 ] =~ /^([^:]+)/;
			push @{ $errors{$page} }, "$origin[$n - 1]: $level: $text";
			$last = $errors{$page};
		}
		elsif ($last && $line =~ /^(?:DETAIL|HINT|CONTEXT|LINE \d+):/)
		{
			push @$last, "    $line";
		}
	}
	foreach my $page (
		($prelude ne '' ? ('scripts/quickstart.sql') : ()),
		@pages)
	{
		ok(!$errors{$page}, "$page: no error or warning ($where)")
		  or diag(join("\n", @{ $errors{$page} }));
	}

	# the outputs the pages show
	my %printed;
	while ($stdout =~ /^\@\@begin (\d+)\n(.*?)^\@\@end \1\n/msg)
	{
		$printed{$1} = [ split /\n/, $2 ];
	}
	foreach my $k (0 .. $#checks)
	{
		my $check = $checks[$k];
		my $printed = $printed{$k} // [];
		ok( output_matches($check->{output}, $printed),
			"$check->{page}:$check->{line}: the output shown ($where)")
		  or diag(
			join("\n",
				'the page shows:', @{ $check->{output} },
				'psql printed:', @$printed));
	}
}

my @docs_blocks =
  map { @{ $blocks{$_} } } grep { $_ ne 'README.md' && $blocks{$_} } @pages;
run_blocks('docs_fresh', 'a fresh database', '', @{ $blocks{'README.md'} },
	@docs_blocks);
run_blocks('docs_quickstart', "the quick start's database", $quickstart_sql,
	(grep { $_->{line} > $getting_started } @{ $blocks{'README.md'} }),
	@docs_blocks);

#
# \df+ and \dv+ say what docs/functions.md's reference says
#

# the reference's rows: for each function name and number of arguments, or
# view, the first sentence of what it does, without marks, links and
# versions
my %sentence;
foreach my $row (split /\n/, slurp_file("$top/docs/functions.md"))
{
	next unless $row =~ /^\| `snowflake_/;
	my (undef, $names, undef, undef, $does) = split /\s*\|\s*/, $row;
	my ($first) = $does =~ /^(.*?[.?])(?:\s|$)/;
	$first =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;
	$first =~ s/`//g;
	$first =~ s/ \(\d+\.\d+(?:; \d+\.\d+)*\)(?=[.?]$)//;
	my @arities;
	while ($names =~ /(view )?`(snowflake_\w+)(?:\(([^)]*)\))?`/g)
	{
		my ($view, $name, $args) = ($1, $2, $3);
		if ($view)
		{
			$sentence{"view $name"} = $first;
			next;
		}
		if ($args ne '...')
		{
			my ($required, $optional) = $args =~ /^([^[]*)(?:\[(.*)\])?$/;
			my $count = sub { my @a = grep { /\S/ } split /,/, $_[0] // ''; scalar @a };
			@arities = ($count->($required));
			push @arities, $count->($required) + $count->($optional)
			  if defined $optional;
		}
		$sentence{"$name/$_"} = $first foreach @arities;
	}
}

my $described = $node->safe_psql(
	'docs_fresh', q{
SELECT string_agg(object || E'\t' || coalesce(description, ''), E'\n' ORDER BY object)
FROM (SELECT p.proname || '/' || p.pronargs AS object,
			 obj_description(p.oid, 'pg_proc') AS description
	  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	  WHERE d.deptype = 'e'
		AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
	  UNION ALL
	  SELECT 'view ' || c.relname, obj_description(c.oid, 'pg_class')
	  FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
	  WHERE d.deptype = 'e' AND c.relkind = 'v'
		AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')) o
WHERE object !~ 'snowflake_registry_' AND object !~ '^snowflake_shared_pairs/'});
my $compared = 0;
foreach my $line (split /\n/, $described)
{
	my ($object, $description) = split /\t/, $line, 2;
	is($description, $sentence{$object} // '(no row in the reference)',
		"the comment of $object is its first sentence in docs/functions.md");
	$compared++;
}
cmp_ok($compared, '>=', 25, "comments compared ($compared)");

$node->stop;
done_testing();
