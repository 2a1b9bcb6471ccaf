// The fuzzer's input as a stream of values for the harnesses: little-endian integers, doubles,
// strings and raw copies, reading zeros past the end (so every input decodes to some operations).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace heft::fuzz {

class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  std::uint64_t Take(int n) {  // little-endian, zeros past the end
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p_ < end_ ? *p_++ : 0) << (8 * i);
    return v;
  }
  double Double() {  // any bit pattern: NaN and inf included
    const std::uint64_t bits = Take(8);
    double d = 0.0;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string String(std::size_t max) {  // a length byte, then up to `max` bytes
    const std::size_t n = std::min<std::size_t>(Take(1) % (max + 1), left());
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  void Copy(void* out, std::size_t n) {  // zeros past the end
    auto* o = static_cast<std::uint8_t*>(out);
    for (std::size_t i = 0; i < n; ++i) o[i] = p_ < end_ ? *p_++ : 0;
  }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

}  // namespace heft::fuzz
