# SPDX-License-Identifier: MIT
# Spack recipe for hpcprof (issue 24). Copy this folder into a Spack repository
# (`spack repo create myrepo && cp -r packaging/spack myrepo/packages/hpcprof`), then
# `spack install hpcprof +mpi +papi ~gui`. Each variant maps to one of the project's tri-state
# HPCPROF_WITH_<NAME> options (AUTO | ON | OFF; cmake/HpcprofDependencies.cmake), set to ON or
# OFF so that a Spack build never picks up whatever happens to be on the system.

from spack.package import *


class Hpcprof(CMakePackage):
    """Performance profiling and bottleneck analysis for jobs that run on many ranks:
    `hpcprof run` records MPI, I/O, GPU, thread and RDMA activity through an LD_PRELOAD agent,
    `hpcprof report` explains where the time went."""

    homepage = "https://example.org/hpcprof"
    git = "https://example.org/hpcprof.git"

    maintainers("hpcprof")
    license("MIT")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant("mpi", default=True, description="PMPI wrappers (libhpcprof_mpi.so) for MPI programs")
    variant("cuda", default=False, description="CUDA activity (CUPTI) and NVTX ranges")
    variant("nccl", default=False, description="NCCL API capture and profiler plugin")
    variant("papi", default=True, description="CPU hardware counters and software-defined events")
    variant("ibverbs", default=False, description="RDMA verbs capture (rdma-core)")
    variant("openmp", default=False, description="OpenMP capture through OMPT (LLVM libomp)")
    variant("gui", default=False, description="hpcprof-gui, the Qt 6 desktop viewer")

    conflicts("+nccl", when="~cuda", msg="NCCL capture needs the CUDA toolkit")

    depends_on("cmake@3.25:", type="build")
    depends_on("sqlite@3:")
    depends_on("fmt")
    depends_on("cli11")
    depends_on("nlohmann-json")
    depends_on("zlib-api")
    depends_on("zstd")  # packed traces (hpcprof pack)
    depends_on("simdjson")
    depends_on("mpi", when="+mpi")
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+nccl")
    depends_on("papi", when="+papi")
    depends_on("rdma-core", when="+ibverbs")
    depends_on("llvm-openmp", when="+openmp")
    depends_on("qt-base@6.2: +gui +widgets", when="+gui")

    # variant -> the HPCPROF_WITH_<NAME> options it decides
    option_of_variant = {
        "mpi": ["MPI"],
        "cuda": ["CUPTI", "NVTX"],
        "nccl": ["NCCL"],
        "papi": ["PAPI"],
        "ibverbs": ["IBVERBS"],
        "openmp": ["OMPT"],
        "gui": ["QT"],
    }

    def cmake_args(self):
        args = [self.define("HPCPROF_BUILD_TESTS", self.run_tests),
                self.define("HPCPROF_BUILD_BENCH", False)]
        for variant, names in self.option_of_variant.items():
            state = "ON" if self.spec.satisfies(f"+{variant}") else "OFF"
            args.extend(self.define(f"HPCPROF_WITH_{name}", state) for name in names)
        return args

    def setup_run_environment(self, env):
        # `hpcprof run` finds the agent next to its own executable (../lib); nothing else needed.
        env.prepend_path("MANPATH", self.prefix.share.man)
