# Issue 17, the in-process agent's raw files: full disk or quota during capture, and many
# threads (each thread's file starts small; thread start is cheap). Unit tests of the pieces,
# integration tests that run real programs under `hpcprof run` (mounting a small tmpfs or a
# ramfs: skipped with "SKIPPED:" where mounting is not allowed).
hpcprof_add_tests(hpcprof_agent_safety_tests LABELS "unit;agent;store;analyzer"
    SOURCES safety/agent/chunk_geometry_test.cpp safety/agent/file_space_test.cpp
    safety/agent/recording_stopped_store_test.cpp safety/agent/recording_stopped_analysis_test.cpp
    unit/analyzer/trace_builder.cpp
    LIBS hpcprof::runtime hpcprof::store hpcprof::analyzer hpcprof::report nlohmann_json::nlohmann_json)
target_include_directories(hpcprof_agent_safety_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/safety/agent)
hpcprof_add_tests(hpcprof_agent_safety_integration_tests LABELS "integration;safety"
    SOURCES safety/agent/raw_space_test.cpp safety/agent/thread_start_test.cpp
    LIBS nlohmann_json::nlohmann_json)
target_include_directories(hpcprof_agent_safety_integration_tests PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/safety/agent)
add_dependencies(hpcprof_agent_safety_integration_tests hpcprof hpcprof_agent disk_full_sample
    thread_burst_sample tid_reuse_sample bulk_sample)
