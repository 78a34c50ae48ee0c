# The check behind the CTest test serial_tests.each_pattern_names_a_test: every pattern of
# VOLLEY_SERIAL_TESTS (tests/CMakeLists.txt) names at least one test of the suites it marks, so a
# renamed test cannot leave the serial list and run beside another test unnoticed.
# Usage: cmake -DPATTERNS=P1:P2:... -DBINARIES=B1:B2:... -P serial_tests_check.cmake
string(REPLACE ":" ";" _patterns "${PATTERNS}")
string(REPLACE ":" ";" _binaries "${BINARIES}")
set(_stale "")
foreach(_pattern IN LISTS _patterns)
  set(_found FALSE)
  foreach(_binary IN LISTS _binaries)
    execute_process(COMMAND "${_binary}" --gtest_list_tests "--gtest_filter=${_pattern}"
                    OUTPUT_VARIABLE _listed RESULT_VARIABLE _status)
    if(NOT _status EQUAL 0)
      message(FATAL_ERROR "${_binary} --gtest_list_tests failed (${_status})")
    endif()
    # A test is listed as an indented line under its suite's line.
    if(_listed MATCHES "\n  [A-Za-z]")
      set(_found TRUE)
    endif()
  endforeach()
  if(NOT _found)
    list(APPEND _stale "${_pattern}")
  endif()
endforeach()
if(_stale)
  list(JOIN _stale "\n  " _names)
  message(FATAL_ERROR "VOLLEY_SERIAL_TESTS (tests/CMakeLists.txt) names no test with:\n  ${_names}")
endif()
