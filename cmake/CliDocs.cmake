# Man pages and bash completion, generated from the built hpcprof's own help and option table
# (cli/CMakeLists.txt runs this after every link of hpcprof):
#   OUT/man/man1/hpcprof.1, OUT/man/man1/hpcprof-<subcommand>.1   (help2man, from --help)
#   OUT/bash-completion/completions/hpcprof                        (`hpcprof completion bash`)
# The subcommands are read from `hpcprof --help`, so a new one gets its page without an edit
# here.
#   cmake -DHPCPROF=... -DHELP2MAN=... -DVERSION=... -DOUT=... -P CliDocs.cmake
set(man_dir ${OUT}/man/man1)
set(wrapper_dir ${OUT}/man/wrappers)
file(MAKE_DIRECTORY ${man_dir} ${wrapper_dir} ${OUT}/bash-completion/completions)

execute_process(COMMAND ${HPCPROF} completion bash
    OUTPUT_FILE ${OUT}/bash-completion/completions/hpcprof RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hpcprof completion bash failed (${rc})")
endif()

execute_process(COMMAND ${HPCPROF} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "hpcprof --help failed (${rc})")
endif()
# "Subcommands:" then one "  NAME   DESCRIPTION" line each, up to the blank line.
string(REGEX REPLACE "^.*\nSubcommands:\n" "" listing "${help}")
string(REGEX REPLACE "\n\n.*$" "" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(names "")
foreach(line IN LISTS lines)
    if(line MATCHES "^  ([a-z][a-z0-9-]*) +(.+)$")
        list(APPEND names ${CMAKE_MATCH_1})
        set(description_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
endforeach()
if(NOT names)
    message(FATAL_ERROR "no subcommands found in hpcprof --help")
endif()

# Every page points to the others.
set(see_also "[SEE ALSO]\n.BR hpcprof (1)")
foreach(name IN LISTS names)
    string(APPEND see_also ",\n.BR hpcprof-${name} (1)")
endforeach()
string(APPEND see_also ".\nThe user guide: docs/user-guide.md in the hpcprof sources.\n")
file(WRITE ${wrapper_dir}/see-also.h2m "${see_also}")

function(make_page page program description)
    execute_process(COMMAND ${HELP2MAN} --no-info --version-string=${VERSION}
            --name=${description} --include=${wrapper_dir}/see-also.h2m
            --output=${man_dir}/${page}.1 ${program}
        RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "help2man ${page}: ${err}")
    endif()
endfunction()

make_page(hpcprof ${HPCPROF} "profile distributed HPC and ML jobs without recompiling them")
foreach(name IN LISTS names)
    # help2man runs one program with --help: a two-line script stands for `hpcprof NAME`.
    set(wrapper ${wrapper_dir}/hpcprof-${name})
    file(WRITE ${wrapper} "#!/bin/sh\nexec '${HPCPROF}' ${name} \"$@\"\n")
    file(CHMOD ${wrapper} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE)
    string(TOLOWER "${description_${name}}" description)
    make_page(hpcprof-${name} ${wrapper} "${description}")
endforeach()
