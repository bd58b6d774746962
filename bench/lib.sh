# lib.sh - helpers shared by the bench/ scripts (sourced, not run).

# summarize_rates FILE "MODE..." : FILE has lines "MODE RATE", one per run.
# Prints, per mode in the given order, the mean +- sample standard deviation
# and the throughput lost against the first mode (the untraced baseline).
summarize_rates() {
	awk -v modes="$2" '
		{ n[$1]++; s[$1] += $2; ss[$1] += $2 * $2 }
		END {
			split(modes, m, " ")
			base = s[m[1]] / n[m[1]]
			for (i = 1; i in m; i++) {
				k = m[i]; mean = s[k] / n[k]
				var = n[k] > 1 ? (ss[k] - n[k] * mean * mean) / (n[k] - 1) : 0
				printf "  %-12s %12.1f +- %10.1f   overhead %5.1f%%\n", k, mean,
					sqrt(var > 0 ? var : 0), 100 * (1 - mean / base)
			}
		}' "$1"
}
