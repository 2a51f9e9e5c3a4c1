// A dry run of a built plugin against a grid, made before a plan is written: the problem of each
// shape is created and destroyed on the plugin's device (and, with a tactic, told to use it), so
// that a parameter or a tactic the plugin refuses is found before any arm runs, not arm by arm
// (docs/provenance.md, "Checked before anything is built"). Nothing is timed, verified or written.
#pragma once

#include <filesystem>
#include <string>

namespace abh::worker {

struct DryCheckRequest {
  std::filesystem::path plugin;  // the built shared object
  std::filesystem::path shapes;  // a grid file (model/grid.hpp)
  std::string tactic = "auto";   // "auto": no tactic is checked
  std::string gpu;               // the GPU a CUDA plugin's problems are created on
};

// Prints {"shapes": <problems created>, "seconds": <wall time>} on stdout. Throws PluginError
// (plugin.hpp) naming every shape the plugin refuses (the first few, and how many), each with its
// parameters and the plugin's reason; UsageError when a CUDA plugin is checked without a GPU.
void dry_check(const DryCheckRequest& req);

}  // namespace abh::worker
