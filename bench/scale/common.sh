# shellcheck shell=bash
# Shared by bench/scale/pipeline.sh and scale.sh (sourced): medians and the check of a report
# against the generator's answers.

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# check_answers REPORT_JSON ANSWERS_JSON: the report's waits, straggler and event count against
# the generator's answers (bench/scale/jobgen); fails when they differ.
check_answers() {
    python3 - "$1" "$2" <<'PY'
import json, sys
r, x = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
w = r["wait_states"]
got = {"collective_wait_ns": w["collective_wait_ns"], "late_sender_ns": w["late_sender_ns"],
       "late_receiver_ns": w["late_receiver_ns"], "straggler": r["stragglers"][0]["rank"],
       "events": r["summary"]["events"]}
bad = {k: (v, x[k]) for k, v in got.items() if v != x[k]}
print("  answers: " + ("as generated" if not bad else "DIFFER (report, expected): %s" % bad))
sys.exit(1 if bad else 0)
PY
}
