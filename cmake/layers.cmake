# Layers enforced by the build (docs/ARCHITECTURE.md, "Layers"). cmake/layers.txt lists each
# layer's folder and the layers it may use. Every layer gets an include root in the build tree
# holding one link, to its own folder: a file sees the headers of its own layer and of the layers
# its target links, so `#include "shim/..."` in coll/ does not compile. overpass_layer() links a
# layer's library to exactly the layers the list allows.
file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/layers.txt overpass_layer_lines REGEX "^[a-z]")
list(FILTER overpass_layer_lines EXCLUDE REGEX "^test-only")
foreach(line IN LISTS overpass_layer_lines)
  string(REGEX REPLACE "[ \t]+" ";" fields "${line}")
  list(POP_FRONT fields layer folder)
  set(OVERPASS_LAYER_USES_${layer} ${fields})
  set(root ${PROJECT_BINARY_DIR}/include/${layer})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  add_library(overpass_${layer}_headers INTERFACE)
  target_include_directories(overpass_${layer}_headers INTERFACE ${root})
endforeach()

# overpass_layer(TARGET LAYER): TARGET, a library of LAYER, sees LAYER's headers and links the
# layers LAYER may use: their libraries where they are built, else their headers only (the
# OVERPASS_GPU_ONLY build has no MPI, UCX or hwloc, so no shim, ucx or topo library).
function(overpass_layer target layer)
  target_link_libraries(${target} PUBLIC overpass_${layer}_headers)
  foreach(used IN LISTS OVERPASS_LAYER_USES_${layer})
    if(TARGET overpass_${used})
      target_link_libraries(${target} PUBLIC overpass_${used})
    else()
      target_link_libraries(${target} PUBLIC overpass_${used}_headers)
    endif()
  endforeach()
endfunction()
