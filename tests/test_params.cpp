// Generic settings (base/params.h): parsing and range messages, all-or-nothing application, `when`
// conditions, the knob tables that the CLI, the GUI and the sidecars are generated from — the megakernel's
// (sched/megakernel/megakernel_settings.h) and the strand strategies' (sched/strand_strategy.h), where the
// global queue's work unit c is an ordinary knob — and knob descriptions read from JSON (base/param_file.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "app/session/params_report.h"
#include "app/session/session.h"
#include "app/session/stencil_run.h"
#include "app/session/strand_workloads.h"
#include "base/param_file.h"
#include "base/params.h"
#include "render/gpu.h"
#include "sched/lattice/halo_plan.h"
#include "sched/megakernel/megakernel_settings.h"
#include "sched/strand_strategy.h"
#include "test_support.h"

namespace mv {
namespace {

std::string refusal(const ParamSpec& s, const std::string& text) {
  try {
    parse_param(s, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Params, ParsingChecksKindAndRangeWithOneLineNamingTheOption) {
  ParamSpec seg;
  seg.name = "segment-size";
  seg.min = 32;
  seg.max = 512;
  seg.power_of_two = true;
  EXPECT_EQ(parse_param(seg, "64"), 64.0);
  EXPECT_EQ(refusal(seg, "100"), "--segment-size: must be an integer in [32, 512], a power of two, got \"100\"");
  for (const char* bad : {"1024", "16", "abc", "", "64.5", "nan", "inf", "-64", "64 "})
    EXPECT_NE(refusal(seg, bad).find("--segment-size: must be"), std::string::npos) << bad;

  ParamSpec age;
  age.name = "age-period";
  age.min = 2;
  age.max = 65536;
  age.zero_is_off = true;
  EXPECT_EQ(parse_param(age, "0"), 0.0);
  EXPECT_NE(refusal(age, "1").find("0 (off) or an integer in [2, 65536]"), std::string::npos);

  ParamSpec mult;
  mult.name = "buffer-multiplier";
  mult.kind = ParamKind::Real;
  mult.min = 0.01;
  mult.max = 100;
  EXPECT_DOUBLE_EQ(parse_param(mult, "2.5"), 2.5);
  for (const char* bad : {"nan", "inf", "0", "-2", "1e300", "x2"})
    EXPECT_NE(refusal(mult, bad).find("a finite number in [0.01, 100]"), std::string::npos) << bad;

  ParamSpec on;
  on.name = "controller";
  on.kind = ParamKind::Bool;
  for (const char* yes : {"true", "on", "1"}) EXPECT_EQ(parse_param(on, yes), 1.0);
  for (const char* no : {"false", "off", "0"}) EXPECT_EQ(parse_param(on, no), 0.0);
  EXPECT_EQ(refusal(on, "maybe"), "--controller: must be true or false, got \"maybe\"");

  ParamSpec choice;
  choice.name = "queue";
  choice.kind = ParamKind::Choice;
  choice.choices = {"kerbl", "buckets", "quanta"};
  EXPECT_EQ(parse_param(choice, "quanta"), 2.0);
  EXPECT_EQ(refusal(choice, "heap"), "--queue: must be one of kerbl, buckets, quanta, got \"heap\"");
}

TEST(Params, ApplyIsAllOrNothingAndLeavesOtherStrategiesKnobsAlone) {
  MegakernelSettings m;
  BoundParams<MegakernelSettings> p(megakernel_params(), m);
  // One bad value: nothing of the batch is applied.
  EXPECT_THROW(p.apply({{"segment-size", "64"}, {"controllers", "65"}}), InputError);
  EXPECT_EQ(m.segment_size, 256u);
  // Names of other strategies' knobs are skipped (one ParamValues map serves every strategy).
  p.apply({{"segment-size", "64"}, {"work-unit", "8"}, {"queue", "kerbl"}});
  EXPECT_EQ(m.segment_size, 64u);
  EXPECT_EQ(m.queue, QueueDesign::Kerbl);
}

TEST(Params, WhenConditionsFollowTheChoiceTheyNameInTheMegakernelTable) {
  MegakernelSettings m;
  BoundParams<MegakernelSettings> p(megakernel_params(), m);
  const size_t buckets = p.find("buckets"), seg = p.find("segment-size"), q = p.find("quantum-max");
  ASSERT_LT(buckets, p.specs().size());
  EXPECT_TRUE(p.active(buckets));  // the default queue is buckets
  EXPECT_FALSE(p.active(seg));
  EXPECT_FALSE(p.active(q));
  m.queue = QueueDesign::Kerbl;
  EXPECT_FALSE(p.active(buckets));
  EXPECT_TRUE(p.active(seg));
}

TEST(Params, EveryMegakernelKnobRoundTripsThroughItsTextAndTheSidecar) {
  MegakernelSettings m;
  BoundParams<MegakernelSettings> p(megakernel_params(), m);
  std::set<std::string> names;
  for (size_t i = 0; i < p.specs().size(); ++i) {
    const ParamSpec& s = p.specs()[i];
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate knob " << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    EXPECT_TRUE(param_allows(s, p.get(i))) << s.name << ": the default " << p.text(i) << " is out of its own range";
    // A value other than the default, written as text, reads back the same.
    double other = p.get(i);
    if (s.kind == ParamKind::Bool) other = 1.0 - other;
    else if (s.kind == ParamKind::Choice) other = other == 0.0 ? 1.0 : 0.0;
    else other = s.max;
    const std::string text = param_text(s, other);
    p.apply({{s.name, text}});
    EXPECT_EQ(p.text(i), text) << s.name;
  }
  EXPECT_EQ(names.size(), 26u) << "MegakernelSettings has twenty-six knobs";
  m.validate();  // every maximum is allowed
  const nlohmann::json j = params_json(p);
  EXPECT_EQ(j["segment_size"], 512);
  EXPECT_EQ(j["queue"], "kerbl");  // the Choice flipped from buckets to index 0
  EXPECT_TRUE(j["buffer_multiplier"].is_number_float());
  EXPECT_TRUE(j["controller"].is_boolean());
}

TEST(Params, TheGlobalQueuesWorkUnitIsAGenericKnobOfTheStrandStrategies) {
  const StrandWorkloadEntry& w = find_strand_workload("mandelbrot");
  int readers = 0;
  for (const StrategyInfo& info : w.strategies) {
    const bool queue = info.name.rfind("cuda-global-queue", 0) == 0;
    EXPECT_EQ(info.reads("work-unit"), queue) << info.name;
    readers += info.reads("work-unit");
    for (const std::string& k : info.knobs) EXPECT_TRUE(strand_params_have(k)) << info.name << " reads unknown " << k;
  }
  EXPECT_EQ(readers, 2);
  StrandRunSettings s;
  BoundParams<StrandRunSettings>(strand_params(), s).apply({{"work-unit", "8"}, {"task-priority", "fifo"}});
  EXPECT_EQ(s.grid.work_unit, 8u);
  EXPECT_TRUE(s.grid.automatic) << "the work unit is set without leaving the auto grid";
  EXPECT_EQ(s.task_priority, StrandTaskPriority::Fifo);
}

TEST(Params, TheMegakernelsKnobsReachTheSessionsReportsGenerically) {
  MV_REQUIRE_GPU();
  SessionOptions o;
  o.scene = "room";
  o.width = 64;
  o.height = 48;
  o.strategy = "megakernel";
  o.knobs["segment-size"] = "64";
  Session s(o);
  const Params* p = s.strategy_params();
  ASSERT_NE(p, nullptr) << "the megakernel has knobs";
  EXPECT_EQ(p->text(p->find("segment-size")), "64");
  EXPECT_NE(params_text(p).find("queue=buckets;"), std::string::npos) << params_text(p);
  s.set_strategy("uniform");
  EXPECT_EQ(s.strategy_params(), nullptr) << "uniform has no knobs of its own";
}

TEST(Params, AFilmStrategysKnobIsSetThroughTheSessionByName) {
  // cuda-global-queue on patch tasks (sched/gpu/to_completion.cuh) has the knob work-unit; the session keeps
  // it for whichever strategy has it, and refuses unknown knobs and values out of range by name.
  // The film's knobs are every patch strategy's, each name once: the megakernel's, cpu-parallel's block
  // and the global queue's work unit (the last two the same knobs as on strands).
  const std::vector<ParamSpec>& film = patch_strategy_knobs();
  ASSERT_EQ(film.size(), megakernel_params().specs().size() + 2);
  for (const ParamSpec& k : megakernel_params().specs()) EXPECT_NE(find_param(film, k.name), nullptr) << k.name;
  for (const char* k : {"cpu-block", "work-unit"}) EXPECT_NE(find_param(film, k), nullptr) << k;
  SessionOptions o;
  o.scene = "room";
  o.width = 32;
  o.height = 24;
  o.force_cpu = true;
  Session s(o);
  s.set_knob("work-unit", "4");
  EXPECT_EQ(s.options().knobs.at("work-unit"), "4");
  EXPECT_THROW(s.set_knob("work-unit", "0"), InputError);
  EXPECT_EQ(s.options().knobs.at("work-unit"), "4") << "a refused value changes nothing";
  try {
    s.set_knob("warp-speed", "9");
    ADD_FAILURE() << "an unknown knob was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--warp-speed");
  }
}

TEST(Params, RunToCompletionFilmStrategiesRenderTheSameImageAsUniform) {
  MV_REQUIRE_GPU();
  // Every patch ends at the target with the same (pixel, sample)-keyed random numbers, so a strategy that
  // fills patches one after another (bucket order) gives uniform's image bit for bit; each step keeps to
  // its budget.
  SessionOptions o;
  o.scene = "room";
  o.width = 96;
  o.height = 64;
  o.task.target_spp = 16;
  o.strategy = "uniform";
  Session ref(o);
  ref.run(0, 0.0);
  const std::vector<float> expected = ref.mean_image();
  for (const char* strategy : {"cuda-batch", "cuda-global-queue"}) {
    o.strategy = strategy;
    o.knobs["work-unit"] = "3";
    Session s(o);
    const FrameStats first = s.advance(4096);
    EXPECT_GT(first.step.work, 0u) << strategy;
    EXPECT_LT(first.step.work, 4096u + 64u * 1024u) << strategy << ": the step overran its budget";
    EXPECT_FALSE(s.done()) << strategy;
    s.run(0, 0.0);
    EXPECT_TRUE(s.done()) << strategy;
    EXPECT_EQ(s.mean_image(), expected) << strategy;
  }
}

TEST(Params, TheMegakernelOnStrandsTakesItsKnobsByName) {
  MV_REQUIRE_GPU();
  const StrandWorkloadEntry& w = find_strand_workload("checkerboard");
  const StrandResult ref = w.run("sequential", 96, 64, StrandRunSettings{}, false);
  for (const char* queue : {"kerbl", "quanta", "buckets"}) {
    StrandRunSettings s;
    s.task_knobs = {{"queue", queue}, {"work-unit", "7"}};  // a name the megakernel does not have is ignored
    const StrandResult r = w.run("megakernel", 96, 64, s, false);
    EXPECT_EQ(r.steps, ref.steps) << queue;
  }
  StrandRunSettings bad;
  bad.task_knobs = {{"queue", "heap"}};
  EXPECT_THROW(w.run("megakernel", 96, 64, bad, false), InputError);
}

TEST(Params, TheGlobalQueueRunsWithTheWorkUnitFromTheGenericKnob) {
  MV_REQUIRE_GPU();
  const StrandWorkloadEntry& w = find_strand_workload("checkerboard");
  StrandRunSettings s;
  BoundParams<StrandRunSettings>(strand_params(), s).apply({{"work-unit", "8"}});
  const StrandResult r = w.run("cuda-global-queue", 128, 64, s, true);
  EXPECT_EQ(r.timing.grid.work_unit, 8u);
  const StrandResult ref = w.run("sequential", 128, 64, StrandRunSettings{}, true);
  EXPECT_EQ(strand_disagreement(ref, r, w.tolerance), "");
}

TEST(Params, TheCommandLineOptionsAreGeneratedFromTheTables) {
  test::TempDir dir("params");
  // A knob of the strand strategies, refused with its range before any work.
  test::CliResult r = test::run_megaview(dir, "bench --workload checkerboard --strategy sequential --work-unit 0");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--work-unit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[1, 1048576]"), std::string::npos) << r.err;
  // Accepted (the viewer's sidecar shows it applied: ToyWorkloadRunsAndCapturesInTheGui in test_cli.cpp).
  r = test::run_megaview(dir, "bench --workload checkerboard --strategy sequential --size 32x32 --repeat 1 "
                              "--work-unit 8 --task-priority least-remaining");
  EXPECT_EQ(r.code, 0) << r.err;
  // The bench CSV's knobs column: for each strategy the knobs it reads, as set, generated from the table.
  const std::string csv = dir / "k.csv";
  r = test::run_megaview(dir, "bench --workload checkerboard --strategy sequential,cpu-parallel --size 32x32 "
                              "--repeat 1 --cpu-block 512 --csv '" + csv + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string table = test::slurp(csv);
  EXPECT_NE(table.find(",task_quantum,task_priority,knobs\n"), std::string::npos) << table;
  EXPECT_NE(table.find("cpu-parallel,"), std::string::npos) << table;
  EXPECT_NE(table.find(",cpu-block=512\n"), std::string::npos) << table;
  // A megakernel knob that had no hand-written option before the table: generated like the others.
  r = test::run_megaview(dir, "render --scene room --width 16 --height 16 --spp 1 --cpu --work-unit 0 --out '" +
                                  (dir / "x.png") + "'");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--work-unit: must be an integer in [1, 1048576], got \"0\""), std::string::npos) << r.err;
  r = test::run_megaview(dir, "render --scene room --width 16 --height 16 --spp 1 --cpu --record-capacity 0 --out '" +
                                  (dir / "x.png") + "'");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--record-capacity: must be an integer in [1, 16777216], got \"0\""), std::string::npos) << r.err;
}

// ---- knob descriptions as data (base/param_file.h, assets/knobs-*.json) ----

std::string param_file_error(const char* text, const char* knob = "a", std::vector<std::string> choices = {}) {
  try {
    ParamFile f("t.json", text);
    f.spec(knob, std::move(choices));
    f.expect_all_bound();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ParamFile, ReadsEveryFieldOfAKnob) {
  ParamFile f("t.json", R"({"knobs": [
      {"name": "a", "kind": "int", "min": 2, "max": 64, "doc": "d", "source": "Kerbl 2012 §3", "when": "q=x",
       "flags": ["advanced", "zero-is-off", "power-of-two"]},
      {"name": "b", "kind": "choice", "doc": "e", "choices": ["u", "v"]}]})");
  EXPECT_EQ(f.size(), 2u);
  const ParamSpec a = f.spec("a");
  EXPECT_EQ(a.kind, ParamKind::Int);
  EXPECT_EQ(a.min, 2.0);
  EXPECT_EQ(a.max, 64.0);
  EXPECT_EQ(a.doc, "d");
  EXPECT_EQ(a.source, "Kerbl 2012 §3");
  EXPECT_EQ(a.when, "q=x");
  EXPECT_TRUE(a.advanced && a.zero_is_off && a.power_of_two);
  const ParamSpec b = f.spec("b");
  EXPECT_EQ(b.kind, ParamKind::Choice);
  EXPECT_EQ(b.choices, (std::vector<std::string>{"u", "v"}));
  EXPECT_FALSE(b.advanced);
  EXPECT_NO_THROW(f.expect_all_bound());
}

TEST(ParamFile, RefusesMalformedDescriptionsNamingTheFileAndKnob) {
  EXPECT_EQ(param_file_error(nullptr), "t.json: the file is not embedded in the binary (CMakeLists.txt, mv_embed_files)");
  EXPECT_EQ(param_file_error("[1, 2]"), "t.json: not a JSON object with a \"knobs\" array");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "int", "max": 3, "doc": "d"}]})"),
            "t.json: knob \"a\": \"min\" is required");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool", "min": 0, "max": 1, "doc": "d"}]})"),
            "t.json: knob \"a\": \"min\" is only for int and real knobs");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "real", "min": 3, "max": 1, "doc": "d"}]})"),
            "t.json: knob \"a\": \"min\" exceeds \"max\"");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "float", "doc": "d"}]})"),
            "t.json: knob \"a\": \"kind\" must be bool, int, real, choice or text, not \"float\"");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool"}]})"), "t.json: knob \"a\": no \"doc\"");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool", "doc": "d", "flags": ["fast"]}]})"),
            "t.json: knob \"a\": unknown flag \"fast\" (advanced, zero-is-off, power-of-two)");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool", "doc": "d"},
                                          {"name": "a", "kind": "bool", "doc": "d"}]})"),
            "t.json: knob \"a\": described twice");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool", "doc": "d"}]})", "b"),
            "t.json: knob \"b\": no such knob in the file");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "bool", "doc": "d"},
                                          {"name": "b", "kind": "bool", "doc": "d"}]})"),
            "t.json: knob \"b\": described in the file but bound to no field");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "choice", "doc": "d"}]})"),
            "t.json: knob \"a\": a choice knob without choices");
  EXPECT_EQ(param_file_error(R"({"knobs": [{"name": "a", "kind": "choice", "doc": "d", "choices": ["x"]}]})", "a",
                             {"y"}),
            "t.json: knob \"a\": \"choices\" are given by the code; the file must not list them");
  ParamFile twice("t.json", R"({"knobs": [{"name": "a", "kind": "bool", "doc": "d"}]})");
  twice.spec("a");
  try {
    twice.spec("a");
    ADD_FAILURE() << "a knob bound twice was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "t.json: knob \"a\": bound twice");
  }
}

TEST(ParamFile, TheEmbeddedTablesBindEveryKnobTheirFilesDescribe) {
  // Building the tables runs ParamFile::expect_all_bound; the counts are the files' knobs.
  EXPECT_EQ(megakernel_params().specs().size(), 26u);
  EXPECT_EQ(stencil_params().specs().size(), 8u);
  const ParamSpec* queue = find_param(megakernel_params().specs(), "queue");
  ASSERT_NE(queue, nullptr);
  EXPECT_EQ(queue->choices, (std::vector<std::string>{"kerbl", "buckets", "quanta"}));
  const ParamSpec* segment = find_param(megakernel_params().specs(), "segment-size");
  ASSERT_NE(segment, nullptr);
  EXPECT_TRUE(segment->power_of_two);
  EXPECT_EQ(segment->when, "queue=kerbl");
  // The stencil's ranges that the halo plan also checks: the file's numbers must be the plan's limits.
  EXPECT_EQ(find_param(stencil_params().specs(), "partitions")->max, kMaxHaloPartitions);
  EXPECT_EQ(find_param(stencil_params().specs(), "depth")->max, kMaxHaloDepth);
  EXPECT_EQ(find_param(stencil_params().specs(), "kernel")->choices.size(), static_cast<size_t>(kHaloKernelCount));
}

}  // namespace
}  // namespace mv
