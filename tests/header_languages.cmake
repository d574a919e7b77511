# The shared scheduler header compiled as CUDA, HIP and GLSL (tests/header_languages/run.sh).
add_test(NAME header_languages COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/header_languages/run.sh
         ${PROJECT_SOURCE_DIR}/engine/include ${CMAKE_CURRENT_SOURCE_DIR}/header_languages)
