#%Module1.0
## Environment Modules (Tcl) example for hpcprof (issue 24); the same as hpcprof.lua for sites
## without Lmod. Install as <modulepath>/hpcprof/0.1.0 and set root to the install prefix.
## `hpcprof run` finds its agent relative to its executable: no LD_LIBRARY_PATH needed.
proc ModulesHelp { } {
    puts stderr "hpcprof: performance profiling and bottleneck analysis for jobs on many ranks."
}
module-whatis "hpcprof 0.1.0: profiler for MPI, I/O, GPU and thread activity of jobs on many ranks"

set root /opt/hpcprof/0.1.0
prereq openmpi
prepend-path PATH $root/bin
prepend-path MANPATH $root/share/man
