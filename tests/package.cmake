# Install + find_package round trip with a C++ and a C client (tests/package_client).
add_test(NAME package COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/package_client/run.sh
         ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/package_client)
