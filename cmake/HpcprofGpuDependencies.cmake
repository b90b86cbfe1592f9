# GPU-side optional dependencies (issue 5), each HPCPROF_WITH_<NAME> = AUTO | ON | OFF:
#   CUPTI  CUDA toolkit with CUPTI headers: agent/cupti (CUDA activity via CUDA_INJECTION64_PATH).
#          libcupti is dlopen'ed at run time, so the agent never depends on it at load time.
#   NVTX   NVTX v3 headers (types only): agent/nvtx (NVTX_INJECTION64_PATH) and the NVTX sample.
#   NCCL   nccl.h (+ the CUDA headers it includes): agent/nccl API hooks and profiler plugin.
# Nothing outside those folders includes cupti.h or nccl.h.

macro(hpcprof_find_CUPTI)
    find_package(CUDAToolkit QUIET)
    set(HPCPROF_CUPTI_FOUND FALSE)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cupti)
        get_target_property(HPCPROF_CUPTI_LIBRARY CUDA::cupti IMPORTED_LOCATION)
        find_path(HPCPROF_CUPTI_INCLUDE_DIR cupti_activity.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include)
        if(HPCPROF_CUPTI_LIBRARY AND HPCPROF_CUPTI_INCLUDE_DIR)
            set(HPCPROF_CUPTI_FOUND TRUE)
        endif()
    endif()
endmacro()
hpcprof_dependency(CUPTI PURPOSE "CUDA kernel, copy and API activity (CUPTI)"
                   FOUND_VAR HPCPROF_CUPTI_FOUND
                   FIX "Install the CUDA toolkit with CUPTI (or set CUDAToolkit_ROOT).")

macro(hpcprof_find_NVTX)
    find_package(CUDAToolkit QUIET)
    find_path(HPCPROF_NVTX_INCLUDE_DIR nvToolsExt.h
        HINTS ${CUDAToolkit_INCLUDE_DIRS}/nvtx3 /usr/local/cuda/include/nvtx3
        PATH_SUFFIXES nvtx3)
    set(HPCPROF_NVTX_FOUND FALSE)
    if(HPCPROF_NVTX_INCLUDE_DIR)
        set(HPCPROF_NVTX_FOUND TRUE)
    endif()
endmacro()
hpcprof_dependency(NVTX PURPOSE "NVTX ranges and marks (NVTX v3 injection)"
                   FOUND_VAR HPCPROF_NVTX_FOUND
                   FIX "Install the NVTX v3 headers (part of the CUDA toolkit) or set CMAKE_PREFIX_PATH.")

macro(hpcprof_find_NCCL)
    find_package(CUDAToolkit QUIET)
    find_path(HPCPROF_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME
        PATH_SUFFIXES include)
    find_library(HPCPROF_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME
        PATH_SUFFIXES lib lib64)
    set(HPCPROF_NCCL_FOUND FALSE)
    if(CUDAToolkit_FOUND AND HPCPROF_NCCL_INCLUDE_DIR)
        set(HPCPROF_NCCL_FOUND TRUE)
    endif()
endmacro()
hpcprof_dependency(NCCL PURPOSE "NCCL API capture and NCCL profiler plugin"
                   FOUND_VAR HPCPROF_NCCL_FOUND
                   FIX "Install NCCL (nccl.h) and the CUDA toolkit, or set NCCL_HOME.")
