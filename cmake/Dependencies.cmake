# Every dependency comes from a Debian 12 package (scripts/install-deps.sh installs them).
find_package(Threads REQUIRED)
find_package(pugixml 1.13 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(Boost 1.81 EXACT REQUIRED)          # header-only: Asio
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(OpenSSL 3 REQUIRED)  # libcrypto: control auth; libssl: protocol=tls
find_package(PkgConfig REQUIRED)
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing>=2.3)  # the io_uring engine (--io uring)
if(VOLLEY_BUILD_TESTS)
  find_package(GTest 1.12 REQUIRED)
  include(GoogleTest)
endif()
if(VOLLEY_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
