# GPU-source tests (issue 5), included from tests/CMakeLists.txt. Each part builds only when the
# dependency it exercises was found; the rest of the suite never needs CUDA, NVTX or NCCL.
if(TARGET nvtx_sample)
    hpcprof_add_tests(hpcprof_gpu_nvtx_tests LABELS "integration;gpu"
        SOURCES integration/gpu_nvtx_test.cpp)
    add_dependencies(hpcprof_gpu_nvtx_tests hpcprof hpcprof_agent nvtx_sample)
endif()
if(TARGET hpcprof_nccl_hooks)
    add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/../../stand_ins/nccl
                     ${CMAKE_CURRENT_BINARY_DIR}/stand_ins/nccl)
    hpcprof_add_tests(hpcprof_gpu_nccl_tests LABELS "integration;gpu"
        SOURCES integration/gpu_nccl_test.cpp)
    add_dependencies(hpcprof_gpu_nccl_tests hpcprof hpcprof_agent nccl_ranks nccl_local
        nccl_local_user)
    # Issue 23: NCCL ranks made to hang, the hang diagnosis per communicator.
    hpcprof_add_tests(hpcprof_nccl_hang_tests SERIAL LABELS "integration;gpu;hang"
        SOURCES integration/nccl_hang_test.cpp LIBS nlohmann_json::nlohmann_json)
    add_dependencies(hpcprof_nccl_hang_tests hpcprof hpcprof_agent nccl_hang)
endif()
if(TARGET hpcprof_cupti_translate)
    hpcprof_add_tests(hpcprof_gpu_cupti_tests LABELS "unit;gpu"
        SOURCES unit/gpu/cupti_translation_test.cpp
        LIBS hpcprof::store hpcprof_cupti_translate)
endif()
if(TARGET hpcprof_cupti_host_waits)
    hpcprof_add_tests(hpcprof_gpu_cupti_poll_tests LABELS "unit;gpu"
        SOURCES unit/gpu/cupti_host_polls_test.cpp
        LIBS hpcprof_cupti_host_waits hpcprof_test_recording)
endif()
if(TARGET training_step)
    hpcprof_add_tests(hpcprof_gpu_cuda_tests LABELS "integration;gpu"
        SOURCES integration/gpu_cuda_test.cpp)
    add_dependencies(hpcprof_gpu_cuda_tests hpcprof hpcprof_agent training_step)
endif()
if(TARGET nccl_plugin_harness)
    hpcprof_add_tests(hpcprof_gpu_nccl_plugin_tests LABELS "integration;gpu"
        SOURCES unit/gpu/nccl_plugin_test.cpp)
    add_dependencies(hpcprof_gpu_nccl_plugin_tests hpcprof hpcprof_agent nccl_plugin_harness)
endif()
