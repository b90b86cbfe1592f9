# RDMA verbs capture (issue 7): analysis tests (always), and when the rdma-core headers were
# found (HPCPROF_WITH_IBVERBS) the stand-in libibverbs, its test program, unit and integration
# tests.
hpcprof_add_tests(hpcprof_rdma_analysis_tests LABELS "unit;rdma;analyzer"
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/rdma_analysis_test.cpp
    LIBS hpcprof::analyzer hpcprof::store)

if(NOT HPCPROF_HAVE_IBVERBS)
    return()
endif()
add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/../../stand_ins/ibverbs
    ${CMAKE_CURRENT_BINARY_DIR}/stand_ins/ibverbs)

# Take-over and restore of a context's table and of extended objects, with the hooks' own
# objects (no libibverbs).
hpcprof_add_tests(hpcprof_rdma_unit_tests LABELS "unit;rdma"
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/context_table_test.cpp ${CMAKE_CURRENT_LIST_DIR}/ex_objects_test.cpp
    LIBS hpcprof_ibverbs_hooks hpcprof::runtime)
target_include_directories(hpcprof_rdma_unit_tests SYSTEM PRIVATE ${HPCPROF_IBVERBS_INCLUDE_DIR})

# The agent's folding beyond the rate, alone in its process (it reads the rate once).
hpcprof_add_tests(hpcprof_rdma_fold_tests LABELS "unit;rdma"
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/wr_fold_test.cpp
    LIBS hpcprof_ibverbs_hooks hpcprof::runtime)
target_include_directories(hpcprof_rdma_fold_tests SYSTEM PRIVATE ${HPCPROF_IBVERBS_INCLUDE_DIR})

hpcprof_add_tests(hpcprof_rdma_integration_tests LABELS "integration;rdma"
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/../../integration/rdma_test.cpp LIBS nlohmann_json::nlohmann_json)
add_dependencies(hpcprof_rdma_integration_tests hpcprof hpcprof_agent rdma_sample io_sample)
