# Copyright (c) 2026, the snowflake authors
#
# The documentation holds together: every relative link in README.md,
# CHANGELOG.md, CONTRIBUTING.md and docs/*.md leads to a file of the tree,
# and a link with an anchor (path#anchor, or #anchor within the same page)
# to a heading of that page.  Anchors follow GitHub's rule: the heading's
# text, lowercased, with every character but letters, digits, spaces, '-'
# and '_' dropped and each space turned into '-'; a heading whose anchor
# was taken before in the page gets -1, -2, ... appended.  Links in code
# (fenced blocks and `spans`) are not links and are skipped, as are links
# with a scheme (https:, mailto:).  No server is needed.
#
# It also keeps the README the user's page: under 15 KB, with a link to
# each page of docs/.
use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use FindBin;
use Test::More;

# an absolute path with every "dir/.." taken out
sub tidy
{
	my ($path) = @_;
	$path = File::Spec->canonpath(File::Spec->rel2abs($path));
	1 while $path =~ s{/(?!\.\.(?:/|$))[^/]+/\.\.(?=/|$)}{};
	return $path;
}

my $top = tidy("$FindBin::RealBin/..");

sub slurp
{
	my ($path) = @_;
	open my $fh, '<:encoding(UTF-8)', $path or die "could not read $path: $!";
	local $/;
	return <$fh>;
}

# the page's text without fenced code blocks, as lines
sub prose_lines
{
	my ($text) = @_;
	my @lines;
	my $fence;
	foreach my $line (split /\n/, $text)
	{
		if (defined $fence)
		{
			undef $fence if $line =~ /^\s*\Q$fence\E/;
			push @lines, '';
			next;
		}
		if ($line =~ /^\s*(```+|~~~+)/)
		{
			$fence = $1;
			push @lines, '';
			next;
		}
		push @lines, $line;
	}
	return @lines;
}

# GitHub's anchor for a heading's text
sub github_anchor
{
	my ($heading) = @_;
	$heading =~ s/\s+#+\s*$//;                    # a closing sequence
	$heading =~ s/!?\[([^\]]*)\]\([^)]*\)/$1/g;    # links: their text
	$heading =~ s/[`*]//g;                        # code and emphasis marks
	$heading = lc $heading;
	$heading =~ s/^\s+|\s+$//g;
	$heading =~ s/[^\p{L}\p{N}\p{M} _-]//g;
	$heading =~ s/ /-/g;
	return $heading;
}

# every anchor a page's headings give, duplicates numbered as GitHub does
my %anchor_cache;

sub anchors_of
{
	my ($path) = @_;
	return $anchor_cache{$path} if $anchor_cache{$path};
	my (%anchors, %seen);
	foreach my $line (prose_lines(slurp($path)))
	{
		next unless $line =~ /^ {0,3}#{1,6}\s+(.*)$/;
		my $anchor = github_anchor($1);
		if (exists $seen{$anchor})
		{
			my $n = ++$seen{$anchor};
			$anchor = "$anchor-$n";
		}
		else
		{
			$seen{$anchor} = 0;
		}
		$anchors{$anchor} = 1;
	}
	return $anchor_cache{$path} = \%anchors;
}

# the relative links of a page: [text](target), ![alt](target) and
# [label]: target definitions, with their line numbers
sub links_of
{
	my ($path) = @_;
	my @links;
	my $n = 0;
	foreach my $line (prose_lines(slurp($path)))
	{
		$n++;
		(my $prose = $line) =~ s/(`+).*?\1//g;    # code spans
		while ($prose =~ /\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)
		{
			push @links, [ $n, $1 ];
		}
		push @links, [ $n, $1 ] if $prose =~ /^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)/;
	}
	return grep { $_->[1] !~ /^[a-zA-Z][a-zA-Z0-9+.-]*:/ } @links;
}

# what is wrong with one link of a page, or undef
sub broken
{
	my ($page, $target) = @_;
	return 'an empty link' if $target eq '';
	my ($file, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
	$file =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
	my $dest = $file eq '' ? $page : tidy(dirname($page) . "/$file");
	return "$file is outside the tree" unless index("$dest/", "$top/") == 0;
	return "no file $file" unless -e $dest;
	return undef unless defined $anchor;
	return "#$anchor: $file is not a markdown page" unless $dest =~ /\.md$/;
	return "no heading for #$anchor in " . File::Spec->abs2rel($dest, $top)
	  unless anchors_of($dest)->{$anchor};
	return undef;
}

my @pages = (
	(map { "$top/$_" } qw(README.md CHANGELOG.md CONTRIBUTING.md)),
	sort glob("$top/docs/*.md"));
ok(-f $_, File::Spec->abs2rel($_, $top) . ' exists') foreach @pages;
ok(scalar(glob("$top/docs/*.md")), 'docs/ has pages');

my $checked = 0;
foreach my $page (grep { -f } @pages)
{
	my $name = File::Spec->abs2rel($page, $top);
	my @broken;
	foreach my $link (links_of($page))
	{
		my ($line, $target) = @$link;
		$checked++;
		my $why = broken($page, $target);
		push @broken, "$name:$line: ($target): $why" if defined $why;
	}
	ok(!@broken, "every relative link in $name resolves")
	  or diag(join("\n", 'broken links:', @broken));
}
cmp_ok($checked, '>', 50, "the pages hold relative links ($checked checked)");

# the README is the user's page
my $readme = slurp("$top/README.md");
cmp_ok(-s "$top/README.md", '<', 15_000, 'README.md is under 15 KB');
foreach my $doc (sort glob("$top/docs/*.md"))
{
	my $rel = File::Spec->abs2rel($doc, $top);
	ok($readme =~ /\]\(\Q$rel\E(?:#[^)]*)?\)/, "README.md links to $rel");
}

# the anchor rule itself, on headings of this documentation
is(github_anchor('Upgrading from 1.0'), 'upgrading-from-10',
	'anchors drop dots');
is( github_anchor(
		'Using IDs from JavaScript and JSON: `snowflake_json(id [, epoch])`'),
	'using-ids-from-javascript-and-json-snowflake_jsonid--epoch',
	'anchors drop code marks and punctuation, keep _ and each space');

done_testing();
