# Copyright (c) 2026, the snowflake authors
#
# The release metadata agrees with itself: META.json (PGXN's meta spec
# 1.0.0) parses and has what PGXN needs, the extension's version is the
# same in META.json, snowflake.control and debian/changelog, and the
# PostgreSQL majors that META.json and the README support are those that
# src/compat.h builds for and scripts/test.sh tests up to.  PGXN wants a
# semantic version, so "1.0" in the control file is "1.0.0" in META.json.
use strict;
use warnings;

use FindBin;
use JSON::PP;
use Test::More;

my $top = "$FindBin::RealBin/..";

sub slurp
{
	my ($path) = @_;
	open my $fh, '<', $path or die "could not read $path: $!";
	local $/;
	return <$fh>;
}

# "1.0" -> "1.0.0"
sub semver
{
	my ($version) = @_;
	$version .= '.0' while ($version =~ tr/.//) < 2;
	return $version;
}

my $meta = eval { decode_json(slurp("$top/META.json")) };
ok(defined $meta, 'META.json parses as JSON') or diag $@;
$meta //= {};

foreach my $key (qw(name abstract version maintainer license provides meta-spec))
{
	ok(defined $meta->{$key}, "META.json has \"$key\"");
}
is($meta->{name}, 'snowflake', 'META.json names the extension');
is($meta->{license}, 'postgresql', 'META.json gives the PostgreSQL License');
like(slurp("$top/LICENSE"), qr/^The PostgreSQL License$/m,
	'LICENSE is the PostgreSQL License');
is($meta->{'meta-spec'}{version}, '1.0.0', 'META.json follows meta spec 1.0.0');
like($meta->{version} // '', qr/^\d+\.\d+\.\d+$/,
	'META.json has a semantic version');

# The majors supported run from the oldest that src/compat.h accepts to the
# newest that scripts/test.sh tests as supported (not as a beta), in
# META.json and in the README.
my ($oldest) =
  slurp("$top/src/compat.h") =~ /^#if PG_VERSION_NUM < (\d+)0000\n#error/m;
my ($supported) =
  slurp("$top/scripts/test.sh") =~ /^supported_majors="([\d ]+)"$/m;
my ($newest) = sort { $b <=> $a } split ' ', $supported // '';
ok(defined $oldest && defined $newest,
	'compat.h names the oldest major, test.sh builds the newest')
  or ($oldest, $newest) = (0, 0);
is( $meta->{prereqs}{runtime}{requires}{PostgreSQL},
	">= $oldest.0.0, < " . ($newest + 1) . '.0.0',
	"META.json requires PostgreSQL $oldest to $newest");
like(
	slurp("$top/README.md"),
	qr/^\*\*Supported:\*\* PostgreSQL $oldest to $newest\b/m,
	"the README supports PostgreSQL $oldest to $newest");

my ($control_version) =
  slurp("$top/snowflake.control") =~ /^default_version = '([^']+)'$/m;
ok(defined $control_version, 'snowflake.control has a default_version');
is($meta->{version}, semver($control_version // ''),
	'META.json has the version of snowflake.control');

my ($changelog_version) = slurp("$top/debian/changelog") =~ /^\S+ \(([^)]+)\)/;
ok(defined $changelog_version, 'debian/changelog has a version');
# drop the Debian revision and any epoch: 1:1.0-1 -> 1.0
(my $upstream = $changelog_version // '') =~ s/^\d+://;
$upstream =~ s/-[^-]+$//;
is($upstream, $control_version,
	'debian/changelog has the version of snowflake.control');

my ($module_version) =
  slurp("$top/src/snowflake.c") =~ /^#define SNOWFLAKE_VERSION "([^"]+)"$/m;
is($module_version, $control_version,
	'the module magic (PostgreSQL 18) names the version of snowflake.control');

my $provides = $meta->{provides}{snowflake} // {};
is($provides->{version}, $meta->{version},
	'META.json provides snowflake at its own version');
ok(defined $provides->{file} && -f "$top/$provides->{file}",
	'the file META.json names for snowflake exists');
# an install script of the default version, or an upgrade script to it
ok(scalar(glob("$top/snowflake--*$control_version.sql")),
	'a script installs or updates to the default version');

done_testing();
