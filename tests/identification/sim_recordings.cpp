// heft-identify-sim OUT_DIR [--minutes M]: writes the proof recordings of the perturbed reference
// humanoid (train, validation, two out-of-distribution motions) and its true URDF parameters.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "heft/identification/output.hpp"
#include "motion.hpp"

int main(int argc, char** argv) {
  using namespace heft::identification;
  namespace recording = heft::recording;
  if (argc < 2) {
    std::fprintf(stderr, "usage: heft-identify-sim OUT_DIR [--minutes M]\n");
    return 2;
  }
  const std::string dir = argv[1];
  double minutes = 1.0;
  if (argc >= 4 && std::string(argv[2]) == "--minutes") minutes = std::atof(argv[3]);
  std::filesystem::create_directories(dir);
  const heft::dynamics::Model nominal = heft::dynamics::LoadModelFromUrdfFile(
      std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf", heft::dynamics::ModelOptions{});
  const heft::dynamics::Model truth = test::PerturbedTruth(nominal);
  struct Item {
    const char* name;
    test::Motion motion;
    double seconds;
    std::uint64_t seed;
  };
  const Item items[] = {{"train", test::Motion::kSquatSway, 60.0 * minutes, 1},
                        {"validation", test::Motion::kSquatSway, 30.0, 2},
                        {"ood_stepping", test::Motion::kStepping, 30.0, 3},
                        {"ood_reaching", test::Motion::kReaching, 30.0, 4}};
  for (const Item& it : items) {
    test::SimSpec spec;
    spec.motion = it.motion;
    spec.duration = it.seconds;
    spec.seed = it.seed;
    spec.coulomb = 0.4;
    spec.viscous = 0.3;
    const recording::Recording rec = test::Simulate(truth, spec);
    const std::string path = dir + "/" + it.name + ".heftrec";
    recording::RecordingWriter w(path, rec.info);
    for (const auto& s : rec.samples) w.Write(s);
    w.Flush();
    std::printf("%s: %zu records (%.0f s)\n", path.c_str(), rec.samples.size(), it.seconds);
  }
  // The truth as a URDF (heft-identify --reference-urdf).
  const std::string urdf_path = std::string(HEFT_ROBOTS_DIR) + "/heft_humanoid.urdf";
  std::ifstream in(urdf_path);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Problem all = MakeProblem(nominal, {}, false);
  std::ofstream(dir + "/truth.urdf") << ReplaceInertials(xml, truth, all);
  std::printf("%s/truth.urdf: the true parameters\n", dir.c_str());
  return 0;
}
