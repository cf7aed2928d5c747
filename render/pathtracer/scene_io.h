// Scene files: loading, validation and lookup.
//
// A scene file is a JSON object describing one `Scene` (render/pathtracer/scene.h): image size and sample budget,
// camera, named materials and the primitives (spheres, axis-aligned boxes, parallelogram quads) that use
// them. The full schema, with every field's type, unit, range and default, is in scenes/README.md.
//
// The loader is strict on purpose: a missing required field, a value of the wrong type or out of range,
// an unknown key (a typo), a duplicate key or a reference to an undefined material is an error, never a
// silent default. Every problem is reported as an `InputError` whose `what()` reads
//
//     <file>: <field path>: <message>
//
// e.g. `my-scene.json: materials.steel.type: unknown material type "metal" (allowed: diffuse, mirror,
// glossy, glass, emissive)` or `my-scene.json: spheres[0].radius: expected a number, got string "1"`.
// Field paths are JSON-pointer-like: object keys joined by '.', array elements as [index]. Malformed JSON
// is reported with the parser's line and column. `//` and `/* */` comments are accepted.
#pragma once

#include <string>
#include <vector>

#include "render/pathtracer/scene.h"

namespace mv {

/// Loads and validates the scene file at `path`; returns a finalized Scene (Scene::finalize() called)
/// with `source_path` set to `path`. Throws mv::InputError(file, field, message) on any problem,
/// including a file that cannot be opened ("<path>: cannot open scene file (...)").
Scene load_scene(const std::string& path);

/// Same as load_scene, from JSON text. `origin` is the name used in messages and stored in
/// `Scene::source_path`; its directory is the base for relative paths in the file ("reference"), and its
/// file stem is the scene's default name. For text that comes from no file, pass e.g. "inline.json":
/// relative paths then resolve against the current directory.
Scene parse_scene(const std::string& json_text, const std::string& origin);

/// Lists the `*.json` scene files in `dir` (regular files only, not recursive) as paths `dir/<name>.json`,
/// sorted by file name; for the GUI's scene picker. Empty if `dir` is missing or not a directory.
std::vector<std::string> list_scene_files(const std::string& dir);

/// The directory holding the shipped scenes: $MEGAVIEW_SCENES if set and non-empty, else
/// MV_SOURCE_DIR "/scenes" (MV_SOURCE_DIR is a compile definition set by CMake to the source tree).
std::string default_scene_dir();

/// Resolves a user's --scene argument: an existing file path is returned as given; otherwise a bare name
/// such as "room" or "room.json" is looked up in default_scene_dir(). Throws InputError naming the
/// argument and listing the available scene names when nothing matches.
std::string resolve_scene_path(const std::string& name_or_path);

}  // namespace mv
