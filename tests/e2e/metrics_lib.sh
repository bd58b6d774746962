# metrics_lib.sh - helpers of the metrics tests (sourced after lib.sh):
# import a capture and read single numbers with perfcap-analyze query.

# import_capture CAPTURE: CAPTURE.db
import_capture() {
	"$PERFCAP_ANALYZE" import "$1" -o "$1.db" > "$TMP/import.out" 2>&1 ||
		{ cat "$TMP/import.out" >&2; fail "import of $1 failed"; }
}

# q DB SQL: the first column of the first row (empty: none or NULL)
q() { "$PERFCAP_ANALYZE" query "$1" "$2" | sed -n 2p | cut -f1; }

# num VALUE: VALUE, or 0 when empty
num() { echo "${1:-0}"; }
