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

# proc_cpu PID: user+sys clock ticks of PID so far
proc_cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# recorder_lost ERRFILE: the lost events perfcap-record's summary in
# ERRFILE (its standard error) states, commas removed
recorder_lost() { sed -n 's/.*: lost \([0-9,]*\) of .*/\1/p' "$1" | tr -d , | head -1; }

# perf_lost PERF_DATA: the events perf lost (its LOST records)
perf_lost() {
	perf report -i "$1" --stats 2> /dev/null | awk '/LOST/ { s += $NF } END { print s + 0 }'
}

# refused_source ERRFILE WHO: true (and says so on stderr, each line
# prefixed WHO) when the recorder warned that a selected source is not
# recording: it records nothing and costs nothing, so its run would look
# cheap for the wrong reason
refused_source() {
	grep -q "warning: not recording" "$1" || return 1
	grep "warning: not recording" "$1" | sed "s/^/$2: /" >&2
}
