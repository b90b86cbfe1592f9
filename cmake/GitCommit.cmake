# Writes OUTPUT (a C++ string literal) with the git commit SOURCE_DIR is checked out at, "-dirty"
# appended when tracked files differ from it, "unknown" outside a git checkout (a tarball).
# Run at every build (cli/CMakeLists.txt), it rewrites OUTPUT only when the text changes, so an
# unchanged commit recompiles nothing.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P GitCommit.cmake
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
        OUTPUT_VARIABLE head RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND head)
        set(commit "${head}")
        # --no-optional-locks: never take the index lock a concurrent git command may hold.
        execute_process(COMMAND ${GIT_EXECUTABLE} --no-optional-locks -C ${SOURCE_DIR}
            status --porcelain --untracked-files=no
            OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
        if(rc EQUAL 0 AND NOT changes STREQUAL "")
            string(APPEND commit "-dirty")
        endif()
    endif()
endif()
set(text "\"${commit}\"\n")
if(EXISTS ${OUTPUT})
    file(READ ${OUTPUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
    file(WRITE ${OUTPUT} "${text}")
endif()
