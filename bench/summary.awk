# bench/summary.awk: the Markdown tables of bench/run.sh, from the rows of
# its results.csv (bench,name,sessions,round,value,pg_major) sorted by bench,
# name, sessions and value, all of one PostgreSQL major, which each table's
# title names.  Per group of rounds: the median, the spread (slowest to
# fastest round, in % of the median) and the ratio against a base of the
# same sessions.  With -v chart=FILE it writes the bulk medians there, one
# block per contender headed by its name, for bench/chart.gp.  It ends with
# the hot path's targets, each against its goal.
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
	targets()
}
# the hot path's four targets (issue 17), each from the medians above
function target(what, value, shown, goal, met) {
	printf "| %s | %s | %s | %s |\n", what, shown, goal, met ? "met" : "missed"
}
function targets(   b, s1, nv, blk0, blk1, one, two, marks, c1, c2) {
	b = "bulk" SUBSEP; s1 = "snowflake_next_id() max_lead 1000"
	nv = med[b "nextval() CACHE 1" SUBSEP 1]; one = med[b s1 SUBSEP 1]; two = med[b s1 SUBSEP 2]
	blk0 = med[b "snowflake_next_ids(1000) per ID" SUBSEP 1]; blk1 = med[b "snowflake_next_ids(1000) per ID max_lead 1000" SUBSEP 1]
	marks = med["marks" SUBSEP "by backends" SUBSEP ""]
	c1 = med["contention" SUBSEP "one thread" SUBSEP 1]; c2 = med["contention" SUBSEP "two threads" SUBSEP 2]
	printf "\n## The hot path's targets, PostgreSQL %s\n\n| target | measured | goal | |\n|---|---|---|---|\n", major
	target("one session, max_lead 1000, against nextval() CACHE 1", one / nv, sprintf("%.2fx", one / nv), ">= 3.50x", one / nv >= 3.5)
	target("two sessions together, max_lead 1000, against one session", two / one,
		sprintf("%.2fx (one shared word allows %.2fx here: bench/contention.c, spells of %.1f ns)", two / one, c2 / c1, med["contention" SUBSEP "spell ns" SUBSEP ""]),
		">= 1.00x", two / one >= 1)
	target("snowflake_next_ids(1000), max_lead 0, share of the 4096 IDs/ms cap", blk0, sprintf("%.1f%%", 100 * blk0 / 4096000), ">= 97%", blk0 >= 0.97 * 4096000)
	target("snowflake_next_ids(1000) per ID against snowflake_next_id(), max_lead 1000", blk1 / one, sprintf("%.2fx", blk1 / one), "> 1.00x", blk1 > one)
	target("marks written by backends during the bulk runs", marks, marks, "0", marks == 0)
}
