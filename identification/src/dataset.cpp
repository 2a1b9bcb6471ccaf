#include "heft/identification/dataset.hpp"

#include <Eigen/Geometry>
#include <cmath>

#include "heft/identification/filter.hpp"

namespace heft::identification {

namespace {

struct Mapping {
  std::vector<int> q_index, v_index;  // per recorded joint
  std::vector<int> frames;
};

Mapping MapChannels(const dynamics::Model& model, const recording::Recording& rec) {
  Mapping m;
  std::vector<int> seen(model.bodies.size(), 0);
  for (const std::string& name : rec.info.joints) {
    int body = -1;
    try {
      body = model.joint_body_index(name);
    } catch (const std::exception&) {
      throw recording::RecordingError(rec.source + ": joint '" + name +
                                      "' is not a joint of the URDF");
    }
    if (model.bodies[body].joint.type == dynamics::JointType::kFree)
      throw recording::RecordingError(rec.source + ": joint '" + name + "' is the floating joint");
    if (seen[body]++)
      throw recording::RecordingError(rec.source + ": joint '" + name + "' recorded twice");
    m.q_index.push_back(model.bodies[body].q_index);
    m.v_index.push_back(model.bodies[body].v_index);
  }
  for (const dynamics::Body& b : model.bodies)
    if (b.joint.type != dynamics::JointType::kFree && !seen[&b - model.bodies.data()])
      throw recording::RecordingError(rec.source + ": the URDF joint '" + b.joint.name +
                                      "' is not recorded (identification needs every joint)");
  if (model.floating_base != rec.info.floating_base)
    throw recording::RecordingError(rec.source + ": the recording is " +
                                    (rec.info.floating_base ? "floating-base" : "fixed-base") +
                                    " but the model is not");
  for (const std::string& f : rec.info.wrench_frames) {
    try {
      m.frames.push_back(model.frame_index(f));
    } catch (const std::exception&) {
      throw recording::RecordingError(rec.source + ": F/T frame '" + f +
                                      "' is not a link of the URDF");
    }
  }
  return m;
}

bool Valid(const recording::RecordSample& s) {
  if (!s.base_valid) return false;
  for (auto x : s.encoder_valid)
    if (!x) return false;
  for (auto x : s.torque_valid)
    if (!x) return false;
  for (auto x : s.wrench_valid)
    if (!x) return false;
  return true;
}

// The channels of one segment (records begin … begin + n − 1), each filtered forward and back:
// joint q, all v, joint τ, the wrenches, then the base IMU's specific force (3).
std::vector<std::vector<double>> FilteredChannels(const dynamics::Model& model, const Mapping& map,
                                                  const recording::Recording& rec,
                                                  std::size_t begin, std::size_t n,
                                                  const Biquad& lp) {
  const int nv = model.nv;
  const std::size_t nw = map.frames.size();
  const std::size_t nj = map.v_index.size();
  const std::size_t sf = nj + nv + nj + 6 * nw;
  std::vector<std::vector<double>> ch(sf + 3, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const recording::RecordSample& s = rec.samples[begin + i];
    for (std::size_t j = 0; j < nj; ++j) {
      ch[j][i] = s.q[j];
      ch[nj + nv + j][i] = s.tau[j];
    }
    if (model.floating_base)
      for (int k = 0; k < 6; ++k) ch[nj + k][i] = s.base[7 + k];
    for (std::size_t j = 0; j < nj; ++j) ch[nj + map.v_index[j]][i] = s.v[j];
    for (std::size_t w = 0; w < nw; ++w)
      for (int k = 0; k < 6; ++k) ch[nj + nv + nj + 6 * w + k][i] = s.wrenches[w][k];
    for (int k = 0; k < 3; ++k) ch[sf + k][i] = s.specific_force[k];
  }
  for (auto& c : ch) FiltFilt(lp, c);
  return ch;
}

// The sample at record begin + i of a segment, from its filtered channels `ch` (index i).
Sample MakeSample(const dynamics::Model& model, const Mapping& map, const recording::Recording& rec,
                  const std::vector<std::vector<double>>& ch, std::size_t begin, std::size_t i,
                  double t_offset, const DatasetOptions& options) {
  const int nv = model.nv, nq = model.nq;
  const std::size_t nw = map.frames.size();
  const std::size_t nj = map.v_index.size();
  const std::size_t sf = nj + nv + nj + 6 * nw;
  const recording::RecordSample& s = rec.samples[begin + i];
  Sample smp;
  smp.t = t_offset + 1e-9 * static_cast<double>(s.stamp_ns - rec.samples.front().stamp_ns);
  smp.q.resize(nq);
  smp.v.resize(nv);
  smp.a.resize(nv);
  smp.tau = Eigen::VectorXd::Zero(nv);
  if (model.floating_base) {
    for (int k = 0; k < 7; ++k) smp.q[k] = s.base[k];
    smp.q.segment<4>(3).normalize();
  }
  for (std::size_t j = 0; j < nj; ++j) {
    smp.q[map.q_index[j]] = ch[j][i];
    smp.tau[map.v_index[j]] = ch[nj + nv + j][i];
  }
  const double h = 1e-9 * static_cast<double>(rec.samples[begin + i + 1].stamp_ns -
                                              rec.samples[begin + i - 1].stamp_ns);
  for (int k = 0; k < nv; ++k) {
    smp.v[k] = ch[nj + k][i];
    smp.a[k] = (ch[nj + k][i + 1] - ch[nj + k][i - 1]) / h;
  }
  if (model.floating_base && s.has_specific_force) {
    // A base known from its IMU (no linear velocity): the classical acceleration of the base
    // origin from the specific force f at S, a = R_WB (f − ω̇ × p_BS − ω × (ω × p_BS)) + g,
    // as the online estimator forms it (sample_mapping.cpp); ω̇ differenced like the rest.
    const Eigen::Vector3d f(ch[sf][i], ch[sf + 1][i], ch[sf + 2][i]);
    const Eigen::Vector3d p(s.specific_force[3], s.specific_force[4], s.specific_force[5]);
    const Eigen::Vector3d w = smp.v.segment<3>(3), w_dot = smp.a.segment<3>(3);
    const Eigen::Matrix3d R =
        Eigen::Quaterniond(smp.q[3], smp.q[4], smp.q[5], smp.q[6]).toRotationMatrix();
    smp.a.head<3>() = R * (f - w_dot.cross(p) - w.cross(w.cross(p))) + model.gravity;
  }
  smp.wrenches.resize(nw);
  smp.contact.resize(nw);
  for (std::size_t w = 0; w < nw; ++w) {
    for (int k = 0; k < 6; ++k) smp.wrenches[w][k] = ch[nj + nv + nj + 6 * w + k][i];
    smp.contact[w] = smp.wrenches[w].head<3>().norm() > options.contact_force ? 1 : 0;
  }
  return smp;
}

// The end of the valid segment from `begin`: every channel usable and no gap longer than 1.5
// periods.
std::size_t SegmentEnd(const recording::Recording& rec, std::size_t begin, double dt_nominal) {
  std::size_t end = begin;
  while (end < rec.samples.size() && Valid(rec.samples[end]) &&
         (end == begin ||
          1e-9 * static_cast<double>(rec.samples[end].stamp_ns - rec.samples[end - 1].stamp_ns) <
              1.5 * dt_nominal))
    ++end;
  return end;
}

// Flags the samples from `first` on that lie within `margin` of a contact change.
void FlagContactSwitches(std::vector<Sample>& samples, std::size_t first, int margin) {
  for (std::size_t i = first + 1; i < samples.size(); ++i) {
    if (samples[i].contact == samples[i - 1].contact) continue;
    const std::size_t lo = i > first + margin ? i - margin : first;
    const std::size_t hi = std::min(samples.size(), i + margin);
    for (std::size_t k = lo; k < hi; ++k) samples[k].near_contact_switch = true;
  }
}

// One recording's valid segments, filtered and resampled, into `out` (its samples and segments);
// returns the number of records left out because a channel was unusable.
int AddSegments(const dynamics::Model& model, const recording::Recording& rec, const Mapping& map,
                const DatasetOptions& options, double t_offset, Dataset& out) {
  const double rate = rec.info.nominal_rate;
  const double dt_nominal = 1.0 / rate;
  const Biquad lp = ButterworthLowPass(options.cutoff_hz, rate);
  const int step = std::max(1, static_cast<int>(std::lround(rate / options.rate_hz)));
  const int trim = static_cast<int>(std::ceil(options.trim_s * rate));
  std::size_t begin = 0;
  int dropped_invalid = 0;
  while (begin < rec.samples.size()) {
    while (begin < rec.samples.size() && !Valid(rec.samples[begin])) {
      ++begin;
      ++dropped_invalid;
    }
    const std::size_t end = SegmentEnd(rec, begin, dt_nominal);
    const std::size_t n = end - begin;
    if (n == 0) break;
    if (static_cast<double>(n) * dt_nominal < options.min_segment_s ||
        static_cast<int>(n) <= 2 * trim + 2) {
      begin = end;
      continue;
    }
    ++out.segments;
    const std::vector<std::vector<double>> ch = FilteredChannels(model, map, rec, begin, n, lp);
    const std::size_t first = out.samples.size();
    for (std::size_t i = trim; i + trim < n; i += step) {
      if (i == 0 || i + 1 >= n) continue;
      out.samples.push_back(MakeSample(model, map, rec, ch, begin, i, t_offset, options));
    }
    // Flag samples near a contact change (within this segment).
    const int margin = static_cast<int>(std::ceil(options.switch_margin_s * rate / step));
    FlagContactSwitches(out.samples, first, margin);
    begin = end;
  }
  return dropped_invalid;
}

}  // namespace

Dataset PrepareDataset(const dynamics::Model& model,
                       const std::vector<recording::Recording>& recordings,
                       const DatasetOptions& options) {
  Dataset out;
  if (recordings.empty()) throw recording::RecordingError("no recordings given");
  double t_offset = 0.0;
  for (const recording::Recording& rec : recordings) {
    const Mapping map = MapChannels(model, rec);
    if (out.frame_names.empty() && &rec == &recordings.front()) {
      out.frames = map.frames;
      out.frame_names = rec.info.wrench_frames;
    } else if (rec.info.wrench_frames != out.frame_names) {
      throw recording::RecordingError(rec.source +
                                      ": F/T frames differ from the first recording's");
    }
    if (rec.samples.size() < 2) {
      out.warnings.push_back(rec.source + ": fewer than two records, skipped");
      continue;
    }
    out.duration +=
        1e-9 * static_cast<double>(rec.samples.back().stamp_ns - rec.samples.front().stamp_ns);
    const int dropped_invalid = AddSegments(model, rec, map, options, t_offset, out);
    if (dropped_invalid > 0)
      out.warnings.push_back(rec.source + ": " + std::to_string(dropped_invalid) +
                             " records with an unusable channel left out");
    t_offset +=
        1e-9 * static_cast<double>(rec.samples.back().stamp_ns - rec.samples.front().stamp_ns) +
        1.0;
  }
  if (out.samples.empty()) throw recording::RecordingError("no usable samples in the recordings");
  return out;
}

}  // namespace heft::identification
