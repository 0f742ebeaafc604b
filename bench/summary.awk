# bench/summary.awk: the Markdown tables of bench/run.sh, from the rows of
# its results.csv (bench,name,sessions,round,value,pg_major) sorted by bench,
# name, sessions and value, all of one PostgreSQL major, which each table's
# title names.  Per group of rounds: the median, the spread (slowest to
# fastest round, in % of the median) and the ratio against a base of the
# same sessions.  With -v chart=FILE it writes the bulk medians there, one
# block per contender headed by its name, for bench/chart.gp.
function flush() {
	if (key == "") return
	med[key] = v[int((c + 1) / 2)]; spread[key] = med[key] ? 100 * (v[c] - v[1]) / med[key] : 0
	order[++o] = key
}
NR == 1 { major = $6 }
$6 == "" || $6 != major { printf "summary.awk: not a row of PostgreSQL %s: %s\n", major, $0 > "/dev/stderr"; failed = 1; exit 1 }
{ k = $1 SUBSEP $2 SUBSEP $3; if (k != key) { flush(); key = k; c = 0 } v[++c] = $5 }
function table(bench, title, what, who, unit, base, ceil,   i, p, m, b, share) {
	printf "\n## %s, PostgreSQL %s\n\n| %s | %s | %s | spread | x %s |\n|---|---|---|---|---|\n", title, major, what, who, unit, base
	for (i = 1; i <= o; i++) {
		split(order[i], p, SUBSEP); if (p[1] != bench) continue
		m = med[order[i]]; b = med[bench SUBSEP base SUBSEP p[3]]
		share = ceil && p[2] ~ /^snowflake/ ? sprintf(" (%.1f%% of the ceiling)", 100 * m / ceil) : ""
		printf "| %s | %s | %.0f%s | %.1f%% | %s |\n", p[2], p[3], m, share, spread[order[i]], b ? sprintf("%.2fx", m / b) : "n/a"
		if (chart != "" && bench == "bulk") {
			if (p[2] != last) { if (last != "") printf "\n\n" > chart; printf "\"%s\"\n", p[2] > chart; last = p[2] }
			print p[3], m > chart
		}
	}
}
END {
	if (failed) exit 1
	flush()
	table("bulk", "Bulk: total IDs/s, median of the rounds", "contender", "sessions", "IDs/s", "nextval() CACHE 1", 4096000)
	table("insert", "pgbench INSERT ... DEFAULT VALUES, synchronous_commit off", "key", "clients", "tps", "identity", 0)
	printf "\n## Primary key, PostgreSQL %s\n\n| key | bytes per row | leaf fill %% |\n|---|---|---|\n", major
	for (i = 1; i <= o; i++) {
		split(order[i], p, SUBSEP)
		if (p[1] == "index bytes/row") printf "| %s | %s | %s |\n", p[2], med[order[i]], med["index leaf fill %" SUBSEP p[2] SUBSEP ""]
	}
	w = "marks/s" SUBSEP
	printf "\n## Durable mark during the bulk runs (%s s), PostgreSQL %s\n\n%s marks/s written by the mark writer, %s by backends\n",
		med[w "seconds" SUBSEP ""], major, med[w "by the mark writer" SUBSEP ""], med[w "by backends" SUBSEP ""]
}
