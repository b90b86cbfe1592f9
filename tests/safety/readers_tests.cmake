# Robustness of every reader (issue 17): report, diff, gates, export, view, merge, import and
# hpcprof-gui against a corpus of damaged and hostile inputs the tests generate themselves.
hpcprof_add_tests(hpcprof_reader_robustness_tests LABELS "robustness;integration"
    SOURCES safety/reader_checks.cpp safety/hostile_corpus.cpp safety/trace_readers_test.cpp
    safety/raw_readers_test.cpp safety/import_readers_test.cpp safety/printable_test.cpp
    unit/analyzer/trace_builder.cpp
    LIBS hpcprof::store hpcprof::report nlohmann_json::nlohmann_json)
add_dependencies(hpcprof_reader_robustness_tests hpcprof)
if(TARGET hpcprof-gui)
    add_dependencies(hpcprof_reader_robustness_tests hpcprof-gui)
endif()
