# SPDX-License-Identifier: MIT
"""Fixtures: real traces made by the hpcprof under test.

ctest sets HPCPROF (the executable), HPCPROF_SAMPLES (the built samples) and HPCPROF_TEST_DATA
(tests/data); run by hand from a build tree, the defaults find ../build.
"""
import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # the package as it is in the tree, not an older install

import hpcprof  # noqa: E402

#: Open MPI as root, and 4 ranks on a 2-core machine (as the C++ MPI tests run them).
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}

#: What samples/mpi/mpi_demo.c does (its header comment): the tests check the trace against it.
DEMO_RANKS = 4
DEMO_STEPS = 12
DEMO_WRITES_PER_RANK = 128
DEMO_WRITE_BYTES = 4096


def _build_dir() -> Path:
    return Path(os.environ.get("HPCPROF_BUILD_DIR", REPO / "build"))


@pytest.fixture(scope="session")
def hpcprof_bin() -> str:
    path = os.environ.get("HPCPROF") or str(_build_dir() / "bin" / "hpcprof")
    if not Path(path).is_file():
        pytest.skip(f"no hpcprof executable at {path} (build first, or set HPCPROF)")
    os.environ["HPCPROF"] = path  # what hpcprof.cli finds when no hpcprof= is given
    return path


@pytest.fixture(scope="session")
def samples() -> Path:
    return Path(os.environ.get("HPCPROF_SAMPLES", _build_dir() / "samples"))


@pytest.fixture(scope="session")
def demo_trace(hpcprof_bin, samples, tmp_path_factory) -> Path:
    """samples/mpi/mpi_demo on 4 ranks under `hpcprof run`, through hpcprof.run."""
    program = samples / "mpi_demo"
    if not program.is_file() or not shutil.which("mpirun"):
        pytest.skip("mpirun or the mpi_demo sample is missing")
    folder = tmp_path_factory.mktemp("demo")
    trace = folder / "demo.hpcprof"
    env = {**os.environ, **MPI_ENV}
    done = hpcprof.run(["mpirun", "-np", str(DEMO_RANKS), str(program), str(folder)], trace,
                       env=env)
    assert done.returncode == 0, done.stderr
    assert (f"ranks={DEMO_RANKS} steps={DEMO_STEPS} straggler={DEMO_RANKS - 1} "
            f"writes_per_rank={DEMO_WRITES_PER_RANK}") in done.stdout
    return trace


@pytest.fixture(scope="session")
def kineto_trace(hpcprof_bin, tmp_path_factory) -> Path:
    """The two real PyTorch profiler traces in tests/data/kineto, imported through hpcprof.import_trace."""
    data = Path(os.environ.get("HPCPROF_TEST_DATA", REPO / "tests" / "data")) / "kineto"
    files = sorted(data.glob("sampled_rank-*.json.gz"))
    assert len(files) == 2, f"the Kineto test traces are missing in {data}"
    out = tmp_path_factory.mktemp("kineto") / "kineto.hpcprof"
    return hpcprof.import_trace(files, out)
