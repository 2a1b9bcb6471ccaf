# heft_host_io: heftd's input and control surfaces, built with or without the tests (heftctl needs
# it): the framework input segment reader/writer (hal/framework_input.h), the command socket
# server, the status snapshot and its JSON, and the shared-memory hand-off's writer.
add_library(heft_host_io STATIC
            ${CMAKE_CURRENT_LIST_DIR}/framework_input.cpp
            ${CMAKE_CURRENT_LIST_DIR}/command_server.cpp
            ${CMAKE_CURRENT_LIST_DIR}/status.cpp
            ${CMAKE_CURRENT_LIST_DIR}/json.cpp
            ${CMAKE_CURRENT_LIST_DIR}/shared_memory.cpp)
# config/include: heft/config/host_defaults.hpp (header only, no dependencies).
target_include_directories(heft_host_io PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${CMAKE_SOURCE_DIR}/plugin/include
                           ${CMAKE_SOURCE_DIR}/config/include)
target_link_libraries(heft_host_io PUBLIC heft::hal rt PRIVATE heft_warnings)
# heft_telemetry_table: the telemetry CSV's schema and its one reader, by column name
# (telemetry_table.hpp): heft-report and the tests read what heftd writes through it. No
# dependencies.
add_library(heft_telemetry_table STATIC ${CMAKE_CURRENT_LIST_DIR}/telemetry_table.cpp)
target_include_directories(heft_telemetry_table PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(heft_telemetry_table PRIVATE heft_warnings)
