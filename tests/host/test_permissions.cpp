// What heftd creates for other processes — the shared-memory hand-off (/dev/shm/<host.shm>), the
// framework input segment (/dev/shm/<host.framework_input.name>) and heftctl's command socket — has
// a restrictive mode and heftd's group (the service's Group=heft), whatever the umask: never world
// readable or writable, and the group gets exactly what the other side needs (the controller
// reads the hand-off, the framework writes its input, heftctl connects to the socket).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "heft/host/command_server.hpp"
#include "heft/host/framework_input.hpp"
#include "heft/host/shared_memory.hpp"

namespace heft::host {
namespace {

struct Mode {
  mode_t mode = 0;
  gid_t gid = 0;
};
Mode StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return {static_cast<mode_t>(st.st_mode & 07777), st.st_gid};
}

// The widest umask (0: shm_open and bind would give what they ask for) and the unit's (0077: they
// would give the owner only). Fails if a mode differs from the one named (wider: others could read
// or write the robot's estimate and commands; narrower: the controller, the framework or heftctl
// in group heft could not), or if the group is not the creating process's.
TEST(Permissions, SegmentsAndSocketHaveTheirModeAndTheServicesGroupWhateverTheUmask) {
  const std::string tag = std::to_string(getpid());
  const std::string dir = testing::TempDir() + "/heft_permissions_" + tag;
  std::filesystem::create_directories(dir);
  for (const mode_t mask : {mode_t{0}, mode_t{0077}, mode_t{0022}}) {
    SCOPED_TRACE("umask " + std::to_string(mask));
    const mode_t old = umask(mask);
    {
      SharedHandOffSegment hand_off("heft_perm_handoff_" + tag);
      const Mode m = StatOf("/dev/shm/heft_perm_handoff_" + tag);
      EXPECT_EQ(m.mode, 0640u);  // heftd writes, the controller (group) reads
      EXPECT_EQ(m.gid, getegid());
    }
    {
      const std::string name = "heft_perm_input_" + tag;
      FrameworkInput input(name);
      const Mode m = StatOf("/dev/shm/" + name);
      EXPECT_EQ(m.mode, 0660u);  // the framework (group) writes its commands and base state
      EXPECT_EQ(m.gid, getegid());
      InputMapping::Unlink(name);
    }
    {
      const std::string path = dir + "/heftd.sock";
      CommandServer server(
          CommandServerOptions{path}, [](plugin::Command) {}, [] { return StatusSnapshot{}; });
      const Mode m = StatOf(path);
      EXPECT_EQ(m.mode, 0660u);  // heftctl (group) connects: a socket needs write to connect
      EXPECT_EQ(m.gid, getegid());
    }
    umask(old);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heft::host
