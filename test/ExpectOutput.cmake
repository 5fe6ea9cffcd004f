# Runs ${COMMAND} ${ARGS} ("|"-separated) and passes when its exit status is what ${EXIT}
# says ("zero" or "nonzero"; a crash never passes) and its output matches ${EXPECT}.
# CTest's PASS_REGULAR_EXPRESSION alone ignores the exit status: a tool that printed the
# expected line and then failed would pass.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "crashed (${rc}):\n${out}${err}")
endif()
if(EXIT STREQUAL "zero" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "expected exit 0, got ${rc}:\n${out}${err}")
elseif(EXIT STREQUAL "nonzero" AND rc EQUAL 0)
  message(FATAL_ERROR "expected a non-zero exit, got 0:\n${out}${err}")
elseif(NOT EXIT MATCHES "^(zero|nonzero)$")
  message(FATAL_ERROR "EXIT must be zero or nonzero, got '${EXIT}'")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "output does not match '${EXPECT}':\n${out}${err}")
endif()
