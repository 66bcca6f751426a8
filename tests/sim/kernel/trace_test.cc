#include "sim/kernel/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"

namespace racesim::kernel {
namespace {

using namespace time_literals;

RunResult small_run(TraceLevel level, std::string* chrome = nullptr) {
  Simulation sim({.seed = 3, .trace = level});
  Mutex m(sim, "cache \"lock\"");
  for (int i = 0; i < 3; ++i) {
    sim.spawn("rank" + std::to_string(i), [&, i] {
      sim.sleep_for((i + 1) * 1_ms);
      m.lock();
      sim.trace_record('B', "storage", "write", "{\"bytes\":1024}");
      sim.sleep_for(2_ms);
      sim.trace_record('E', "storage", "write");
      sim.trace_record('C', "storage", "queue_depth", {}, i);
      m.unlock();
    }, {.group = "rank " + std::to_string(i), .lane = "host"});
  }
  auto r = sim.run();
  if (chrome) {
    std::ostringstream out;
    sim.write_chrome_trace(out);
    *chrome = out.str();
  }
  return r;
}

TEST(TraceTest, HashIsTheSameWhetherRecordsAreKeptOrNot) {
  const auto hashed = small_run(TraceLevel::kHash);
  const auto full = small_run(TraceLevel::kFull);
  EXPECT_EQ(hashed.trace_hash, full.trace_hash);
  const auto off = small_run(TraceLevel::kOff);
  EXPECT_NE(off.trace_hash, hashed.trace_hash);
}

TEST(TraceTest, HashCoversModelRecords) {
  Trace a(TraceLevel::kHash), b(TraceLevel::kHash);
  a.record(5, 1, 'i', "fs", "open");
  b.record(5, 1, 'i', "fs", "opem");
  EXPECT_NE(a.hash(), b.hash());
  Trace c(TraceLevel::kHash);
  c.record(5, 1, 'i', "fs", "open");
  EXPECT_EQ(a.hash(), c.hash());
  EXPECT_TRUE(b.records().empty());
}

// The hash is part of every report (trace hashes pin a run's replay), so its fold is fixed: this
// is its definition, byte by byte, checked against the implementation for every text length up
// to five words and every byte value, so that a faster fold cannot change a report's hash.
std::uint64_t reference_hash(Time t, std::int32_t pid, char phase, const std::vector<std::string>& texts,
                             double value) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  auto mix = [&h](std::uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
  };
  mix(static_cast<std::uint64_t>(t));
  mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 8) | static_cast<unsigned char>(phase));
  for (const std::string& s : texts) {
    mix(s.size());
    std::uint64_t w = 0;
    int n = 0;
    for (unsigned char c : s) {
      w = (w << 8) | c;
      if (++n == 8) {
        mix(w);
        w = 0;
        n = 0;
      }
    }
    if (n != 0) mix(w);
  }
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  mix(bits);
  return h;
}

TEST(TraceTest, HashFoldsTextsAsBigEndianWordsOfEightBytes) {
  for (std::size_t len = 0; len <= 40; ++len) {
    std::string name(len, '\0');
    for (std::size_t i = 0; i < len; ++i) name[i] = static_cast<char>((len * 37 + i * 101 + 200) & 0xFF);
    const std::string category = "storage" + std::string(len % 9, 'x');
    const std::string args = len % 2 ? "{\"bytes\":" + std::to_string(len) + "}" : "";
    Trace t(TraceLevel::kHash);
    t.record(1000 + static_cast<Time>(len), 7, 'B', category, name, args, 0.5 * static_cast<double>(len));
    EXPECT_EQ(t.hash(), reference_hash(1000 + static_cast<Time>(len), 7, 'B', {category, name, args},
                                       0.5 * static_cast<double>(len)))
        << "text length " << len;
  }
}

TEST(TraceTest, ChromeTraceIsValidJsonWithNamedGroupsAndLanes) {
  std::string text;
  small_run(TraceLevel::kFull, &text);
  const auto doc = nlohmann::json::parse(text);  // throws on invalid JSON
  const auto& events = doc.at("traceEvents");
  int process_names = 0, writes_begin = 0, writes_end = 0, counters = 0, waits = 0;
  bool escaped_name_ok = false;
  for (const auto& e : events) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") ++process_names;
    if (e.value("name", "") == "write") (ph == "B" ? writes_begin : writes_end)++;
    if (ph == "C") {
      ++counters;
      EXPECT_TRUE(e.at("args").contains("queue_depth"));
    }
    if (e.value("cat", "") == "wait" && ph == "B" && e.at("args").contains("on")) {
      ++waits;
      if (e.at("args").at("on") == "mutex 'cache \"lock\"'") escaped_name_ok = true;
    }
    if (e.value("cat", "") == "wait" && ph == "B" && e.value("name", "") == "sleep") {
      // A sleep says until when: rank 0's first ends at 1 ms.
      EXPECT_TRUE(e.at("args").contains("until")) << e.dump();
      if (e.at("ts").get<double>() == 0.0 && e.at("tid") == 1) {
        EXPECT_EQ(e.at("args").at("until"), "1ms");
      }
    }
  }
  EXPECT_EQ(process_names, 4);  // "sim" + three ranks
  EXPECT_EQ(writes_begin, 3);
  EXPECT_EQ(writes_end, 3);
  EXPECT_EQ(counters, 3);
  EXPECT_GE(waits, 2);  // ranks 1 and 2 wait for the lock
  EXPECT_TRUE(escaped_name_ok);
  // Timestamps are microseconds with nanosecond precision: the first write begins at 1 ms.
  bool found_ts = false;
  for (const auto& e : events) {
    if (e.value("name", "") == "write" && e.at("ph") == "B" && e.at("ts").get<double>() == 1000.0) {
      found_ts = true;
    }
  }
  EXPECT_TRUE(found_ts);
}

// Slices still open at the end are closed there, innermost first, saying so; closed ones are not.
TEST(TraceTest, SlicesOpenAtTheEndAreClosedInTheOrderTheyNest) {
  const std::vector<TraceRecord> records = {
      {1, 0, 'B', "step", "outer", "{}", 0}, {2, 0, 'B', "wait", "inner", "{}", 0},
      {3, 1, 'B', "step", "done", "{}", 0},  {4, 1, 'E', "step", "done", "", 0},
  };
  std::ostringstream out;
  write_chrome_trace(out, records, {{0, "rank 0", "main"}, {1, "rank 1", "main"}}, 10);
  const auto events = nlohmann::json::parse(out.str()).at("traceEvents");
  std::vector<std::string> ends;
  for (const auto& e : events) {
    if (e.at("ph") != "E") continue;
    ends.push_back(e.at("name").get<std::string>() + "@" + std::to_string(e.at("ts").get<double>()) +
                   (e.contains("args") ? e.at("args").dump() : ""));
  }
  EXPECT_EQ(ends, (std::vector<std::string>{"done@0.004000", "inner@0.010000{\"open_at_end\":true}",
                                            "outer@0.010000{\"open_at_end\":true}"}));
}

TEST(TraceTest, JsonEscapeHandlesControlCharacters) {
  EXPECT_EQ(json_escape("a\"b\\c\n\x01"), "a\\\"b\\\\c\\n\\u0001");
}

}  // namespace
}  // namespace racesim::kernel
