// Where libblobrt itself was loaded from, for installs that moved after configuration (a
// Python wheel puts libblobrt in site-packages/.blobrt.mesonpy.libs/): the plugins.d and
// the plugin scanner are then looked for next to it, at the same relative place as in a
// normal install (<libdir>/blobrt/plugins.d). GStreamer's relocatable builds do the same.
#ifndef BLOBRT_RELOCATION_HPP
#define BLOBRT_RELOCATION_HPP

#include <string>

namespace blobrt {

// The file the loaded libblobrt came from, as the dynamic linker names it ("" if unknown).
// The one place libblobrt asks (dladdr); blobrt::library_path() (runtime.hpp) is its
// canonical form for everyone outside.
std::string libblobrt_loaded_file();

// The directory holding the loaded libblobrt, canonical ("" if unknown).
std::string libblobrt_directory();

// <that directory>/blobrt/<name> ("" if unknown).
std::string next_to_libblobrt(const std::string& name);

}  // namespace blobrt

#endif
