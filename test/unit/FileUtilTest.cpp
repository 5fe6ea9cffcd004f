//===- test/unit/FileUtilTest.cpp - Whole-file reads and atomic writes ----===//
#include "package/FileUtil.h"

#include "package/Error.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <thread>
#include <unistd.h>

using namespace tessel;

static int countEntries(const std::string &dir) {
  int count = 0;
  DIR *handle = opendir(dir.c_str());
  while (dirent *entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      ++count;
  }
  closedir(handle);
  return count;
}

TEST(FileUtil, ConcurrentWritersLeaveOneCompleteFile) {
  char pattern[] = "/tmp/tessel-fileutil-test-XXXXXX";
  std::string dir = mkdtemp(pattern);
  std::string path = dir + "/cache.json";
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      std::string content(100000, char('a' + t));
      for (int i = 0; i < 20; ++i)
        writeFileAtomic(path, content);
    });
  for (std::thread &writer : writers)
    writer.join();
  std::string content = readFile(path);
  ASSERT_EQ(content.size(), 100000u);
  EXPECT_EQ(content, std::string(100000, content[0]));
  EXPECT_EQ(countEntries(dir), 1); // no temporary files left
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(FileUtil, ErrorsNameThePath) {
  try {
    writeFileAtomic("/nonexistent-dir/x.json", "{}");
    FAIL();
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent-dir/x.json"),
              std::string::npos);
  }
  EXPECT_THROW(readFile("/nonexistent-dir/x.json"), Error);
}
