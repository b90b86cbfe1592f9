-- Lmod modulefile example for hpcprof (issue 24). Install as <modulepath>/hpcprof/0.1.0.lua and
-- set `root` to the install prefix (cmake --install build --prefix ROOT, or Spack's prefix).
-- `hpcprof run` finds its agent and MPI module relative to its executable (ROOT/lib), so only
-- PATH, MANPATH and the bash completion need setting: no LD_LIBRARY_PATH, no LD_PRELOAD.
help([[hpcprof: performance profiling and bottleneck analysis for jobs on many ranks.
  hpcprof run -o job.hpcprof -- mpirun -n 4 ./app
  hpcprof report job.hpcprof]])
whatis("Name: hpcprof")
whatis("Version: 0.1.0")
whatis("Description: profiler for MPI, I/O, GPU and thread activity of jobs on many ranks")

local root = "/opt/hpcprof/0.1.0"

prepend_path("PATH", pathJoin(root, "bin"))
prepend_path("MANPATH", pathJoin(root, "share/man"))
-- The MPI wrappers are built against one MPI ABI (Open MPI here): load the matching MPI.
depends_on("openmpi")
if (myShellType() == "sh") then
    execute{cmd="source " .. pathJoin(root, "share/bash-completion/completions/hpcprof"), modeA={"load"}}
end
