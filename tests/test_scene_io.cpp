// Scene file loader (render/pathtracer/scene_io.h): the shipped scenes load as described, every class of mistake is
// an mv::InputError naming the file and the field, and scene lookup by name works.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "render/pathtracer/scene_io.h"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const char* const kOrigin = "scenes/bad.json";

/// A small valid scene; tests mutate a copy to produce one mistake at a time.
Json valid_scene() {
  return Json::parse(R"({
    "name": "tiny",
    "resolution": {"width": 64, "height": 48},
    "camera": {"position": [0, 1, 5], "look_at": [0, 1, 0]},
    "materials": {
      "white": {"type": "diffuse", "albedo": [0.7, 0.7, 0.7]},
      "light": {"type": "emissive", "emission": [4, 4, 4]},
      "chrome": {"type": "mirror"}
    },
    "spheres": [{"center": [0, 1, 0], "radius": 1, "material": "chrome"}],
    "boxes": [{"min": [-3, 0, -3], "max": [3, 3, 3], "material": "white"}],
    "quads": [{"corner": [-1, 2.9, -1], "edge_u": [2, 0, 0], "edge_v": [0, 0, 2], "material": "light"}]
  })");
}

/// Parses `text` as scene file kOrigin and expects an InputError whose field is `field` and whose message
/// reads "<kOrigin>: <field>: ..." and contains every string of `parts`.
void expect_error(const std::string& text, const std::string& field, const std::vector<std::string>& parts) {
  SCOPED_TRACE(text);
  try {
    mv::parse_scene(text, kOrigin);
    FAIL() << "no exception; expected an InputError about " << field;
  } catch (const mv::InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), kOrigin) << what;
    EXPECT_EQ(e.field(), field) << what;
    const std::string prefix = std::string(kOrigin) + ": " + (field.empty() ? "" : field + ": ");
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << "message should start with \"" << prefix << "\": " << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "missing \"" << p << "\" in: " << what;
  } catch (const std::exception& e) {
    FAIL() << "expected mv::InputError, got another exception: " << e.what();
  }
}

void expect_json_error(const Json& j, const std::string& field, const std::vector<std::string>& parts) {
  expect_error(j.dump(), field, parts);
}

std::string shipped(const char* name) { return mv::default_scene_dir() + "/" + name; }

void expect_physically_sensible(const mv::Scene& s) {
  ASSERT_EQ(s.materials.size(), s.material_names.size());
  for (size_t i = 0; i < s.materials.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      EXPECT_LT(s.materials[i].albedo[c], 1.f) << s.material_names[i];
      EXPECT_GE(s.materials[i].albedo[c], 0.f) << s.material_names[i];
    }
}

// ---------------------------------------------------------------------------------------------------
// The shipped scenes

TEST(SceneIoShipped, RoomLoadsAsDescribed) {
  const mv::Scene s = mv::load_scene(shipped("room.json"));
  EXPECT_EQ(s.name, "room");
  EXPECT_EQ(s.width, 800);
  EXPECT_EQ(s.height, 600);
  EXPECT_EQ(s.target_spp, 512);
  EXPECT_GE(s.lights.size(), 2u);
  EXPECT_GT(s.light_area, 0.f);
  EXPECT_EQ(s.light_cdf.size(), s.lights.size());
  EXPECT_EQ(s.spheres.size(), 2u);  // two reflecting spheres on the floor
  for (const mv::Sphere& sp : s.spheres) {
    EXPECT_NEAR(sp.center.y, sp.radius, 1e-4f) << "sphere should rest on the floor (y = 0)";
    const mv::MaterialType t = s.materials[sp.material].type;
    EXPECT_TRUE(t == mv::MaterialType::Mirror || t == mv::MaterialType::Glossy || t == mv::MaterialType::Glass);
  }
  // Ceiling lights face down into the room.
  int down = 0;
  for (uint32_t li : s.lights) down += s.quads[li].normal.y < -0.99f;
  EXPECT_GE(down, 2);
  EXPECT_TRUE(fs::path(s.reference_path).is_absolute()) << s.reference_path;
  EXPECT_EQ(fs::path(s.reference_path).filename(), "room.exr");
  EXPECT_EQ(fs::path(s.reference_path).parent_path().filename(), "assets");
  expect_physically_sensible(s);
}

TEST(SceneIoShipped, RoomIsClosedAroundTheCamera) {
  // Every wall quad's normal points into the room, toward the camera: the camera sees their front sides.
  const mv::Scene s = mv::load_scene(shipped("room.json"));
  int walls = 0;
  for (const mv::Quad& q : s.quads) {
    if (q.area < 50.f) continue;  // lights and other small quads
    ++walls;
    EXPECT_GT(dot(s.camera.position - q.corner, q.normal), 0.f) << "a wall faces away from the camera";
  }
  EXPECT_EQ(walls, 6) << "floor, ceiling, two side walls, far wall and the wall behind the camera";
}

TEST(SceneIoShipped, CornellLoadsAsDescribed) {
  const mv::Scene s = mv::load_scene(shipped("cornell.json"));
  EXPECT_EQ(s.name, "cornell");
  EXPECT_EQ(s.width, 512);
  EXPECT_EQ(s.height, 512);
  EXPECT_EQ(s.target_spp, 512);
  ASSERT_GE(s.lights.size(), 1u);
  EXPECT_GT(s.light_area, 0.f);
  EXPECT_LT(s.quads[s.lights[0]].normal.y, -0.99f) << "the ceiling light faces down";
  EXPECT_EQ(fs::path(s.reference_path).filename(), "cornell.exr");
  expect_physically_sensible(s);
}

TEST(SceneIoShipped, CausticLoadsAsDescribed) {
  const mv::Scene s = mv::load_scene(shipped("caustic.json"));
  EXPECT_EQ(s.name, "caustic");
  EXPECT_EQ(s.width, 800);
  EXPECT_EQ(s.height, 600);
  EXPECT_EQ(s.target_spp, 512);
  // One glass sphere of index 1.5 resting on the floor (y = 0).
  int glass = 0;
  for (const mv::Sphere& sp : s.spheres) {
    const mv::Material& m = s.materials[sp.material];
    if (m.type != mv::MaterialType::Glass) continue;
    ++glass;
    EXPECT_FLOAT_EQ(m.ior, 1.5f);
    EXPECT_NEAR(sp.center.y, sp.radius, 1e-4f) << "the glass sphere should rest on the floor";
  }
  EXPECT_EQ(glass, 1);
  // One small bright quad light, facing the sphere.
  ASSERT_EQ(s.lights.size(), 1u);
  const mv::Quad& light = s.quads[s.lights[0]];
  EXPECT_NEAR(s.light_area, 0.25f, 1e-3f);
  EXPECT_GE(mv::max_component(s.materials[light.material].emission), 100.f);
  EXPECT_GT(dot(s.spheres[0].center - light.corner, light.normal), 0.f) << "the light faces away from the sphere";
  // Closed: six walls whose normals point into the room, toward the camera.
  int walls = 0;
  for (const mv::Quad& q : s.quads) {
    if (q.area < 10.f) continue;
    ++walls;
    EXPECT_GT(dot(s.camera.position - q.corner, q.normal), 0.f) << "a wall faces away from the camera";
  }
  EXPECT_EQ(walls, 6);
  EXPECT_EQ(fs::path(s.reference_path).filename(), "caustic.exr");
  EXPECT_EQ(fs::path(s.reference_path).parent_path().filename(), "assets");
  expect_physically_sensible(s);
}

TEST(SceneIoShipped, ListFindsShippedScenesSorted) {
  const std::vector<std::string> files = mv::list_scene_files(mv::default_scene_dir());
  std::vector<std::string> names;
  for (const std::string& f : files) names.push_back(fs::path(f).filename().string());
  EXPECT_NE(std::find(names.begin(), names.end(), "room.json"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "cornell.json"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "caustic.json"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const std::string& f : files) EXPECT_NO_THROW(mv::load_scene(f)) << f;  // every shipped scene is valid
  EXPECT_TRUE(mv::list_scene_files("/nonexistent/megaview/scenes").empty());
}

TEST(SceneIoShipped, ResolveByNameAndPath) {
  const std::string by_name = mv::resolve_scene_path("room");
  EXPECT_EQ(fs::path(by_name).filename(), "room.json");
  EXPECT_EQ(mv::load_scene(by_name).name, "room");
  EXPECT_EQ(fs::path(mv::resolve_scene_path("cornell.json")).filename(), "cornell.json");
  const std::string path = shipped("cornell.json");
  EXPECT_EQ(mv::resolve_scene_path(path), path);  // an existing path is returned as given
}

TEST(SceneIoShipped, ResolveUnknownNameListsAvailable) {
  try {
    mv::resolve_scene_path("rooom");
    FAIL() << "expected InputError";
  } catch (const mv::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rooom"), std::string::npos) << what;
    EXPECT_NE(what.find("available: "), std::string::npos) << what;
    EXPECT_NE(what.find("cornell"), std::string::npos) << what;
    EXPECT_NE(what.find("room"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean \"room\""), std::string::npos) << what;
  }
  EXPECT_THROW(mv::resolve_scene_path("no/such/dir/room.json"), mv::InputError);
}

TEST(SceneIoShipped, DefaultSceneDirHonoursEnvironment) {
  const char* old = std::getenv("MEGAVIEW_SCENES");
  const std::string saved = old ? old : "";
  setenv("MEGAVIEW_SCENES", "/tmp/my-scenes", 1);
  EXPECT_EQ(mv::default_scene_dir(), "/tmp/my-scenes");
  unsetenv("MEGAVIEW_SCENES");
  EXPECT_EQ(mv::default_scene_dir(), std::string(MV_SOURCE_DIR) + "/scenes");
  if (old) setenv("MEGAVIEW_SCENES", saved.c_str(), 1);
}

// ---------------------------------------------------------------------------------------------------
// Valid input: values, defaults, order

TEST(SceneIoParse, ValuesAndDefaults) {
  const mv::Scene s = mv::parse_scene(valid_scene().dump(), "/data/scenes/tiny.json");
  EXPECT_EQ(s.name, "tiny");
  EXPECT_EQ(s.source_path, "/data/scenes/tiny.json");
  EXPECT_EQ(s.width, 64);
  EXPECT_EQ(s.height, 48);
  EXPECT_EQ(s.target_spp, 512);  // defaults
  EXPECT_EQ(s.max_depth, 16u);
  EXPECT_FLOAT_EQ(s.epsilon, 1e-3f);
  EXPECT_FLOAT_EQ(s.camera.up.y, 1.f);
  EXPECT_FLOAT_EQ(s.camera.vfov_deg, 45.f);
  EXPECT_TRUE(s.reference_path.empty());
  ASSERT_EQ(s.material_names, (std::vector<std::string>{"white", "light", "chrome"}));  // file order
  EXPECT_EQ(s.materials[2].type, mv::MaterialType::Mirror);
  EXPECT_FLOAT_EQ(s.materials[2].albedo.x, 0.8f);
  EXPECT_EQ(s.spheres.at(0).material, 2u);
  EXPECT_EQ(s.quads.at(0).material, 1u);
  EXPECT_FLOAT_EQ(s.boxes.at(0).hi.y, 3.f);
  ASSERT_EQ(s.lights.size(), 1u);  // finalize() ran
  EXPECT_FLOAT_EQ(s.light_area, 4.f);
}

TEST(SceneIoParse, NameDefaultsToFileStemAndReferenceIsResolvedAgainstTheFile) {
  Json j = valid_scene();
  j.erase("name");
  j["reference"] = "../assets/tiny.exr";
  const mv::Scene s = mv::parse_scene(j.dump(), "/data/scenes/tiny_room.json");
  EXPECT_EQ(s.name, "tiny_room");
  EXPECT_EQ(s.reference_path, "/data/assets/tiny.exr");  // need not exist yet
}

TEST(SceneIoParse, MaterialTypesAndOptionalFields) {
  Json j = valid_scene();
  j["materials"] = Json::parse(R"({
    "zz": {"type": "glass", "ior": 1.33},
    "aa": {"type": "glossy", "albedo": [0.5, 0.4, 0.3], "exponent": 1000, "emission": [0.1, 0, 0]},
    "light": {"type": "emissive", "emission": [1, 2, 3]},
    "chrome": {"type": "mirror", "albedo": [0.9, 0.9, 0.9]},
    "white": {"type": "diffuse"}
  })");
  j["background"] = {0.1, 0.2, 0.3};
  j["target_spp"] = 64;
  j["max_depth"] = 1024;
  j["epsilon"] = 1;
  const mv::Scene s = mv::parse_scene(j.dump(), kOrigin);
  ASSERT_EQ(s.material_names, (std::vector<std::string>{"zz", "aa", "light", "chrome", "white"}));
  EXPECT_EQ(s.materials[0].type, mv::MaterialType::Glass);
  EXPECT_FLOAT_EQ(s.materials[0].ior, 1.33f);
  EXPECT_FLOAT_EQ(s.materials[0].albedo.y, 1.f);  // clear glass by default
  EXPECT_EQ(s.materials[1].type, mv::MaterialType::Glossy);
  EXPECT_FLOAT_EQ(s.materials[1].exponent, 1000.f);
  EXPECT_FLOAT_EQ(s.materials[1].emission.x, 0.1f);
  EXPECT_FLOAT_EQ(s.materials[2].emission.z, 3.f);
  EXPECT_EQ(s.spheres[0].material, 3u);
  EXPECT_FLOAT_EQ(s.background.z, 0.3f);
  EXPECT_EQ(s.target_spp, 64);
  EXPECT_EQ(s.max_depth, 1024u);
}

TEST(SceneIoParse, CommentsAreAllowed) {
  std::string text = valid_scene().dump(2);
  text.insert(text.find('{') + 1, "\n  // a line comment\n  /* and a block comment */");
  EXPECT_NO_THROW(mv::parse_scene(text, kOrigin));
}

// ---------------------------------------------------------------------------------------------------
// Errors: each class names the file and the field

TEST(SceneIoErrors, MissingFile) {
  try {
    mv::load_scene("scenes/nope.json");
    FAIL() << "expected InputError";
  } catch (const mv::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("scenes/nope.json: cannot open scene file", 0), 0u) << e.what();
    EXPECT_EQ(e.file(), "scenes/nope.json");
  }
}

TEST(SceneIoErrors, MalformedJsonGivesLineAndColumn) {
  expect_error("{\n  \"name\": \"x\"\n  \"camera\": {}\n}", "", {"malformed JSON", "line 3, column"});
  expect_error("{\"name\": \"x\",", "", {"malformed JSON", "line 1"});
  expect_error("", "", {"malformed JSON"});
  expect_error("[1, 2, 3]", "", {"must contain a JSON object", "got array"});
}

TEST(SceneIoErrors, MissingRequiredField) {
  Json j = valid_scene();
  j.erase("camera");
  expect_json_error(j, "camera", {"missing required field"});
  j = valid_scene();
  j["camera"].erase("look_at");
  expect_json_error(j, "camera.look_at", {"missing required field"});
  j = valid_scene();
  j["resolution"].erase("height");
  expect_json_error(j, "resolution.height", {"missing required field"});
  j = valid_scene();
  j["spheres"][0].erase("radius");
  expect_json_error(j, "spheres[0].radius", {"missing required field"});
  j = valid_scene();
  j["materials"]["white"].erase("type");
  expect_json_error(j, "materials.white.type", {"missing required field"});
  j = valid_scene();
  j["materials"]["light"].erase("emission");
  expect_json_error(j, "materials.light.emission", {"missing required field"});
}

TEST(SceneIoErrors, WrongType) {
  Json j = valid_scene();
  j["spheres"][0]["radius"] = "1";
  expect_json_error(j, "spheres[0].radius", {"expected a number, got string \"1\""});
  j = valid_scene();
  j["resolution"]["width"] = 64.5;
  expect_json_error(j, "resolution.width", {"expected an integer, got number"});
  j = valid_scene();
  j["camera"]["position"] = {0, 1};
  expect_json_error(j, "camera.position", {"expected an array of 3 numbers, got 2 elements"});
  j = valid_scene();
  j["camera"]["up"] = {0, true, 0};
  expect_json_error(j, "camera.up[1]", {"expected a number, got boolean"});
  j = valid_scene();
  j["materials"] = Json::array();
  expect_json_error(j, "materials", {"expected an object, got array"});
  j = valid_scene();
  j["quads"] = Json::object();
  expect_json_error(j, "quads", {"expected an array of objects, got object"});
  j = valid_scene();
  j["spheres"][0]["material"] = 2;
  expect_json_error(j, "spheres[0].material", {"expected a material name (a string), got number 2"});
}

TEST(SceneIoErrors, UnknownMaterialType) {
  Json j = valid_scene();
  j["materials"]["white"]["type"] = "metal";
  expect_json_error(j, "materials.white.type",
               {"unknown material type \"metal\" (allowed: diffuse, mirror, glossy, glass, emissive)"});
  j["materials"]["white"]["type"] = "difuse";
  expect_json_error(j, "materials.white.type", {"did you mean \"diffuse\"?"});
}

TEST(SceneIoErrors, UnknownMaterialReference) {
  Json j = valid_scene();
  j["boxes"][0]["material"] = "whtie";
  expect_json_error(j, "boxes[0].material",
               {"unknown material \"whtie\"", "did you mean \"white\"?", "(defined: white, light, chrome)"});
}

TEST(SceneIoErrors, ResolutionOutOfRange) {
  Json j = valid_scene();
  j["resolution"]["width"] = 100000;
  expect_json_error(j, "resolution.width", {"100000 is out of range [4, 16384]"});
  j["resolution"]["width"] = 64;
  j["resolution"]["height"] = 3;
  expect_json_error(j, "resolution.height", {"3 is out of range [4, 16384]"});
  j["resolution"]["height"] = -5;
  expect_json_error(j, "resolution.height", {"-5 is out of range"});
  j["resolution"]["height"] = 18446744073709551615ull;
  expect_json_error(j, "resolution.height", {"is out of range"});
}

TEST(SceneIoErrors, OtherValuesOutOfRange) {
  struct Case { const char* pointer; Json value; const char* field; const char* part; };
  const std::vector<Case> cases = {
      {"/target_spp", 0, "target_spp", "0 is out of range [1, 1048576]"},
      {"/max_depth", 1025, "max_depth", "1025 is out of range [1, 1024]"},
      {"/epsilon", 0, "epsilon", "out of range (0, 1]"},
      {"/camera/vfov", 180, "camera.vfov", "out of range (0, 180)"},
      {"/materials/white/albedo/1", 1.2, "materials.white.albedo[1]", "1.2 is out of range [0, 1]"},
      {"/materials/light/emission/0", -1, "materials.light.emission[0]", "must be >= 0"},
      {"/materials/light/emission", Json::array({0, 0, 0}), "materials.light.emission", "must emit"},
      {"/background", Json::array({0, 0, -0.5}), "background[2]", "must be >= 0"},
      {"/spheres/0/radius", 0, "spheres[0].radius", "must be > 0"},
      {"/boxes/0/max/1", -1, "boxes[0].max", "on y max -1 <= min 0"},
      {"/quads/0/edge_v", Json::array({4, 0, 0}), "quads[0].edge_v", "parallel"},
      {"/quads/0/edge_u", Json::array({0, 0, 0}), "quads[0].edge_u", "zero vector"},
      {"/quads/0/edge_u", Json::array({1e30, 0, 0}), "quads[0].edge_u", "[-1e6, 1e6]"},
      {"/quads/0/edge_v", Json::array({0, 0, 1e30}), "quads[0].edge_v", "[-1e6, 1e6]"},
      {"/quads/0/corner", Json::array({0, -2e6, 0}), "quads[0].corner", "[-1e6, 1e6]"},
      {"/camera/look_at", Json::array({0, 1, 5}), "camera.look_at", "must differ from camera.position"},
      {"/camera/up", Json::array({0, 0, -3}), "camera.up", "parallel to the view direction"},
  };
  for (const Case& c : cases) {
    Json j = valid_scene();
    j[Json::json_pointer(c.pointer)] = c.value;
    expect_json_error(j, c.field, {c.part});
  }
  Json j = valid_scene();
  j["materials"]["zz"] = {{"type", "glass"}, {"ior", 3.5}};
  expect_json_error(j, "materials.zz.ior", {"3.5 is out of range [1, 3]"});
  j["materials"]["zz"] = {{"type", "glossy"}, {"exponent", 0.5}};
  expect_json_error(j, "materials.zz.exponent", {"0.5 is out of range [1, 100000]"});
}

TEST(SceneIoErrors, UnknownKeys) {
  Json j = valid_scene();
  j["camra"] = Json::object();
  expect_json_error(j, "camra", {"unknown field", "did you mean \"camera\"?", "allowed: name,"});
  j = valid_scene();
  j["spheres"][0]["radus"] = 1;
  expect_json_error(j, "spheres[0].radus", {"unknown field", "did you mean \"radius\"?"});
  j = valid_scene();
  j["camera"]["fov"] = 40;
  expect_json_error(j, "camera.fov", {"unknown field", "(allowed: position, look_at, up, vfov)"});
  j = valid_scene();
  j["materials"]["white"]["ior"] = 1.5;  // a real field, but not of this material type
  expect_json_error(j, "materials.white.ior", {"unknown field for a \"diffuse\" material", "allowed: type, albedo, emission"});
}

TEST(SceneIoErrors, DuplicateKey) {
  expect_error(R"({"camera": {"position": [0,0,1], "look_at": [0,0,0], "position": [0,0,2]}})", "camera.position",
               {"duplicate key"});
  expect_error(R"({"spheres": [{}, {"radius": 1, "radius": 2}]})", "spheres[1].radius", {"duplicate key"});
}

TEST(SceneIoErrors, NoPrimitives) {
  Json j = valid_scene();
  j.erase("spheres");
  j.erase("boxes");
  j["quads"] = Json::array();
  expect_json_error(j, "", {"no primitives"});
}

}  // namespace
