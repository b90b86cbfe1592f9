# GPU-source tests (issue 5), included from tests/CMakeLists.txt. Each part builds only when the
# dependency it exercises was found; the rest of the suite never needs CUDA, NVTX or NCCL.
if(TARGET nvtx_sample)
    hpcprof_add_tests(hpcprof_gpu_nvtx_tests LABELS "integration;gpu"
        SOURCES integration/gpu_nvtx_test.cpp)
    add_dependencies(hpcprof_gpu_nvtx_tests hpcprof hpcprof_agent nvtx_sample)
endif()
