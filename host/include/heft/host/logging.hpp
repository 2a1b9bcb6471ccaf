// The host's log as a Debian/systemd service writes it: the console sink, the optional rotating
// file (host.log_file), and how fatal errors reach both.
//
// Under systemd, stdout/stderr are a stream to journald and $JOURNAL_STREAM holds that stream's
// "<device>:<inode>" (systemd.exec(5)). When the console is that stream, every line goes out with
// the sd-daemon priority prefix (sd-daemon(3): "<3>" err, "<4>" warning, "<6>" info, "<7>" debug)
// and no time or level text of its own (the journal stamps each line), so `journalctl -p warning`
// selects heftd's warnings. On a terminal or into a file the format is the usual
// "[time] [program] [level] message" on stdout.
//
// Fatal errors (configuration refused, plugin not loadable, a bus that cannot be opened) go through
// ReportFatal: at priority err into the journal and the log file; on a terminal as one line
// "<program>: <what>" on stderr (what a shell user expects), and into the log file when there is
// one.
//
// Set-up and non-real-time threads only (the sinks lock and write).
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

namespace heft::host {

// True when `fd` is the journal stream named by `journal_stream` ("<dev>:<ino>", the value of
// $JOURNAL_STREAM; null or malformed: false).
bool IsJournalStream(int fd, const char* journal_stream);

// The sd-daemon priority of a spdlog level: trace/debug 7, info 6, warn 4, err 3, critical 2.
int JournalPriority(spdlog::level::level_enum level);

// "<p>" in front of every line of `message` (a message of several lines keeps its priority on
// each).
std::string WithPriority(int priority, const std::string& message);

// The program's logger with its console sink: the journal stream (stderr, else stdout, when one
// of them is $JOURNAL_STREAM) or stdout with colours and time. `journal` says which it chose.
std::shared_ptr<spdlog::logger> MakeProgramLogger(const std::string& program,
                                                  bool* journal = nullptr);

// Adds the rotating log file (host.log_file): 10 MB per file, 5 kept. A file that cannot be opened
// (heftd run by hand, where only systemd's LogsDirectory= creates /var/log/heft) is no reason to
// stop: the logger keeps its console, warns there naming the file and why, and false is returned.
bool AddLogFile(spdlog::logger& log, const std::string& path);

// A fatal error, once: see above. `log` may be null (nothing set up yet: stderr only).
void ReportFatal(const std::string& program, spdlog::logger* log, bool journal,
                 const std::string& what);

}  // namespace heft::host
