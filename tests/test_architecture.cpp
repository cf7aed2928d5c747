// The architecture's rules, checked on the source tree (docs/architecture.md, "Folders and what may include what"):
//   - base/ includes only base/; render/ only base/ and render/; sched/ only base/ and sched/;
//   - every repository path that a source file or a document cites exists;
//   - nothing cites a document or a tracker that the repository does not contain.
// The tests read the tree at MV_SOURCE_DIR and skip when it is absent (a copied test binary).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = MV_SOURCE_DIR;

bool is_source(const fs::path& p) {
  static const std::set<std::string> ext = {".h", ".cuh", ".cpp", ".cu", ".py", ".sh", ".cmake"};
  return ext.count(p.extension().string()) > 0 || p.filename() == "CMakeLists.txt" || p.filename() == "Makefile";
}

/// Every tracked-looking file under `dir` (relative to the root) that `keep` accepts.
template <class Keep>
std::vector<fs::path> files_under(const std::string& dir, Keep keep) {
  std::vector<fs::path> out;
  const fs::path base = kRoot / dir;
  if (!fs::exists(base)) return out;
  for (const auto& e : fs::recursive_directory_iterator(base))
    if (e.is_regular_file() && keep(e.path())) out.push_back(e.path());
  return out;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::string> v;
  for (std::string line; std::getline(f, line);) v.push_back(line);
  return v;
}

std::string where(const fs::path& p, size_t line) {
  return fs::relative(p, kRoot).string() + ":" + std::to_string(line + 1);
}

/// The files whose comments and prose cite others (what the citation checks read): the source files, documents
/// and shaders under the folders that hold them, and the top-level README.md, CMakeLists.txt and Makefile.
std::vector<fs::path> citing_files() {
  std::vector<fs::path> files;
  for (const char* d : {"base", "render", "sched", "app", "tests", "tools", "docs", "shaders", "assets"})
    for (const fs::path& p : files_under(d, [](const fs::path& q) {
           return is_source(q) || q.extension() == ".md" || q.extension() == ".frag" || q.extension() == ".vert";
         }))
      files.push_back(p);
  files.push_back(kRoot / "README.md");
  files.push_back(kRoot / "CMakeLists.txt");
  files.push_back(kRoot / "Makefile");
  return files;
}

#define MV_REQUIRE_SOURCE_TREE()                                                             \
  do {                                                                                       \
    if (!fs::exists(kRoot / "base" / "work.h"))                                              \
      GTEST_SKIP() << "the source tree is not at " << kRoot << " (a copied test binary)";    \
  } while (0)

TEST(Architecture, FoldersIncludeOnlyWhatTheyMay) {
  MV_REQUIRE_SOURCE_TREE();
  const std::map<std::string, std::set<std::string>> allowed = {
      {"base", {"base"}}, {"render", {"base", "render"}}, {"sched", {"base", "sched"}}};
  const std::regex include(R"re(^\s*#\s*include\s*"([A-Za-z0-9_]+)/)re");
  size_t checked = 0;
  for (const auto& [folder, may] : allowed) {
    for (const fs::path& p : files_under(folder, is_source)) {
      const auto lines = lines_of(p);
      for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_search(lines[i], m, include)) continue;
        ++checked;
        EXPECT_TRUE(may.count(m[1].str())) << where(p, i) << ": " << folder << "/ may not include " << m[1]
                                           << "/ (docs/architecture.md): " << lines[i];
      }
    }
  }
  EXPECT_GT(checked, 50u) << "the scan found almost no includes: is the tree where MV_SOURCE_DIR says?";
}

TEST(Architecture, CitedRepositoryPathsExist) {
  MV_REQUIRE_SOURCE_TREE();
  // A path that starts at a top-level folder of the repository and names a file by its extension.
  const std::regex cited(
      R"re(\b((?:base|render|sched|app|tests|docs|tools|scenes|assets|shaders)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(?:h|cuh|cpp|cu|md|py|sh|json|exr|csv|png|frag|vert))\b)re");
  size_t checked = 0;
  for (const fs::path& p : citing_files()) {
    const bool prose = p.extension() == ".md";
    const auto lines = lines_of(p);
    for (size_t i = 0; i < lines.size(); ++i) {
      // In code only the comments cite: string literals name files that tests create.
      const size_t from = prose ? 0 : lines[i].find("//");
      if (from == std::string::npos) continue;
      const std::string text = lines[i].substr(from);
      for (std::sregex_iterator it(text.begin(), text.end(), cited), end; it != end; ++it) {
        const std::string path = (*it)[1].str();
        // Paths that name outputs or placeholders, not repository files.
        if (path.find("out/") == 0 || path.find("captures/") != std::string::npos ||
            path.find("NNNN") != std::string::npos || path.find('*') != std::string::npos)
          continue;
        ++checked;
        EXPECT_TRUE(fs::exists(kRoot / path)) << where(p, i) << " cites " << path << ", which does not exist";
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

TEST(Architecture, NoMergeConflictMarkersAnywhere) {
  MV_REQUIRE_SOURCE_TREE();
  const std::regex marker(R"re(^(<<<<<<< |=======$|>>>>>>> ))re");
  std::vector<fs::path> files = {kRoot / "README.md", kRoot / "CMakeLists.txt", kRoot / "Makefile"};
  for (const char* d : {"base", "render", "sched", "app", "tests", "tools", "docs", "scenes", "shaders"})
    for (const fs::path& p : files_under(d, [](const fs::path&) { return true; }))
      if (p.extension() != ".exr" && p.extension() != ".png" && p.extension() != ".pdf") files.push_back(p);
  for (const fs::path& p : files) {
    const auto lines = lines_of(p);
    for (size_t i = 0; i < lines.size(); ++i)
      EXPECT_FALSE(std::regex_search(lines[i], marker)) << where(p, i) << ": a merge-conflict marker";
  }
}

TEST(Architecture, NoCitationsOfDocumentsOutsideTheRepository) {
  MV_REQUIRE_SOURCE_TREE();
  // The target-shape document and the issue tracker are not part of the repository: code and docs cite
  // docs/architecture.md and say what the code does instead.
  const std::regex outside(R"re(ARCHITECTURE\.md|\b[Ii]ssues? #?[0-9]+)re");
  for (const fs::path& p : citing_files()) {
    if (p.filename() == "test_architecture.cpp") continue;
    const auto lines = lines_of(p);
    for (size_t i = 0; i < lines.size(); ++i)
      EXPECT_FALSE(std::regex_search(lines[i], outside)) << where(p, i) << ": " << lines[i];
  }
}

}  // namespace
