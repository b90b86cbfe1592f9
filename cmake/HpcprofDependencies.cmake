# hpcprof_dependency(NAME PURPOSE "text" FIND <commands...>)
# Gives every optional dependency the same tri-state option HPCPROF_WITH_<NAME> = AUTO | ON | OFF:
#   AUTO  use it when found, and say so in the feature summary either way;
#   ON    fail configuration with the fix when it is missing;
#   OFF   never look for it.
# Sets HPCPROF_HAVE_<NAME> to 1 or 0 (used by #cmakedefine01 in hpcprof/config.hpp).
include(FeatureSummary)

macro(hpcprof_dependency name)
    cmake_parse_arguments(_dep "" "PURPOSE;FOUND_VAR;FIX" "" ${ARGN})
    set(HPCPROF_WITH_${name} AUTO CACHE STRING "Use ${name} (${_dep_PURPOSE}): AUTO, ON or OFF")
    set_property(CACHE HPCPROF_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
    set(HPCPROF_HAVE_${name} 0)
    if(NOT HPCPROF_WITH_${name} STREQUAL "OFF")
        cmake_language(CALL hpcprof_find_${name})
        if(${_dep_FOUND_VAR})
            set(HPCPROF_HAVE_${name} 1)
        elseif(HPCPROF_WITH_${name} STREQUAL "ON")
            message(FATAL_ERROR "HPCPROF_WITH_${name}=ON but ${name} was not found. ${_dep_FIX} "
                                "Or configure with -DHPCPROF_WITH_${name}=OFF.")
        else()
            message(STATUS "hpcprof: ${name} not found; building without ${_dep_PURPOSE}")
        endif()
    endif()
    add_feature_info(${name} HPCPROF_HAVE_${name} "${_dep_PURPOSE} (HPCPROF_WITH_${name}=${HPCPROF_WITH_${name}})")
endmacro()
