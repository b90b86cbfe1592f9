#!/usr/bin/env bash
# Third-party MPI applications from Debian under `hpcprof run`, each compared with what the
# program reports about itself (issue 19). Prints one markdown table row per application;
# docs/validation/third-party.md holds the table of the last run and how to read it.
#
#   scripts/validate_apps.sh [BUILD_DIR] [RANKS]        (build, 2)
#
# Applications (each skipped with a note when its package is missing):
#   lammps      LAMMPS (package lammps): a Lennard-Jones melt, 32000 atoms, 500 steps. LAMMPS
#               prints "Comm" in its MPI task timing breakdown: the average time of a rank in
#               communication, in % of the loop time.
#   cp2k        CP2K (package cp2k): one SCF of a water molecule (GTH pseudopotentials, DZVP).
#               CP2K's TIMING table gives the self time of each routine of its MPI layer (mp_*)
#               and its total: their ratio, without communicator creation (mp_cart_*,
#               mp_comm_split/dup/free, mp_group*: hpcprof's setup), is its communication share.
#   mumps       MUMPS (package mumps-test): dsimpletest on the 7-point Laplacian of a 30^3 grid.
#               MUMPS reports the elapsed time of its drivers, no communication share: the row
#               shows the report's share and how much of each rank's time is MPI start-up.
# hpcprof's share: the mean over ranks of communication / time between the end of MPI_Init and
# the start of MPI_Finalize (ranks[].region of `hpcprof report --format json`).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
hpcprof=$build/bin/hpcprof
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# hpcprof's mean communication share and setup share per rank, from the report's JSON.
report_shares() {
    "$hpcprof" report "$1" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ranks = d["ranks"]
comm = sum(r["region"]["comm_ns"] / r["region"]["window_ns"] for r in ranks) / len(ranks)
seconds = sum(r["region"]["comm_ns"] for r in ranks) / len(ranks) / 1e9
setup = sum(r["setup_ns"] / r["window_ns"] for r in ranks) / len(ranks)
print(f"{100 * comm:.1f} {seconds:.3f} {100 * setup:.1f}")'
}

rel() { # relative difference of $2 to $1, or - without a figure of the program's
    if [ "$1" = "-" ]; then echo "-"; else python3 -c "print(f'{100 * ($2 - $1) / $1:+.1f} %')"; fi
}

# app, what it ran, its own comm % and s (or -), hpcprof's comm % and s, setup share
row() {
    echo "| $1 | $2 | $3 | $4 | $(rel "$3" "$4") | $5 | $6 | $(rel "$5" "$6") | $7 |"
}

echo "| application | run | its own comm % | hpcprof comm % | difference | its own comm s per rank | hpcprof comm s per rank | difference | MPI start-up, % of each rank's time |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"

if command -v lmp > /dev/null; then
    cat > "$work/in.melt" <<'IN'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 20 0 20 0 20
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo          100
run             500
IN
    (cd "$work" && "$hpcprof" run -q -o lammps.hpcprof -- mpirun -np "$ranks" lmp -in in.melt -log none > lammps.out 2>&1)
    own=$(awk '/^Comm / {print $NF}' "$work/lammps.out")
    own_s=$(awk '/^Comm / {print $5}' "$work/lammps.out")
    read -r comm comm_s setup < <(report_shares "$work/lammps.hpcprof")
    row "LAMMPS $(dpkg-query -W -f '${Version}' lammps 2>/dev/null | cut -d+ -f1)" "LJ melt, 32000 atoms, 500 steps, $ranks ranks" \
        "$own" "$comm" "$own_s" "$comm_s" "$setup"
else
    echo "| LAMMPS | skipped: package lammps not installed | | | | | | | |"
fi

if command -v cp2k > /dev/null && [ -f /usr/share/cp2k/BASIS_MOLOPT ]; then
    cat > "$work/h2o.inp" <<'IN'
&GLOBAL
  PROJECT h2o
  RUN_TYPE ENERGY
  PRINT_LEVEL MEDIUM
  &TIMINGS
    THRESHOLD 0.0
  &END TIMINGS
&END GLOBAL
&FORCE_EVAL
  METHOD Quickstep
  &DFT
    BASIS_SET_FILE_NAME BASIS_MOLOPT
    POTENTIAL_FILE_NAME GTH_POTENTIALS
    &MGRID
      CUTOFF 280
    &END MGRID
    &SCF
      MAX_SCF 30
      EPS_SCF 1.0E-6
    &END SCF
    &XC
      &XC_FUNCTIONAL PBE
      &END XC_FUNCTIONAL
    &END XC
  &END DFT
  &SUBSYS
    &CELL
      ABC 8.0 8.0 8.0
    &END CELL
    &COORD
      O   4.000000   4.000000   4.119262
      H   4.000000   4.763239   3.520000
      H   4.000000   3.236761   3.520000
    &END COORD
    &KIND H
      BASIS_SET DZVP-MOLOPT-SR-GTH
      POTENTIAL GTH-PBE-q1
    &END KIND
    &KIND O
      BASIS_SET DZVP-MOLOPT-SR-GTH
      POTENTIAL GTH-PBE-q6
    &END KIND
  &END SUBSYS
&END FORCE_EVAL
IN
    (cd "$work" && OMP_NUM_THREADS=1 "$hpcprof" run -q -o cp2k.hpcprof -- mpirun -np "$ranks" cp2k -i h2o.inp \
        > cp2k.out 2>&1)
    # The TIMING table: SUBROUTINE CALLS ASD SELF(avg max) TOTAL(avg max). CP2K's MPI layer is the
    # mp_* routines: their average self time over the average total of CP2K.
    own=$(awk '
        /T I M I N G/ {timing = 1}
        timing && NF == 7 && $1 ~ /^mp_/ && $1 !~ /^mp_(cart|comm_split|comm_dup|comm_free|group|environ)/ {comm += $4}
        timing && NF == 7 && $1 == "CP2K" {total = $6}
        END {if (total > 0) printf "%.1f %.3f", 100 * comm / total, comm; else print "- -"}' "$work/cp2k.out")
    read -r own own_s <<<"$own"
    read -r comm comm_s setup < <(report_shares "$work/cp2k.hpcprof")
    row "CP2K $(dpkg-query -W -f '${Version}' cp2k 2>/dev/null | cut -d- -f1)" "H2O PBE/DZVP energy, $ranks ranks" \
        "$own" "$comm" "$own_s" "$comm_s" "$setup"
else
    echo "| CP2K | skipped: package cp2k not installed | | | | | | | |"
fi

if [ -x /usr/lib/mumps/dsimpletest ]; then
    python3 "$here/bench/mpi/laplacian_input.py" 30 > "$work/laplacian"
    (cd "$work" && "$hpcprof" run -q -o mumps.hpcprof -- mpirun -np "$ranks" /usr/lib/mumps/dsimpletest \
        < laplacian > mumps.out 2>&1)
    read -r comm comm_s setup < <(report_shares "$work/mumps.hpcprof")
    row "MUMPS $(dpkg-query -W -f '${Version}' mumps-test 2>/dev/null | cut -d- -f1)" "dsimpletest, 7-point Laplacian 30^3, $ranks ranks" \
        "-" "$comm" "-" "$comm_s" "$setup"
else
    echo "| MUMPS | skipped: package mumps-test not installed | | | | | | | |"
fi
