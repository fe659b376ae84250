# Installs the build into a scratch prefix and builds a consumer project against
# it (CMake package and pkg-config). Needs the library built first.
add_test(NAME install_consumer
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.sh
                 ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_check)
set_tests_properties(install_consumer PROPERTIES TIMEOUT 300 LABELS "install;nosanitize")
