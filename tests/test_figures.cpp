// The experiments' figures (app/cli/figures.h): the metadata JSON beside each CSV, the figure step that
// degrades to one line when tools/figures.py, python3 or matplotlib is missing, and tools/figures.py
// itself drawing a PNG and a PDF for a small CSV of every kind.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "app/cli/figures.h"
#include "base/errors.h"
#include "test_support.h"

namespace mv {
namespace {

namespace fs = std::filesystem;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(FigureMetadata, IsWrittenBesideTheCsvWithTheUnitsOfItsColumnsAndNeverOverwritten) {
  test::TempDir dir("figures-meta");
  const std::string csv = dir / "run.csv";
  write_text(csv, "n,median_us\n32,1.5\n");
  FigureMetadata m;
  m.kind = m.subcommand = "sort-bench";
  m.redoes = "Kerbl 2012, Fig 3";
  m.context = "one block";
  m.gpu = "Some GPU";
  m.units = {{"n", "keys"}, {"median_us", "us per sort"}, {"not_a_column", "s"}};
  EXPECT_EQ(figure_metadata_path(csv), dir / "run.json");
  write_figure_metadata(csv, m);
  const nlohmann::json j = nlohmann::json::parse(test::slurp(dir / "run.json"));
  EXPECT_EQ(j["kind"], "sort-bench");
  EXPECT_EQ(j["subcommand"], "sort-bench");
  EXPECT_EQ(j["redoes"], "Kerbl 2012, Fig 3");
  EXPECT_EQ(j["context"], "one block");
  EXPECT_EQ(j["gpu"], "Some GPU");
  EXPECT_EQ(j["csv"], "run.csv");
  EXPECT_EQ(j["units"], (nlohmann::json{{"n", "keys"}, {"median_us", "us per sort"}}));
  EXPECT_TRUE(std::regex_match(j["date"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << j["date"];
  EXPECT_NE(j["command_line"].get<std::string>().find("megaview_tests"), std::string::npos) << j["command_line"];
  EXPECT_FALSE(j["megaview_version"].get<std::string>().empty());

  m.gpu.clear();
  m.redoes.clear();
  const nlohmann::json cpu = figure_metadata_json(m, csv);
  EXPECT_TRUE(cpu["gpu"].is_null());
  EXPECT_TRUE(cpu["redoes"].is_null());

  const std::string before = test::slurp(dir / "run.json");
  EXPECT_THROW(write_figure_metadata(csv, m), InputError);
  EXPECT_EQ(test::slurp(dir / "run.json"), before);
}

TEST(FigureMetadata, FigureFilesFollowTheStem) {
  EXPECT_EQ(figure_stem("out/a.csv"), "out/a");
  EXPECT_EQ(figure_stem("out/a.txt"), "out/a.txt");
  EXPECT_EQ(figure_files("mse-curve", "p"),
            (std::vector<std::string>{"p-time.png", "p-time.pdf", "p-samples.png", "p-samples.pdf"}));
  EXPECT_EQ(figure_files("sched-model", "p"), (std::vector<std::string>{"p.png", "p.pdf"}));
  EXPECT_TRUE(figure_files("bench", "p").empty());
}

TEST(FigureStep, WithoutTheScriptTheExperimentSucceedsAndSaysHowToDrawThem) {
  test::TempDir dir("figures-missing");
  const std::string prefix = dir / "model";
  const test::CliResult r = test::run_megaview(
      dir, "sched-model --n 2048 --task-us 100 --workers 8 --segment 32 --out-prefix '" + prefix + "'",
      "MV_FIGURES_SCRIPT='" + (dir / "nowhere/figures.py") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(prefix + ".csv"));
  const nlohmann::json meta = nlohmann::json::parse(test::slurp(prefix + ".json"));
  EXPECT_EQ(meta["kind"], "sched-model");
  EXPECT_NE(meta["command_line"].get<std::string>().find("sched-model --n 2048"), std::string::npos)
      << meta["command_line"];
  EXPECT_FALSE(fs::exists(prefix + ".png"));
  EXPECT_FALSE(fs::exists(prefix + ".pdf"));
  // One line naming the missing script and the command that draws the figures later.
  const std::string hint = "figures: " + (dir / "nowhere/figures.py") + " not found";
  const size_t at = r.out.find(hint);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find("python3 " + (dir / "nowhere/figures.py") + " " + prefix + ".csv"), std::string::npos) << line;
  EXPECT_EQ(r.err, "");
}

TEST(FigureStep, AFailingScriptIsAWarningNotAFailedExperiment) {
  if (find_python_with_matplotlib().empty()) GTEST_SKIP() << "python3-matplotlib is not installed";
  test::TempDir dir("figures-failing");
  write_text(dir / "broken.py", "import sys\nsys.exit(3)\n");
  const std::string prefix = dir / "model";
  const test::CliResult r = test::run_megaview(
      dir, "sched-model --n 2048 --task-us 100 --workers 8 --segment 32 --out-prefix '" + prefix + "'",
      "MV_FIGURES_SCRIPT='" + (dir / "broken.py") + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(prefix + ".csv"));
  EXPECT_TRUE(fs::exists(prefix + ".json"));
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("warning: figures: " + (dir / "broken.py") + " exited with status 3"), std::string::npos)
      << r.err;
}

TEST(FigureStep, TheSubcommandDrawsItsFigureWithMatplotlib) {
  if (find_python_with_matplotlib().empty()) GTEST_SKIP() << "python3-matplotlib is not installed";
  test::TempDir dir("figures-drawn");
  const std::string prefix = dir / "model";
  const test::CliResult r = test::run_megaview(
      dir, "sched-model --n 2048,4096 --task-us 100,1000 --workers 8 --segment 32 --out-prefix '" + prefix + "'",
      "MV_FIGURES_SCRIPT= ");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(test::slurp(prefix + ".png").substr(1, 3), "PNG");
  EXPECT_EQ(test::slurp(prefix + ".pdf").substr(0, 5), "%PDF-");
  EXPECT_NE(r.out.find("figures: wrote " + prefix + ".png"), std::string::npos) << r.out;
}

/// Runs `python3 tools/figures.py args` with the python3 that has matplotlib; returns the exit status.
int run_figures(const std::string& python, const std::string& args, const std::string& log) {
  const std::string cmd = "'" + python + "' '" MV_SOURCE_DIR "/tools/figures.py' " + args + " > '" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FiguresScript, DrawsAPngAndAPdfForEveryKind) {
  const std::string python = find_python_with_matplotlib();
  if (python.empty()) GTEST_SKIP() << "python3-matplotlib is not installed";
  test::TempDir dir("figures-script");
  const std::string d = dir.str();
  // The columns the subcommands write (the kinds are told apart by them; mse-curve also by its JSON).
  write_text(d + "/ttq.csv",
             "series,strategy,priority,busy_ms,paths,spp_mean,mse\n"
             "uniform:none,uniform,none,1.0,100,1.0,1e-2\nuniform:none,uniform,none,2.0,200,2.0,5e-3\n"
             "megakernel:variance,megakernel,variance,1.0,100,1.0,8e-3\n"
             "megakernel:variance,megakernel,variance,2.0,200,2.0,3e-3\n");
  write_text(d + "/ttq.json", R"({"kind": "mse-curve", "context": "room 32x24", "gpu": null})");
  write_text(d + "/sort.csv",
             "method,n,threads,median_us,min_us,max_us,batches,repeat\n"
             "bitonic-full,32,32,2.7,2.6,2.9,200,5\nbitonic-full,64,32,3.1,3.0,3.3,200,5\n"
             "bitonic-full,64,64,2.9,2.8,3.0,200,5\ncub-device-radix,32,0,11.0,10.8,11.5,200,5\n"
             "cub-device-radix,64,0,11.2,11.0,11.9,200,5\n");
  const std::string sb_head =
      "gpu,n,task_us,block,controllers,workers,grid_blocks,segment,time_management,buffer_multiplier,wave_aware,"
      "score_controller,score_fifo,score_model,ms_controller,ms_fifo,passes_uu,passes_us,passes_ss,sort_us_uu,"
      "sort_us_us,sort_us_ss,collisions,wait_ms,refusals,restarts,lock_failures,queue,buckets,held_bound\n";
  write_text(d + "/sb.csv", sb_head +
                                "\"GPU X\",1000,100,128,1,524,132,256,1,1,0,0.1,0,0.2,1,1,0,0,0,0,0,0,0,0,0,0,0,kerbl,32,0.5\n"
                                "\"GPU X\",5000,100,128,1,524,132,256,1,1,0,0.3,0,,1,1,0,0,0,0,0,0,0,0,0,0,0,kerbl,32,0.8\n"
                                "\"GPU X\",1000,1000,128,4,512,132,256,1,1,0,0.4,0,,1,1,0,0,0,0,0,0,0,0,0,0,0,kerbl,32,0.5\n"
                                "\"GPU X\",5000,1000,128,4,512,132,256,1,1,0,0.6,0,,1,1,0,0,0,0,0,0,0,0,0,0,0,kerbl,32,0.8\n");
  write_text(d + "/model.csv",
             "n,task_us,workers,segment,sort_uu_us,sort_us_us,sort_ss_us,buffer_multiplier,time_management,order,seed,"
             "score_controller,score_fifo,held_bound,passes,passes_uu,passes_us,passes_ss,collisions,wait_us,"
             "total_us_controller,total_us_fifo\n"
             "2048,100,8,32,5,3,1,1,1,ascending,1,0.5,0,0.9,10,1,2,7,0,1.0,100,100\n"
             "4096,100,8,32,5,3,1,1,1,ascending,1,0.6,0,0.95,20,1,2,17,0,1.0,200,200\n");
  write_text(d + "/sweep.csv",
             "workload,width,height,strategy,n,b,c,repeats,median_ms,min_ms,max_ms,mean_ms,stddev_ms,launches,"
             "super_steps,speedup_vs_sequential,matches_sequential,task_quantum,task_priority\n"
             "mandelbrot,40,30,sequential,0,0,0,1,10,9,11,10,0,0,0,1.0,1,0,-\n"
             "mandelbrot,40,30,cuda,64,64,0,1,2,1.9,2.1,2,0,5,4,5.0,1,0,-\n"
             "mandelbrot,40,30,cuda,128,64,0,1,1.5,1.4,1.6,1.5,0,5,4,6.6,1,0,-\n"
             "mandelbrot,40,30,megakernel,0,0,0,1,3,2.9,3.1,3,0,1,0,3.3,1,16,fifo\n");
  write_text(d + "/bench.csv",
             "workload,width,height,strategy,n,b,c,repeats,median_ms,min_ms,max_ms,clock,launches,super_steps,"
             "steps_mean,steps_sigma,steps_cv,image_fnv1a,task_quantum,task_priority\n"
             "mandelbrot,40,30,sequential,0,0,0,5,10,9,12,wall-clock,0,0,284.5,672.0,2.36,943006038d5e1885,0,-\n"
             "mandelbrot,40,30,cpu-parallel,0,0,0,5,2,1.5,2.5,wall-clock,0,0,284.5,672.0,2.36,943006038d5e1885,0,-\n");
  // No figure: the path tracer's bench table and an order log are skipped in a folder.
  write_text(d + "/pt.csv", "strategy,priority,repeat,busy_ms,wall_ms,paths,msamples_per_s\nuniform,none,0,1,1,1,1\n");

  const std::string log = dir / "log.txt";
  ASSERT_EQ(run_figures(python, "--no-overwrite '" + d + "'", log), 0) << test::slurp(log);
  for (const std::string stem : {"ttq-time", "ttq-samples", "sort", "sb", "model", "sweep", "bench"}) {
    EXPECT_EQ(test::slurp(d + "/" + stem + ".png").substr(1, 3), "PNG") << stem << "\n" << test::slurp(log);
    EXPECT_EQ(test::slurp(d + "/" + stem + ".pdf").substr(0, 5), "%PDF-") << stem;
  }
  EXPECT_FALSE(fs::exists(d + "/pt.png"));
  EXPECT_NE(test::slurp(log).find("skipped " + d + "/pt.csv"), std::string::npos) << test::slurp(log);

  // --no-overwrite refuses, and leaves the figure alone; --out names another stem.
  const std::string before = test::slurp(d + "/sort.png");
  EXPECT_EQ(run_figures(python, "--no-overwrite '" + d + "/sort.csv'", log), 1);
  EXPECT_NE(test::slurp(log).find("already exists"), std::string::npos) << test::slurp(log);
  EXPECT_EQ(test::slurp(d + "/sort.png"), before);
  ASSERT_EQ(run_figures(python, "--out '" + d + "/fig3' '" + d + "/sort.csv'", log), 0) << test::slurp(log);
  EXPECT_TRUE(fs::exists(d + "/fig3.png"));
  EXPECT_TRUE(fs::exists(d + "/fig3.pdf"));
  // A CSV named on the command line that has no figure is an error.
  EXPECT_EQ(run_figures(python, "'" + d + "/pt.csv'", log), 1);
}

// A CSV not named *.csv (bench --csv r.txt) keeps its whole name as the stem, in the script as in
// figure_stem: megaview checked and wrote r.txt.json, and r.txt.png is the figure it checked was free;
// r.json and r.png, which it never checked, are neither read nor replaced.
TEST(FiguresScript, TheStemIsThePathWithoutDotCsvOnlyAsMegaviewChecksIt) {
  const std::string python = find_python_with_matplotlib();
  if (python.empty()) GTEST_SKIP() << "python3-matplotlib is not installed";
  test::TempDir dir("figures-stem");
  const std::string d = dir.str();
  write_text(d + "/r.txt",
             "method,n,threads,median_us,min_us,max_us,batches,repeat\n"
             "bitonic-full,32,32,2.7,2.6,2.9,200,5\nbitonic-full,64,32,3.1,3.0,3.3,200,5\n");
  write_text(d + "/r.txt.json", R"({"kind": "sort-bench", "context": "one block", "gpu": null})");
  write_text(d + "/r.json", "precious: not this CSV's metadata");
  write_text(d + "/r.png", "precious: not this CSV's figure");
  const std::string log = dir / "log.txt";
  ASSERT_EQ(run_figures(python, "--no-overwrite '" + d + "/r.txt'", log), 0) << test::slurp(log);
  EXPECT_EQ(test::slurp(d + "/r.txt.png").substr(1, 3), "PNG") << test::slurp(log);
  EXPECT_EQ(test::slurp(d + "/r.txt.pdf").substr(0, 5), "%PDF-");
  EXPECT_EQ(test::slurp(d + "/r.png"), "precious: not this CSV's figure");
  EXPECT_FALSE(fs::exists(d + "/r.pdf"));
}

}  // namespace
}  // namespace mv
