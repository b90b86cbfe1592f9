# Issue 17 (never harm): the agent's descriptors and the default counters. Programs that use
# their descriptor table as daemons, shells and MPI ranks do, run with and without hpcprof.
add_executable(fd_hygiene ${CMAKE_CURRENT_LIST_DIR}/fd_hygiene.c)
target_link_libraries(fd_hygiene PRIVATE Threads::Threads)
hpcprof_add_tests(hpcprof_agent_fd_tests LABELS "integration;counters;safety"
    SOURCES safety/agent_fd_test.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(hpcprof_agent_fd_tests PRIVATE HPCPROF_TEST_HAVE_MPI=${HPCPROF_HAVE_MPI})
add_dependencies(hpcprof_agent_fd_tests hpcprof hpcprof_agent fd_hygiene)
if(HPCPROF_HAVE_MPI)
    add_executable(mpi_fd_probe ${CMAKE_CURRENT_LIST_DIR}/mpi_fd_probe.c)
    target_link_libraries(mpi_fd_probe PRIVATE MPI::MPI_C)
    add_dependencies(hpcprof_agent_fd_tests hpcprof_mpi mpi_fd_probe)
endif()
hpcprof_add_tests(hpcprof_counter_default_tests LABELS "integration;counters;safety"
    SOURCES safety/counter_defaults_test.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(hpcprof_counter_default_tests PRIVATE HPCPROF_TEST_HAVE_MPI=${HPCPROF_HAVE_MPI})
add_dependencies(hpcprof_counter_default_tests hpcprof hpcprof_agent counter_workload)
if(HPCPROF_HAVE_MPI)
    add_dependencies(hpcprof_counter_default_tests hpcprof_mpi counter_mpi_workload)
endif()
