// From recordings to identification samples: channels mapped to the model by name, segments of
// valid data, zero-phase low-pass filtering, accelerations by central differences of the filtered
// velocities, and decimation to the identification rate.
#pragma once

#include <string>
#include <vector>

#include "heft/dynamics/dynamics.hpp"
#include "heft/recording/recording.hpp"

namespace heft::identification {

struct DatasetOptions {
  double cutoff_hz = 8.0;        // zero-phase Butterworth cut-off (forward-backward: −6 dB here)
  double rate_hz = 100.0;        // identification rate after filtering (decimation)
  double contact_force = 50.0;   // N: a foot is in contact when its cell's |f| exceeds this
  double trim_s = 0.05;          // s dropped at both ends of every valid segment (filter edges)
  double min_segment_s = 0.5;    // shorter valid stretches are dropped
  double switch_margin_s = 0.1;  // samples this close to a contact change are flagged
};

struct Sample {
  double t = 0.0;  // s since the recording's first record
  Eigen::VectorXd q, v, a;
  Eigen::VectorXd tau;  // nv, joint torques at the joints' v indices, 0 on the base
  std::vector<dynamics::Vector6> wrenches;  // per Dataset::frames
  std::vector<unsigned char> contact;       // per Dataset::frames
  // A contact changes within DatasetOptions::switch_margin_s: the contact set is ambiguous here
  // (the low-pass spreads a lift-off over tens of ms), so contact-set methods leave it out.
  bool near_contact_switch = false;
};

struct Dataset {
  std::vector<int> frames;  // model frame index of each F/T cell
  std::vector<std::string> frame_names;
  std::vector<Sample> samples;
  double duration = 0.0;  // s of raw data read
  int segments = 0;       // valid segments kept
  std::vector<std::string> warnings;
};

// Throws RecordingError when a recording does not fit the model (missing joints, unknown frames,
// fixed/floating mismatch) or two recordings disagree on their channels.
Dataset PrepareDataset(const dynamics::Model& model,
                       const std::vector<recording::Recording>& recordings,
                       const DatasetOptions& options);

}  // namespace heft::identification
