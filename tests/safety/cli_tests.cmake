# Issue 17, the CLI's part: outputs (claims, checks, temporary files) and settings.
hpcprof_add_tests(hpcprof_safety_cli_unit_tests LABELS "unit;safety"
    SOURCES safety/settings_rule_test.cpp safety/output_file_test.cpp
    LIBS hpcprof::launch hpcprof::schema)
hpcprof_add_tests(hpcprof_safety_cli_tests LABELS "integration;safety"
    SOURCES safety/cli_outputs_test.cpp safety/cli_settings_test.cpp
    safety/cli_safety_support.cpp
    LIBS hpcprof::schema)
add_dependencies(hpcprof_safety_cli_tests hpcprof hpcprof_agent io_sample bulk_sample)
