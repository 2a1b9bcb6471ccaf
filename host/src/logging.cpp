#include "heft/host/logging.hpp"

#include <fmt/format.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace heft::host {
namespace {

// The journal stream: one line per message line, each with its sd-daemon priority, flushed at
// once (journald stamps a line when it reads it).
class JournalStreamSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JournalStreamSink(std::FILE* stream) : stream_(stream) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string line = WithPriority(JournalPriority(msg.level),
                                          std::string(msg.payload.data(), msg.payload.size()));
    std::fwrite(line.data(), 1, line.size(), stream_);
    std::fputc('\n', stream_);
    std::fflush(stream_);
  }
  void flush_() override { std::fflush(stream_); }

 private:
  std::FILE* stream_;
};

}  // namespace

bool IsJournalStream(int fd, const char* journal_stream) {
  if (journal_stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  char end = 0;
  if (std::sscanf(journal_stream, "%llu:%llu%c", &dev, &ino, &end) != 2) return false;
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

int JournalPriority(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return 7;
    case spdlog::level::info:
      return 6;
    case spdlog::level::warn:
      return 4;
    case spdlog::level::err:
      return 3;
    case spdlog::level::critical:
      return 2;
    default:
      return 6;
  }
}

std::string WithPriority(int priority, const std::string& message) {
  // (fmt, not operator+ on strings: GCC 12 warns falsely about the latter, -Wrestrict.)
  const std::string prefix = fmt::format("<{}>", priority);
  std::string out = prefix;
  out.reserve(message.size() + prefix.size());
  for (char c : message) {
    out.push_back(c);
    if (c == '\n') out += prefix;
  }
  return out;
}

std::shared_ptr<spdlog::logger> MakeProgramLogger(const std::string& program, bool* journal) {
  const char* stream = std::getenv("JOURNAL_STREAM");
  spdlog::sink_ptr console;
  if (IsJournalStream(STDERR_FILENO, stream))
    console = std::make_shared<JournalStreamSink>(stderr);
  else if (IsJournalStream(STDOUT_FILENO, stream))
    console = std::make_shared<JournalStreamSink>(stdout);
  else
    console = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
  if (journal) *journal = std::dynamic_pointer_cast<JournalStreamSink>(console) != nullptr;
  auto log = std::make_shared<spdlog::logger>(program, console);
  log->flush_on(spdlog::level::warn);
  return log;
}

bool AddLogFile(spdlog::logger& log, const std::string& path) {
  try {
    log.sinks().push_back(
        std::make_shared<spdlog::sinks::rotating_file_sink_mt>(path, 10 * 1024 * 1024, 5));
    return true;
  } catch (const spdlog::spdlog_ex& e) {
    log.warn("log file {} not opened ({}); logging to the console only (host.log_file)", path,
             e.what());
    return false;
  }
}

void ReportFatal(const std::string& program, spdlog::logger* log, bool journal,
                 const std::string& what) {
  if (log != nullptr && journal) {
    log->error("{}", what);
    log->flush();
    return;
  }
  std::fprintf(stderr, "%s: %s\n", program.c_str(), what.c_str());
  if (log == nullptr) return;
  // The other sinks (the log file): the console has the line above.
  const spdlog::details::log_msg msg(log->name(), spdlog::level::err, what);
  for (std::size_t i = 1; i < log->sinks().size(); ++i) {
    log->sinks()[i]->log(msg);
    log->sinks()[i]->flush();
  }
}

}  // namespace heft::host
