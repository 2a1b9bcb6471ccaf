#include "heft/recording/recording.hpp"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>

#include "heft/recording/candump_convert.hpp"

namespace heft::recording {

static_assert(std::endian::native == std::endian::little,
              "the recording format is little-endian; add byte swapping for this host");

namespace {

constexpr std::size_t kFixedHeader = 8 + 6 * 4 + 8;
constexpr std::size_t kBaseValues = 13;

template <typename T>
void Append(std::vector<unsigned char>& out, const T& value) {
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T>
T Take(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

std::size_t ValidityBytes(std::size_t j, std::size_t w, std::uint32_t version) {
  return (version >= 2 ? 2 : 1) + 2 * j + w;
}

std::size_t SpecificForceValues(std::uint32_t version) {
  return version >= 2 ? 6 : 0;
}

}  // namespace

std::size_t RecordSize(std::size_t joints, std::size_t wrenches, std::uint32_t version) noexcept {
  const std::size_t raw =
      8 + 8 * (kBaseValues + SpecificForceValues(version) + 3 * joints + 6 * wrenches) +
      ValidityBytes(joints, wrenches, version);
  return (raw + 7) / 8 * 8;
}

RecordingWriter::RecordingWriter(const std::string& path, const RecordingInfo& info)
    : path_(path), info_(info), out_(path, std::ios::binary | std::ios::trunc) {
  if (!out_)
    throw RecordingError(path + ": cannot create the recording file: " + std::strerror(errno));
  std::vector<unsigned char> names;
  for (const auto* list : {&info.joints, &info.wrench_frames}) {
    for (const std::string& n : *list) {
      if (n.size() > 0xffff) throw RecordingError(path + ": name too long: " + n.substr(0, 40));
      Append(names, static_cast<std::uint16_t>(n.size()));
      names.insert(names.end(), n.begin(), n.end());
    }
  }
  std::vector<unsigned char> header(kRecordingMagic, kRecordingMagic + 8);
  Append(header, kRecordingVersion);
  Append(header, static_cast<std::uint32_t>(kFixedHeader + names.size()));
  Append(header,
         static_cast<std::uint32_t>(RecordSize(info.joints.size(), info.wrench_frames.size())));
  Append(header, static_cast<std::uint32_t>(info.joints.size()));
  Append(header, static_cast<std::uint32_t>(info.wrench_frames.size()));
  Append(header, static_cast<std::uint32_t>(info.floating_base ? 1u : 0u));
  Append(header, info.nominal_rate);
  header.insert(header.end(), names.begin(), names.end());
  out_.write(reinterpret_cast<const char*>(header.data()),
             static_cast<std::streamsize>(header.size()));
  if (!out_) throw RecordingError(path + ": write failed");
}

void RecordingWriter::Put(const RecordSample& s) {
  const std::size_t j = info_.joints.size(), w = info_.wrench_frames.size();
  const std::size_t start = buffer_.size();
  Append(buffer_, s.stamp_ns);
  for (double x : s.base) Append(buffer_, x);
  for (double x : s.specific_force) Append(buffer_, s.has_specific_force ? x : 0.0);
  for (const auto* vec : {&s.q, &s.v, &s.tau})
    for (std::size_t i = 0; i < j; ++i) Append(buffer_, i < vec->size() ? (*vec)[i] : 0.0);
  for (std::size_t i = 0; i < w; ++i)
    for (int k = 0; k < 6; ++k) Append(buffer_, i < s.wrenches.size() ? s.wrenches[i][k] : 0.0);
  buffer_.push_back(s.base_valid ? 1 : 0);
  buffer_.push_back(s.has_specific_force ? 1 : 0);
  for (const auto* vec : {&s.encoder_valid, &s.torque_valid})
    for (std::size_t i = 0; i < j; ++i) buffer_.push_back(i < vec->size() && (*vec)[i] ? 1 : 0);
  for (std::size_t i = 0; i < w; ++i)
    buffer_.push_back(i < s.wrench_valid.size() && s.wrench_valid[i] ? 1 : 0);
  buffer_.resize(start + RecordSize(j, w), 0);
  ++records_;
  if (buffer_.size() >= (1u << 16)) Flush();
}

void RecordingWriter::Write(const RecordSample& sample) {
  Put(sample);
}

void RecordingWriter::Write(const hal::RobotStateSample& in) {
  Put(ToRecord(in, info_.joints.size(), info_.wrench_frames.size(), info_.floating_base));
}

void RecordingWriter::Flush() {
  if (buffer_.empty()) return;
  out_.write(reinterpret_cast<const char*>(buffer_.data()),
             static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  buffer_.clear();
  if (!out_) throw RecordingError(path_ + ": write failed: " + std::strerror(errno));
}

void RecordingWriter::Close() {
  Flush();
  out_.close();
  if (!out_) throw RecordingError(path_ + ": write failed on close: " + std::strerror(errno));
}

Recording ReadRecording(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RecordingError(path + ": cannot open: " + std::strerror(errno));
  // The magic first: a file that is not a recording (/dev/zero, a video) is refused before it is
  // read whole into memory.
  std::vector<unsigned char> data(8);
  in.read(reinterpret_cast<char*>(data.data()), 8);
  data.resize(static_cast<std::size_t>(in.gcount()));
  if (data.size() == 8 && std::memcmp(data.data(), kRecordingMagic, 8) != 0)
    throw RecordingError(path + ": bad magic: not a heft recording (.heftrec)");
  data.insert(data.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return ParseRecording(data, path);
}

namespace {

RecordingError Failure(const std::string& path, const std::string& what) {
  return RecordingError(path + ": " + what);
}

// What the fixed header says of the file's layout.
struct Layout {
  std::uint32_t version = 0, header_size = 0, record_size = 0, nj = 0, nw = 0;
};

// The fixed header (magic, version, sizes, channel counts, flags, nominal rate into `info`),
// checked against the data's size and the record size its counts imply.
Layout ParseFixedHeader(const std::vector<unsigned char>& data, const std::string& path,
                        RecordingInfo& info) {
  auto fail = [&](const std::string& what) { return Failure(path, what); };
  if (data.size() < kFixedHeader)
    throw fail("truncated header (" + std::to_string(data.size()) +
               " bytes); not a heft recording?");
  if (std::memcmp(data.data(), kRecordingMagic, 8) != 0)
    throw fail("bad magic: not a heft recording (.heftrec)");
  const auto version = Take<std::uint32_t>(&data[8]);
  if (version != 1 && version != 2)
    throw fail("unsupported version " + std::to_string(version) +
               " (this build reads versions 1 and 2)");
  const auto header_size = Take<std::uint32_t>(&data[12]);
  const auto record_size = Take<std::uint32_t>(&data[16]);
  const auto nj = Take<std::uint32_t>(&data[20]);
  const auto nw = Take<std::uint32_t>(&data[24]);
  const auto flags = Take<std::uint32_t>(&data[28]);
  info.floating_base = (flags & 1u) != 0;
  info.nominal_rate = Take<double>(&data[32]);
  if (nj > 4096 || nw > 64)
    throw fail("implausible channel counts (" + std::to_string(nj) + " joints, " +
               std::to_string(nw) + " wrenches)");
  if (header_size > data.size()) throw fail("truncated header (names)");
  if (record_size != RecordSize(nj, nw, version))
    throw fail("record size " + std::to_string(record_size) + " does not match " +
               std::to_string(nj) + " joints and " + std::to_string(nw) + " wrenches (expected " +
               std::to_string(RecordSize(nj, nw, version)) + ")");
  if (!(info.nominal_rate > 0.0 && info.nominal_rate < 1e6)) throw fail("bad nominal rate");
  return Layout{version, header_size, record_size, nj, nw};
}

// The names after the fixed header (joints, then wrench frames) into `info`; they fill the header.
void ParseNames(const std::vector<unsigned char>& data, const std::string& path,
                const Layout& layout, RecordingInfo& info) {
  auto fail = [&](const std::string& what) { return Failure(path, what); };
  std::size_t pos = kFixedHeader;
  for (std::uint32_t i = 0; i < layout.nj + layout.nw; ++i) {
    if (pos + 2 > layout.header_size) throw fail("truncated header (names)");
    const auto len = Take<std::uint16_t>(&data[pos]);
    pos += 2;
    if (pos + len > layout.header_size) throw fail("truncated header (names)");
    std::string name(reinterpret_cast<const char*>(&data[pos]), len);
    pos += len;
    (i < layout.nj ? info.joints : info.wrench_frames).push_back(std::move(name));
  }
  if (pos != layout.header_size) throw fail("header size does not match its names");
}

// Record r, starting at p, into s: the values (all finite), then the validity bytes.
void ParseRecord(const unsigned char* p, std::size_t r, const Layout& layout,
                 const std::string& path, RecordSample& s) {
  const std::uint32_t version = layout.version, nj = layout.nj, nw = layout.nw;
  s.stamp_ns = Take<std::int64_t>(p);
  p += 8;
  auto value = [&]() {
    const double x = Take<double>(p);
    p += 8;
    if (!std::isfinite(x)) throw Failure(path, "non-finite value in record " + std::to_string(r));
    return x;
  };
  for (double& x : s.base) x = value();
  if (version >= 2)
    for (double& x : s.specific_force) x = value();
  for (auto* vec : {&s.q, &s.v, &s.tau}) {
    vec->resize(nj);
    for (double& x : *vec) x = value();
  }
  s.wrenches.resize(nw);
  for (auto& wr : s.wrenches)
    for (double& x : wr) x = value();
  s.base_valid = *p++ != 0;
  if (version >= 2) s.has_specific_force = *p++ != 0;
  s.encoder_valid.assign(p, p + nj);
  p += nj;
  s.torque_valid.assign(p, p + nj);
  p += nj;
  s.wrench_valid.assign(p, p + nw);
}

}  // namespace

Recording ParseRecording(const std::vector<unsigned char>& data, const std::string& path) {
  Recording rec;
  rec.source = path;
  const Layout layout = ParseFixedHeader(data, path, rec.info);
  ParseNames(data, path, layout, rec.info);
  const std::size_t header_size = layout.header_size, record_size = layout.record_size;
  const std::size_t body = data.size() - header_size;
  if (body % record_size != 0)
    throw Failure(path, "truncated record at the end (" + std::to_string(body % record_size) +
                            " of " + std::to_string(record_size) + " bytes)");
  const std::size_t n = body / record_size;
  rec.samples.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    ParseRecord(&data[header_size + r * record_size], r, layout, path, rec.samples[r]);
    if (r > 0 && rec.samples[r].stamp_ns <= rec.samples[r - 1].stamp_ns)
      throw Failure(path, "time does not increase at record " + std::to_string(r));
  }
  return rec;
}

}  // namespace heft::recording
