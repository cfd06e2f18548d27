# The Python module strata._engine (src/strata/python/) and its package (python/strata/).
# STRATA_PYTHON=AUTO builds it when pybind11 is importable by the project venv's Python
# (.venv, made by scripts/setup.sh) or when scikit-build-core drives the build (pip install .).
# In a plain build the package is laid out in BUILD/python/strata, importable from there.
set(STRATA_PYTHON AUTO CACHE STRING "Build the Python module: AUTO (when pybind11 is found), ON or OFF")
set_property(CACHE STRATA_PYTHON PROPERTY STRINGS AUTO ON OFF)

if(NOT SKBUILD AND NOT STRATA_PYTHON STREQUAL "OFF" AND NOT DEFINED Python_EXECUTABLE
   AND EXISTS ${CMAKE_SOURCE_DIR}/.venv/bin/python)
  set(Python_EXECUTABLE ${CMAKE_SOURCE_DIR}/.venv/bin/python)
endif()
set(strata_build_python OFF)
if(SKBUILD OR STRATA_PYTHON STREQUAL "ON")
  set(strata_build_python ON)
elseif(STRATA_PYTHON STREQUAL "AUTO" AND DEFINED Python_EXECUTABLE)
  execute_process(COMMAND ${Python_EXECUTABLE} -m pybind11 --cmakedir
                  OUTPUT_VARIABLE strata_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE strata_pybind11_missing ERROR_QUIET)
  if(NOT strata_pybind11_missing)
    set(strata_build_python ON)
    set(pybind11_DIR ${strata_pybind11_dir})
  endif()
endif()
if(STRATA_PYTHON STREQUAL "OFF")
  message(STATUS "Python module: off (STRATA_PYTHON=OFF)")
  return()
elseif(NOT strata_build_python)
  message(STATUS "Python module: off (no pybind11 for ${Python_EXECUTABLE}; scripts/setup.sh installs it in .venv)")
  return()
endif()

if(NOT DEFINED pybind11_DIR AND DEFINED Python_EXECUTABLE)
  execute_process(COMMAND ${Python_EXECUTABLE} -m pybind11 --cmakedir
                  OUTPUT_VARIABLE pybind11_DIR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
if(STRATA_PYTHON STREQUAL "AUTO" AND NOT SKBUILD)
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
  if(NOT Python_Development.Module_FOUND)
    message(STATUS "Python module: off (no Python.h for ${Python_EXECUTABLE}; install python3-dev)")
    return()
  endif()
else()
  find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
endif()
find_package(pybind11 CONFIG REQUIRED)
message(STATUS "Python module: on (pybind11 ${pybind11_VERSION}, Python ${Python_VERSION})")

file(GLOB STRATA_PYTHON_BINDING_SOURCES CONFIGURE_DEPENDS src/strata/python/*.cpp)
pybind11_add_module(strata_python_module ${STRATA_PYTHON_BINDING_SOURCES})
set_target_properties(strata_python_module PROPERTIES OUTPUT_NAME _engine
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/strata)
target_link_libraries(strata_python_module PRIVATE strata_model_opening)

# The pure-Python half beside the module, so BUILD/python is importable as it stands.
file(GLOB_RECURSE STRATA_PYTHON_PACKAGE_FILES CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/python/strata
     ${CMAKE_SOURCE_DIR}/python/strata/*.py)
foreach(name ${STRATA_PYTHON_PACKAGE_FILES})
  configure_file(${CMAKE_SOURCE_DIR}/python/strata/${name} ${CMAKE_BINARY_DIR}/python/strata/${name} COPYONLY)
endforeach()

if(SKBUILD)
  install(TARGETS strata_python_module LIBRARY DESTINATION strata)
  install(TARGETS strata RUNTIME DESTINATION ${SKBUILD_SCRIPTS_DIR})
endif()
