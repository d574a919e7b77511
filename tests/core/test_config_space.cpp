#include <doctest/doctest.h>

#include <cctype>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "config_space.hpp"
#include "family_tables.hpp"
#include "gemm_check.hpp"

using omnigemm::detail::Config;
using omnigemm::detail::config_fits;
using omnigemm::detail::DeviceLimits;
using omnigemm::test::family_table;
using omnigemm::test::family_tables;

TEST_CASE("config space: the cuda.simt table is the tutorial's CUDA list verbatim") {
  // (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps), in docs/config_seeds.md's order.
  const std::vector<std::tuple<int, int, int, int, int, int>> seeds = {
      {128, 256, 64, 8, 3, 8}, {64, 256, 32, 8, 4, 4},  {128, 128, 32, 8, 4, 4}, {128, 64, 32, 8, 4, 4},
      {64, 128, 32, 8, 4, 4},  {128, 32, 32, 8, 4, 4},  {64, 32, 32, 8, 5, 2},   {32, 64, 32, 8, 5, 2},
      {128, 256, 128, 8, 3, 8}, {256, 128, 128, 8, 3, 8}, {256, 64, 128, 8, 4, 4}, {64, 256, 128, 8, 4, 4},
      {128, 128, 128, 8, 4, 4}, {128, 64, 64, 8, 4, 4},  {64, 128, 64, 8, 4, 4},  {128, 32, 64, 8, 4, 4}};
  auto table = family_table("cuda.simt");
  REQUIRE(table.size() == seeds.size());
  for (size_t i = 0; i < seeds.size(); ++i) {
    const Config& c = table[i];
    CAPTURE(i);
    CHECK(std::make_tuple(c.block_m, c.block_n, c.block_k, c.group_m, c.stages, c.warps) == seeds[i]);
    CHECK(c.waves_per_eu == 0);
    CHECK(c.split_k == 1);
  }
}

TEST_CASE("config space: the hip.gfx90a_mfma table starts with the tutorial's MI200 list verbatim, num_stages 0") {
  // (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, waves_per_eu, num_warps); rows of the backend's own follow.
  const std::vector<std::tuple<int, int, int, int, int, int>> seeds = {
      {128, 256, 16, 1, 2, 4}, {256, 256, 16, 4, 2, 8}, {128, 128, 32, 1, 2, 8}, {64, 128, 32, 8, 3, 4}, {64, 64, 32, 1, 8, 4}};
  auto table = family_table("hip.gfx90a_mfma");
  REQUIRE(table.size() >= seeds.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const Config& c = table[i];
    if (i < seeds.size()) CHECK(std::make_tuple(c.block_m, c.block_n, c.block_k, c.group_m, c.waves_per_eu, c.warps) == seeds[i]);
    CHECK(c.stages == 0);
    CHECK(c.waves_per_eu > 0);
  }
}

TEST_CASE("config space: the text form round-trips for every row of every table") {
  for (const auto& [family, table] : family_tables()) {
    CAPTURE(family);
    CHECK_FALSE(table.empty());
    for (const Config& c : table) {
      const std::string text = c.to_string();
      CAPTURE(text);
      auto back = Config::parse(text);
      REQUIRE(back.has_value());
      CHECK(*back == c);
    }
  }
  CHECK(family_table("cuda.simt")[0].to_string() == "simt:128x256x64-g8-s3-w8");
  CHECK(family_table("cuda.sm90_wgmma")[0].to_string() == "sm90_wgmma:128x256x64-g16-s4-w12-coop");
  CHECK(family_table("hip.gfx90a_mfma")[0].to_string() == "gfx90a_mfma:128x256x16-g1-s0-w4-e2");
  Config k;
  k.block_m = 64; k.block_n = 32; k.block_k = 16; k.split_k = 4; k.form = "swap";
  CHECK(k.to_string() == "64x32x16-g8-s1-w4-k4-swap");
  k.family = "sm90_wgmma";
  CHECK(k.to_string() == "sm90_wgmma:64x32x16-g8-s1-w4-k4-swap");
  CHECK(Config::parse("sm90_wgmma:64x32x16-g8-s1-w4-k4-swap") == k);
}

TEST_CASE("config space: family and form names") {
  // Fields and the form in any order; the form may stand before numeric fields.
  auto c = Config::parse("sm90_wgmma:128x64x64-swap-k2-s8-w12");
  REQUIRE(c.has_value());
  CHECK(c->family == "sm90_wgmma");
  CHECK(c->form == "swap");
  CHECK(c->split_k == 2);
  for (const char* bad : {"Sm90:128x128x32", "9abc:128x128x32", ":128x128x32", "a b:128x128x32", "x:y:128x128x32",
                          "128x128x32-coop-swap", "128x128x32-Coop", "128x128x32-x1", "128x128x32-co op",
                          "abcdefghijklmnopqrstuvwxyz:128x128x32", "128x128x32-abcdefghijklmnopqrstuvwxyz"}) {
    CHECK_MESSAGE(!Config::parse(bad).has_value(), bad);
    CHECK_MESSAGE(!Config::parse_error(bad).empty(), bad);
  }
  CHECK(Config::parse_error("128x128x32-x1").find("family") != std::string::npos);  // says what replaced -x
  CHECK(Config::parse_error("sm90_wgmma:128x256x64-g16-s4-w12-coop").empty());
}

TEST_CASE("config space: parse rejects malformed text and never crashes on random input") {
  for (const char* bad : {"", "x", "128", "128x128", "128x128x", "128x128x32-", "128x128x32-g", "128x128x32-q4",
                          "128x128x32-g8-g8", "-1x128x32", "128x128x32-w0", "128x128x32-k0", "128x128x32 -g8",
                          "0x128x32", "128x128x32-s99", "99999999999x1x1"})
    CHECK_MESSAGE(!Config::parse(bad).has_value(), bad);
  CHECK(Config::parse("128x128x32").has_value());                  // optional fields default
  CHECK(Config::parse("128x128x32-w8-g4").has_value());            // in any order
  const std::string alphabet = "0123456789x-gswekq ";
  std::uniform_int_distribution<int> len(0, 24), ch(0, int(alphabet.size()) - 1);
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int n = len(omnigemm::test::rng()); n > 0; --n) s += alphabet[size_t(ch(omnigemm::test::rng()))];
    auto c = Config::parse(s);
    if (c) CHECK(Config::parse(c->to_string()) == c);  // anything accepted round-trips
  }
}

TEST_CASE("config space: validity rules follow device limits") {
  const Config big = *Config::parse("128x256x64-g8-s3-w8");  // 3 x (128 + 256) x 64 x 2 B = 147456 B
  DeviceLimits h100;
  h100.max_shared_bytes = 227 * 1024;
  h100.max_threads_per_group = 1024;
  h100.warp_size = 32;
  h100.max_registers_per_thread = 255;
  std::string why;
  CHECK(config_fits(big, h100, 2, &why));
  DeviceLimits vk48 = h100;
  vk48.max_shared_bytes = 48 * 1024;
  CHECK_FALSE(config_fits(big, vk48, 2, &why));
  CHECK(why.find("shared memory") != std::string::npos);

  DeviceLimits few_threads = h100;
  few_threads.max_threads_per_group = 128;
  CHECK_FALSE(config_fits(big, few_threads, 2, &why));  // 8 warps = 256 threads
  CHECK(why.find("threads") != std::string::npos);

  const Config wide = *Config::parse("256x256x16-g1-s1-w2");  // 65536 accumulators / 64 threads
  CHECK_FALSE(config_fits(wide, h100, 2, &why));
  CHECK(why.find("registers") != std::string::npos);

  // AMD MI200 (gfx90a): wave64, 512 registers per lane shared by VGPRs and AGPRs, 8 waves/SIMD.
  DeviceLimits mi200;
  mi200.max_shared_bytes = 64 * 1024;
  mi200.max_threads_per_group = 1024;
  mi200.warp_size = 64;
  mi200.max_waves_per_eu = 8;
  mi200.registers_per_lane_total = 512;
  for (const Config& c : family_table("hip.gfx90a_mfma")) CHECK_MESSAGE(config_fits(c, mi200, 2, &why), why);
  Config greedy = *Config::parse("256x256x16-g4-s0-w8-e8");  // 128 accumulators but 512/8 = 64 registers
  CHECK_FALSE(config_fits(greedy, mi200, 2, &why));
  CHECK(why.find("waves_per_eu") != std::string::npos);
  Config too_many = *Config::parse("64x64x32-g1-s0-w4-e9");
  CHECK_FALSE(config_fits(too_many, mi200, 2, &why));
  // waves_per_eu means nothing to an NVIDIA device.
  CHECK_FALSE(config_fits(family_table("hip.gfx90a_mfma")[3], h100, 2, &why));
  CHECK(why.find("AMD") != std::string::npos);
}

TEST_CASE("config space: parse survives arbitrary bytes and single-character mutations of every row") {
  auto& g = omnigemm::test::rng();
  std::uniform_int_distribution<int> byte(0, 255), len(0, 40);
  for (int i = 0; i < 500; ++i) {
    std::string s;
    for (int n = len(g); n > 0; --n) s += char(byte(g));
    auto c = Config::parse(s);
    if (c) CHECK(Config::parse(c->to_string()) == c);
  }
  // Mutating one character of a valid text: either rejected or a well-formed config that
  // round-trips; truncations of a valid text with optional fields cut mid-field are rejected.
  for (const auto& [family, table] : family_tables())
    for (const Config& row : table) {
      const std::string text = row.to_string();
      for (size_t pos = 0; pos < text.size(); ++pos) {
        std::string m = text;
        m[pos] = char(byte(g));
        auto c = Config::parse(m);
        if (c) CHECK(Config::parse(c->to_string()) == c);
        // A cut inside the family name, the tile or a numeric field is rejected (a cut inside
        // the form's name leaves a shorter, well-formed form name).
        const std::string cut = text.substr(0, pos);
        const bool in_form = !row.form.empty() && pos > text.size() - row.form.view().size();
        if (!cut.empty() && !in_form &&
            (cut.back() == '-' || cut.back() == 'x' || cut.back() == ':' || std::isalpha(static_cast<unsigned char>(cut.back()))))
          CHECK_MESSAGE(!Config::parse(cut).has_value(), cut);
      }
      CHECK_FALSE(Config::parse(text + "-").has_value());
      if (row.form.empty()) CHECK_FALSE(Config::parse(text + "0000000000000").has_value());  // an int overflow, not a wrap
      else CHECK_FALSE(Config::parse(text + "-k0000000000000").has_value());
    }
}
