# check_subproject.cmake: configures tests/cmake/subproject (fusedsample under add_subdirectory, as README's
# "C++ API" suggests) and checks that the CLI's file does not collide with the subproject's binary directory.
# Until session 60 the executables went to ${CMAKE_BINARY_DIR}, the user's build root, where the CLI's name,
# `fusedsample`, is the subproject's binary directory: the user's build failed linking it
# ("cannot open output file ../: Is a directory").
#   cmake -DSOURCE=<fusedsample source> -DWORK=<scratch build dir> -P check_subproject.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/cmake/subproject -B ${WORK} -DFUSEDSAMPLE_SOURCE=${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring a project that adds fusedsample with add_subdirectory failed:\n${out}\n${err}")
endif()
file(READ ${WORK}/cli_path.txt cli)
cmake_path(GET cli PARENT_PATH cli_dir)
if(cli STREQUAL "${WORK}/fusedsample" OR IS_DIRECTORY "${cli}")
  message(FATAL_ERROR "the CLI would be written to ${cli}, which is the subproject's binary directory")
endif()
if(NOT cli_dir STREQUAL "${WORK}/fusedsample")
  message(FATAL_ERROR "the CLI would be written to ${cli}, outside the subproject's binary directory ${WORK}/fusedsample")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "add_subdirectory(fusedsample): the CLI goes to ${cli}")
