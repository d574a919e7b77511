# The shared scheduler, epilogue and block-format headers compiled as CUDA, HIP and GLSL (tests/header_languages/run.sh).
add_test(NAME header_languages COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/header_languages/run.sh
         ${PROJECT_SOURCE_DIR}/engine/include ${CMAKE_CURRENT_SOURCE_DIR}/header_languages)
# A C11 program using only omnigemm.h, compiled as C and linked to the shared library.
add_executable(c_client ${CMAKE_CURRENT_SOURCE_DIR}/c_client/c_client.c)
set_target_properties(c_client PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(c_client PRIVATE omnigemm m)
add_test(NAME c_client COMMAND c_client)
