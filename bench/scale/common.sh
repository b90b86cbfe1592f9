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

# same_but_rank_steps A_JSON B_JSON: true when two reports are the same but for the ranks' step
# lists (steps.ranks[].items, steps.rank_items: a long job lists each rank's slowest steps only).
same_but_rank_steps() {
    python3 - "$1" "$2" <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:3]]
for d in docs:
    d.pop("hpcprof_version", None)
    d["steps"].pop("rank_items", None)
    for r in d["steps"]["ranks"]:
        r.pop("items", None)
sys.exit(0 if docs[0] == docs[1] else 1)
PY
}
