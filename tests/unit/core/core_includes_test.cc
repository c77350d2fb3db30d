// dataplane/core/ is the framework alone: no file under it may include a project header from
// outside core/ (the switch, stages, tables, traffic manager, ports... depend on core, never
// the other way round). The test reads every source file under the tree's dataplane/core/
// (the tree meson passes as RS_SOURCE_ROOT) and checks each #include against that rule; the
// checker itself is first held to known good and bad files in a scratch tree, so a check that
// finds nothing cannot pass by reading nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace rs::test {
namespace {

namespace fs = std::filesystem;

// The project's top-level folders: an include naming one of them (or a file generated from
// them, like pipelines_embedded.h) is a project header.
const std::set<std::string> kProjectTops = {"dataplane", "control", "app", "tests", "perf", "pipelines", "configs", "tools", "p4"};

struct Violation {
  std::string file;  // relative to the root
  int line;
  std::string include;
};

// Whether `path` (lexically normalised) lies inside `dir`.
bool inside(const fs::path& path, const fs::path& dir) {
  const fs::path rel = path.lexically_normal().lexically_relative(dir.lexically_normal());
  return !rel.empty() && *rel.begin() != "..";
}

// Every #include in the files under root/dataplane/core that names a project header outside
// core/. Quoted includes are resolved as the compiler does: against the including file's own
// folder first, then the source root (the project's include directory). Angle-bracket
// includes are system headers unless they name a project folder. A quoted include that
// resolves nowhere counts too, unless it is a bare name that no project folder holds
// (there is none today; a generated header such as pipelines_embedded.h is a project file).
std::vector<Violation> core_violations(const fs::path& root) {
  const fs::path core = root / "dataplane" / "core";
  std::vector<Violation> out;
  const std::regex inc(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(core))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, inc)) continue;
      const bool quoted = m[1] == "\"";
      const std::string name = m[2];
      const fs::path named(name);
      const std::string top = named.begin() == named.end() ? "" : named.begin()->string();
      bool bad = false;
      if (quoted) {
        const fs::path local = f.parent_path() / named;
        const fs::path from_root = root / named;
        if (fs::exists(local))
          bad = !inside(local, core);
        else if (fs::exists(from_root) || kProjectTops.count(top))
          bad = !inside(from_root, core);
        else
          bad = true;  // a project header that is not in the tree (generated) or a typo: not core's
      } else {
        bad = kProjectTops.count(top) != 0 && !inside(root / named, core);
      }
      if (bad) out.push_back({fs::relative(f, root).string(), n, name});
    }
  }
  return out;
}

std::string describe(const std::vector<Violation>& v) {
  std::ostringstream s;
  for (const auto& x : v) s << "  " << x.file << ":" << x.line << ": #include " << x.include << "\n";
  return s.str();
}

// A scratch tree with a dataplane/core/ and its neighbours, removed at the end.
class ScratchTree {
 public:
  ScratchTree() {
    root_ = fs::temp_directory_path() / ("rs_core_includes_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "dataplane" / "core" / "sub");
    fs::create_directories(root_ / "dataplane" / "switch");
    write("dataplane/core/burst.h", "#pragma once\n#include <cstdint>\n");
    write("dataplane/core/sub/helper.h", "#pragma once\n");
    write("dataplane/switch/switch.h", "#pragma once\n");
  }
  ~ScratchTree() { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(root_ / rel) << text; }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

TEST(CoreIncludes, CheckerAcceptsIncludesWithinCore) {
  ScratchTree t;
  t.write("dataplane/core/stage.h",
          "#pragma once\n#include <rte_mbuf.h>\n#include <vector>\n#include <fmt/core.h>\n"
          "#include \"dataplane/core/burst.h\"\n#include \"burst.h\"\n#include \"sub/helper.h\"\n");
  t.write("dataplane/core/sub/x.cc", "#include \"../burst.h\"\n#include \"dataplane/core/sub/helper.h\"\n");
  EXPECT_EQ(describe(core_violations(t.root())), "");
}

TEST(CoreIncludes, CheckerFindsEveryWayOutOfCore) {
  ScratchTree t;
  t.write("dataplane/core/a.h", "#pragma once\n#include \"dataplane/core/burst.h\"\n#include \"dataplane/switch/switch.h\"\n");
  t.write("dataplane/core/b.cc", "// relative\n#include \"../switch/switch.h\"\n");
  t.write("dataplane/core/c.cc", "  #  include <dataplane/tables/fib.h>\n");
  t.write("dataplane/core/d.cc", "#include \"pipelines_embedded.h\"\n#include \"control/config_loader.h\"\n");
  t.write("dataplane/core/sub/e.h", "#include \"../../tm/queue/egress_port.h\"\n");
  const auto v = core_violations(t.root());
  std::set<std::string> found;
  for (const auto& x : v) found.insert(x.file + " " + x.include);
  EXPECT_EQ(found, (std::set<std::string>{"dataplane/core/a.h dataplane/switch/switch.h",
                                          "dataplane/core/b.cc ../switch/switch.h",
                                          "dataplane/core/c.cc dataplane/tables/fib.h",
                                          "dataplane/core/d.cc pipelines_embedded.h",
                                          "dataplane/core/d.cc control/config_loader.h",
                                          "dataplane/core/sub/e.h ../../tm/queue/egress_port.h"}))
      << describe(v);
}

TEST(CoreIncludes, CoreIncludesNothingOutsideCore) {
  const char* root = std::getenv("RS_SOURCE_ROOT");
  ASSERT_NE(root, nullptr) << "RS_SOURCE_ROOT (the source tree) is not set: run this test through meson test";
  const fs::path core = fs::path(root) / "dataplane" / "core";
  ASSERT_TRUE(fs::is_directory(core)) << core;
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(core)) files += e.is_regular_file();
  ASSERT_GE(files, 10u) << "too few files under " << core << ": is RS_SOURCE_ROOT the source tree?";
  const auto v = core_violations(root);
  EXPECT_TRUE(v.empty()) << "dataplane/core/ is the framework alone and must not include these:\n" << describe(v);
}

}  // namespace
}  // namespace rs::test
