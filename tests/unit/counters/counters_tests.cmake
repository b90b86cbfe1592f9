# CPU-counter tests (issue 8), included from tests/CMakeLists.txt.
add_executable(counter_workload ${CMAKE_CURRENT_LIST_DIR}/counter_workload.c)
target_link_libraries(counter_workload PRIVATE Threads::Threads)
if(HPCPROF_HAVE_PAPI AND HPCPROF_SDE_LIBRARY)
    target_compile_definitions(counter_workload PRIVATE COUNTER_WORKLOAD_SDE)
    target_link_libraries(counter_workload PRIVATE ${HPCPROF_SDE_LIBRARY})
endif()
hpcprof_add_tests(hpcprof_counter_tests LABELS "unit;counters"
    SOURCES unit/counters/counter_plan_test.cpp unit/counters/counter_store_test.cpp
    unit/counters/counter_analysis_test.cpp unit/analyzer/trace_builder.cpp
    LIBS hpcprof_counters hpcprof::store hpcprof::analyzer)
if(HPCPROF_HAVE_PAPI AND HPCPROF_SDE_LIBRARY)
    target_link_libraries(hpcprof_counter_tests PRIVATE ${HPCPROF_SDE_LIBRARY})
    target_compile_definitions(hpcprof_counter_tests PRIVATE HPCPROF_TEST_COUNTER_SDE=1)
else()
    target_compile_definitions(hpcprof_counter_tests PRIVATE HPCPROF_TEST_COUNTER_SDE=0)
endif()
hpcprof_add_tests(hpcprof_counter_integration_tests LABELS "integration;counters"
    SOURCES integration/counters_test.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(hpcprof_counter_integration_tests PRIVATE
    HPCPROF_TEST_COUNTER_SDE=$<BOOL:${HPCPROF_SDE_LIBRARY}>
    HPCPROF_TEST_HAVE_MPI=${HPCPROF_HAVE_MPI})
add_dependencies(hpcprof_counter_integration_tests hpcprof hpcprof_agent counter_workload)
if(HPCPROF_HAVE_MPI)
    add_executable(counter_mpi_workload ${CMAKE_CURRENT_LIST_DIR}/counter_mpi_workload.c)
    target_include_directories(counter_mpi_workload PRIVATE ${MPI_C_INCLUDE_DIRS})
    target_link_libraries(counter_mpi_workload PRIVATE MPI::MPI_C)
    add_dependencies(hpcprof_counter_integration_tests hpcprof_mpi counter_mpi_workload mpi_sample)
endif()
