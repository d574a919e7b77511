# Developer-build tests of the tools' checkers: runs CMD with ENV_VAR=1 (a switch that spoils one
# output element) and requires exit status 1 and EXPECT in the output, so that a crash does not
# count as the expected failure.
#   usage: cmake -DENV_VAR=<name> -DEXPECT=<regex> -DCMD=<tool;args...> -P check_self_test.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV_VAR}=1 ${CMD}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit status 1 with ${ENV_VAR}=1, got ${rc}\n${out}\n${err}")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\n${out}")
endif()
message(STATUS "${ENV_VAR}=1: the checker failed the spoiled output as it must")
