// tuning_json_test.cpp: export/import of the tuning database: round trip,
// merge on import, and refusal of malformed or mistyped files with the JSON
// path of the bad field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;
using nlohmann::json;

namespace {

const std::string kSpecA = "bf16 sm_90 mma_sync tv128 tn8 td128 s4 w4x1";
const std::string kSpecB = "bf16 sm_90 mma_sync tv128 tn16 td128 s3 w8x1";

fs::TuningDb sample_db() {
  fs::TuningDb db;
  db.environment = {"NVIDIA H200", 9, 0, 132, 1980000, 3201000, "12.8", "12.8", "12.8", "gen-7"};
  const fs::TuningKey k8{{"NVIDIA H200", 132, 9, 0}, fs::DType::bf16, 151936, 4096, fs::batch_bucket(8)};
  const fs::TuningKey kbig{{"NVIDIA H200", 132, 9, 0}, fs::DType::bf16, 151936, 4096, fs::batch_bucket(1000)};
  db.record(k8, {kSpecA, 20.25, 19.5, "2026-11-21T10:00:00Z"});
  db.record(k8, {kSpecB, 23.0, 22.0, "2026-11-21T10:00:01Z"});
  db.record(kbig, {"bf16 sm_90 mma_sync tv128 tn64 td64 s2 w4x2", 410.0, 400.0, "2026-11-21T10:00:02Z"});
  db.record(kbig, {"bf16 sm_90 mma_sync tv128 tn64 td64 s2 w4x2", 430.0, 400.0, "2026-11-21T10:00:03Z",
                   fs::TimingMethod::interleaved});
  return db;
}

json sample_json() { return json::parse(fs::tuning_db_to_json(sample_db())); }

// Import must throw FileError whose message contains every `needle`.
void expect_refused(const std::string& text, std::initializer_list<std::string> needles) {
  try {
    fs::tuning_db_from_json(text, "test.json");
    ADD_FAILURE() << "accepted: " << text.substr(0, 300);
  } catch (const fs::FileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("test.json"), std::string::npos) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
  }
}
void expect_refused_doc(const json& doc, std::initializer_list<std::string> needles) { expect_refused(doc.dump(), needles); }

}  // namespace

TEST(TuningJson, RoundTripKeepsEverything) {
  const fs::TuningDb db = sample_db();
  const std::string text = fs::tuning_db_to_json(db);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["schema"], "fusedsample-tuning");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["environment"]["nvrtc_version"], "12.8");
  EXPECT_EQ(doc["entries"][1]["bucket"], "256");
  EXPECT_EQ(doc["entries"][0]["configs"][0]["params"]["tile_d"], 128);
  EXPECT_EQ(doc["entries"][0]["configs"][0]["method"], "flushed");
  EXPECT_EQ(doc["entries"][1]["configs"][1]["method"], "interleaved");
  const fs::TuningDb back = fs::tuning_db_from_json(text);
  ASSERT_EQ(back.entries().size(), db.entries().size());
  for (std::size_t i = 0; i < db.entries().size(); ++i) {
    const auto& a = db.entries()[i];
    const auto& b = back.entries()[i];
    EXPECT_EQ(a.key, b.key);
    ASSERT_EQ(a.configs.size(), b.configs.size());
    for (std::size_t j = 0; j < a.configs.size(); ++j) {
      EXPECT_EQ(a.configs[j].spec, b.configs[j].spec);
      EXPECT_EQ(a.configs[j].median_us, b.configs[j].median_us);
      EXPECT_EQ(a.configs[j].floor_us, b.configs[j].floor_us);
      EXPECT_EQ(a.configs[j].timestamp, b.configs[j].timestamp);
      EXPECT_EQ(a.configs[j].method, b.configs[j].method);
    }
  }
  EXPECT_EQ(back.environment.gpu_name, "NVIDIA H200");
  EXPECT_EQ(back.environment.sm_clock_khz, 1980000);
  EXPECT_EQ(back.environment.generator_version, "gen-7");
  EXPECT_EQ(fs::tuning_db_to_json(back), text);
  // Empty database round trips too.
  EXPECT_TRUE(fs::tuning_db_from_json(fs::tuning_db_to_json(fs::TuningDb{})).empty());
}

TEST(TuningJson, ImportMergesKeepingTheFaster) {
  fs::TuningDb mine = sample_db();
  json doc = sample_json();
  doc["entries"][0]["configs"][0]["median_us"] = 30.0;  // slower A: ignored
  doc["entries"][0]["configs"][1]["median_us"] = 15.0;  // faster B: kept
  mine.merge(fs::tuning_db_from_json(doc.dump()));
  const auto& cfg = mine.entries()[0].configs;
  EXPECT_EQ(cfg[0].median_us, 20.25);
  EXPECT_EQ(cfg[1].median_us, 15.0);
  EXPECT_EQ(mine.entries()[0].best()->spec, kSpecB);
}

// Files written before the timing method existed (the built-in tables of
// sessions 2-8 among them) hold flushed times.
TEST(TuningJson, ConfigsWithoutMethodWereFlushed) {
  json doc = sample_json();
  for (auto& e : doc["entries"])
    for (auto& c : e["configs"]) c.erase("method");
  const fs::TuningDb back = fs::tuning_db_from_json(doc.dump());
  ASSERT_EQ(back.entries().size(), 2u);
  for (const auto& e : back.entries())
    for (const auto& c : e.configs) EXPECT_EQ(c.method, fs::TimingMethod::flushed) << c.spec;
  doc = sample_json();
  doc["entries"][1]["configs"][1]["method"] = "sequential";
  expect_refused_doc(doc, {"/entries/1/configs/1/method", "unknown timing method 'sequential'"});
  doc["entries"][1]["configs"][1]["method"] = 1;
  expect_refused_doc(doc, {"/entries/1/configs/1/method", "expected a string"});
}

// Until session 35 batches past 256 rows had a ">256" bucket; they now use
// the bucket of their parts (batch_part_rows), so such entries are checked
// and skipped: an old file still imports, and a bad entry is still refused.
TEST(TuningJson, RetiredBucketEntriesAreCheckedThenSkipped) {
  json doc = sample_json();
  doc["entries"][1]["bucket"] = ">256";
  const fs::TuningDb back = fs::tuning_db_from_json(doc.dump());
  ASSERT_EQ(back.entries().size(), 1u);
  EXPECT_EQ(back.entries()[0].key.bucket, fs::batch_bucket(8));
  doc["entries"][1]["configs"][0]["spec"] = "bf16 sm_90 nope";
  expect_refused_doc(doc, {"/entries/1/configs/0"});
  doc = sample_json();
  doc["entries"][1]["bucket"] = ">512";
  expect_refused_doc(doc, {"/entries/1/bucket", "unknown batch bucket '>512'"});
}

TEST(TuningJson, RefusesMalformedJson) {
  expect_refused("{\"schema\": \"fusedsample-tuning\", ", {"malformed JSON"});
  expect_refused("", {"malformed JSON"});
  expect_refused("[1, 2]", {"expected an object"});
}

TEST(TuningJson, RefusesWrongSchemaOrVersion) {
  json doc = sample_json();
  doc["schema"] = "clblast-db";
  expect_refused_doc(doc, {"/schema", "clblast-db", "fusedsample-tuning"});
  doc = sample_json();
  doc["version"] = 2;
  expect_refused_doc(doc, {"/version", "unsupported version 2"});
  doc = sample_json();
  doc.erase("schema");
  expect_refused_doc(doc, {"missing required field 'schema'"});
  doc = sample_json();
  doc["version"] = "1";
  expect_refused_doc(doc, {"/version", "expected an integer"});
}

TEST(TuningJson, RefusesUnknownParameterAndFieldNames) {
  json doc = sample_json();
  doc["entries"][0]["configs"][1]["params"]["tile_q"] = 8;
  expect_refused_doc(doc, {"/entries/0/configs/1/params/tile_q", "unknown parameter 'tile_q'"});
  doc = sample_json();
  doc["entries"][0]["configs"][0]["params"]["stages"] = 3;  // disagrees with the spec (s4)
  expect_refused_doc(doc, {"/entries/0/configs/0/params/stages", "disagrees"});
  doc = sample_json();
  doc["entries"][1]["vocab_size"] = 5;
  expect_refused_doc(doc, {"/entries/1/vocab_size", "unknown field"});
  doc = sample_json();
  doc["extra"] = true;
  expect_refused_doc(doc, {"/extra", "unknown field"});
  doc = sample_json();
  doc["entries"][0]["configs"][0]["speed"] = 1;
  expect_refused_doc(doc, {"/entries/0/configs/0/speed"});
}

TEST(TuningJson, RefusesBadSpecStrings) {
  const std::string p = "/entries/0/configs/0/spec";
  json doc = sample_json();
  doc["entries"][0]["configs"][0]["spec"] = "bf16 sm_90 mma_sync tv128 tq8";
  expect_refused_doc(doc, {p, "unknown spec token 'tq8'"});
  doc["entries"][0]["configs"][0]["spec"] = "bf16 sm_90 mma_sync tv100 tn8 td128 s4 w4x1";  // fails validate()
  expect_refused_doc(doc, {p, "tile_v"});
  doc["entries"][0]["configs"][0]["spec"] = "bf16 sm_42 mma_sync tv128 tn8 td128 s4 w4x1";
  expect_refused_doc(doc, {p, "sm_42"});
  doc["entries"][0]["configs"][0]["spec"] = "fp16 sm_90 mma_sync tv128 tn8 td128 s4 w4x1";  // entry is bf16
  expect_refused_doc(doc, {p, "differs from the entry's dtype"});
  doc = sample_json();
  doc["entries"][0]["dtype"] = "int4";
  expect_refused_doc(doc, {"/entries/0/dtype", "int4"});
  doc = sample_json();
  doc["entries"][0]["compute_capability"] = "nine";
  expect_refused_doc(doc, {"/entries/0/compute_capability", "nine"});
  doc = sample_json();
  doc["entries"][0]["bucket"] = "3";
  expect_refused_doc(doc, {"/entries/0/bucket", "unknown batch bucket"});
}

// Session 44: a template change that made one spec of every built-in table
// need more than 227 KiB of shared memory made each whole table unreadable,
// and every launch ran default_spec (2 x the cycles at N = 256). Read for use
// (the cache dir's database, the built-in tables), a config whose spec this
// build parses but no longer accepts is kept and reported, and the lookup
// skips it (as it skips any invalid stored spec); plain reads (import) stay
// strict, and a spec this build cannot parse (a newer generator's token)
// still refuses the file.
TEST(TuningJson, ReadForUseKeepsConfigsThisBuildNoLongerAcceptsUnused) {
  json doc = sample_json();
  json& cfg = doc["entries"][0]["configs"][0];
  cfg.erase("params");
  cfg["spec"] = "bf16 sm_90 mma_sync tv256 tn64 td128 s8 w4x2";  // parses; needs more than 227 KiB of shared memory
  expect_refused_doc(doc, {"/entries/0/configs/0/spec", "shared memory"});
  std::vector<std::string> skipped;
  const fs::TuningDb db = fs::tuning_db_from_json(doc.dump(), "test.json", &skipped);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("test.json: /entries/0/configs/0/spec"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("tv256 tn64 td128 s8 w4x2"), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[0].find("shared memory"), std::string::npos) << skipped[0];
  ASSERT_EQ(db.entries().size(), 2u);
  ASSERT_EQ(db.entries()[0].configs.size(), 2u);  // kept (a save writes it back), not used:
  EXPECT_EQ(db.entries()[0].configs[0].spec, "bf16 sm_90 mma_sync tv256 tn64 td128 s8 w4x2");
  EXPECT_EQ(db.entries()[1].configs.size(), 2u);
  const fs::DeviceIdentity h200{"NVIDIA H200", 132, 9, 0};
  auto r = db.lookup_at(fs::MatchLevel::exact_device, h200, fs::DType::bf16, 151936, 4096, 8, fs::Arch::sm_90);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec.to_string(), kSpecB);  // the faster config does not validate: the next one answers

  // An entry none of whose configs validates answers no lookup.
  doc["entries"][0]["configs"][1].erase("params");
  doc["entries"][0]["configs"][1]["spec"] = "bf16 sm_90 mma_sync tv256 tn64 td128 s9 w4x2";
  skipped.clear();
  const fs::TuningDb rest = fs::tuning_db_from_json(doc.dump(), "test.json", &skipped);
  EXPECT_EQ(skipped.size(), 2u);
  ASSERT_EQ(rest.entries().size(), 2u);
  EXPECT_EQ(rest.entries()[1].key.bucket, fs::batch_bucket(1000));
  EXPECT_FALSE(rest.lookup_at(fs::MatchLevel::exact_device, h200, fs::DType::bf16, 151936, 4096, 8, fs::Arch::sm_90));

  // Whatever else is wrong with the file still refuses it.
  for (const char* bad : {"bf16 sm_90 mma_sync tv128 tn8 td128 s4 w4x1 zz", "bf16 sm_90 logits tv128 tn8"}) {
    json d = sample_json();
    d["entries"][0]["configs"][0].erase("params");
    d["entries"][0]["configs"][0]["spec"] = bad;
    skipped.clear();
    EXPECT_THROW(fs::tuning_db_from_json(d.dump(), "test.json", &skipped), fs::FileError) << bad;
    EXPECT_TRUE(skipped.empty()) << bad;
  }
  // ... also in a config whose spec is left out: its other fields are checked all the same.
  const auto with_invalid_spec = [] {
    json d = sample_json();
    d["entries"][0]["configs"][0]["spec"] = "bf16 sm_90 mma_sync tv256 tn64 td128 s8 w4x2";
    d["entries"][0]["configs"][0].erase("params");
    return d;
  };
  json d = with_invalid_spec();
  d["entries"][0]["configs"][0]["median_us"] = "fast";
  EXPECT_THROW(fs::tuning_db_from_json(d.dump(), "test.json", &skipped), fs::FileError);
  d = with_invalid_spec();
  d["entries"][0]["configs"][0]["spec"] = "fp16 sm_90 mma_sync tv256 tn64 td128 s8 w4x2";  // entry is bf16
  EXPECT_THROW(fs::tuning_db_from_json(d.dump(), "test.json", &skipped), fs::FileError);
  d = with_invalid_spec();
  d["entries"][0]["configs"][0]["params"] = {{"tile_v", 128}};  // the spec says 256
  EXPECT_THROW(fs::tuning_db_from_json(d.dump(), "test.json", &skipped), fs::FileError);
  d = with_invalid_spec();
  d["entries"][0]["configs"][0]["params"] = {{"swizzle", 128}};  // a parameter this build does not know
  EXPECT_THROW(fs::tuning_db_from_json(d.dump(), "test.json", &skipped), fs::FileError);
  skipped.clear();
  EXPECT_NO_THROW(fs::tuning_db_from_json(with_invalid_spec().dump(), "test.json", &skipped));
  EXPECT_EQ(skipped.size(), 1u);
}

TEST(TuningJson, RefusesMismatchedTypesAndMissingFields) {
  json doc = sample_json();
  doc["entries"][0]["vocab"] = "151936";
  expect_refused_doc(doc, {"/entries/0/vocab", "expected an integer, got string"});
  doc = sample_json();
  doc["entries"][0]["configs"][1]["median_us"] = "fast";
  expect_refused_doc(doc, {"/entries/0/configs/1/median_us", "expected a number"});
  doc = sample_json();
  doc["entries"][0]["configs"][1]["median_us"] = -1.0;
  expect_refused_doc(doc, {"/entries/0/configs/1/median_us", ">= 0"});
  doc = sample_json();
  doc["entries"] = json::object();
  expect_refused_doc(doc, {"/entries", "expected an array"});
  doc = sample_json();
  doc["entries"][0]["configs"][0]["spec"] = 7;
  expect_refused_doc(doc, {"/entries/0/configs/0/spec", "expected a string"});
  doc = sample_json();
  doc["entries"][1].erase("d_model");
  expect_refused_doc(doc, {"/entries/1", "missing required field 'd_model'"});
  doc = sample_json();
  doc["environment"]["multiprocessors"] = 1.5;
  expect_refused_doc(doc, {"/environment/multiprocessors", "expected an integer"});
  doc = sample_json();
  doc["entries"][0]["configs"][0]["params"]["variant"] = 1;
  expect_refused_doc(doc, {"/entries/0/configs/0/params/variant", "expected a string"});
}

// A key given twice in one object: the parser kept the last value without a
// word, so a config read as the one its second "median_us" (or "spec") named
// whatever the first said. The import is strict: such a file is refused,
// naming the key's path.
TEST(TuningJson, RefusesDuplicateKeys) {
  std::string text = sample_json().dump();
  const std::string median = "\"median_us\":";
  text.replace(text.find(median), median.size(), "\"median_us\":1e9," + median);
  expect_refused(text, {"/entries/0/configs/0/median_us", "duplicate"});
  text = sample_json().dump();
  const std::string schema = "\"schema\":";
  text.replace(text.find(schema), schema.size(), "\"entries\":[]," + schema);
  expect_refused(text, {"/entries", "duplicate"});
  // The same key in different objects is no duplicate.
  EXPECT_EQ(fs::tuning_db_from_json(sample_json().dump()).entries().size(), 2u);
}

// Values that fit the JSON but not the fields (session 31; before, these were read wrapped, or escaped as an
// untyped nlohmann exception without the file's name).
TEST(TuningJson, RefusesNumbersOutOfRangeInsteadOfWrapping) {
  // A number past a double: nlohmann throws out_of_range (406), not parse_error.
  std::string text = sample_json().dump();
  const std::string median = "\"median_us\":";
  text.replace(text.find(median), median.size(), median + "1e400,\"x\":");
  expect_refused(text, {"malformed JSON", "1e400"});
  json doc = sample_json();
  doc["entries"][0]["multiprocessors"] = std::uint64_t(4294967296);  // was stored as 0
  expect_refused_doc(doc, {"/entries/0/multiprocessors", "<= 2147483647"});
  doc = sample_json();
  doc["entries"][0]["multiprocessors"] = std::uint64_t(4294967428);  // was read as 132
  expect_refused_doc(doc, {"/entries/0/multiprocessors", "<= 2147483647"});
  doc = sample_json();
  doc["environment"]["multiprocessors"] = std::int64_t(99999999999);
  expect_refused_doc(doc, {"/environment/multiprocessors", "<= 2147483647"});
  doc = sample_json();
  doc["entries"][0]["multiprocessors"] = std::uint64_t(18446744073709551615ull);
  expect_refused_doc(doc, {"/entries/0/multiprocessors", "<="});
  doc = sample_json();
  doc["entries"][0]["compute_capability"] = "4294967305.0";  // was read as 9.0
  expect_refused_doc(doc, {"/entries/0/compute_capability", "4294967305.0"});
  // Until session 40: 429496730.86 overflowed int (UB) into sm_90, 8.10 and 9.-0 were taken.
  for (const char* cc : {"429496730.86", "8.10", "100.0", "0.9"}) {
    doc = sample_json();
    doc["entries"][0]["compute_capability"] = cc;
    expect_refused_doc(doc, {"/entries/0/compute_capability", cc});
  }
  for (const char* cc : {"9.", ".0", "9.0x", "9..0", " 9.0", "9", "9.-0", "-9.0", "+9.0"}) {
    doc = sample_json();
    doc["entries"][0]["compute_capability"] = cc;
    expect_refused_doc(doc, {"/entries/0/compute_capability", "bad compute capability"});
  }
  doc = sample_json();
  doc["entries"][0]["vocab"] = std::int64_t(1) << 40;  // vocab and d_model are 64-bit: accepted
  EXPECT_NO_THROW(fs::tuning_db_from_json(doc.dump(), "test.json"));
}

// A `logits` spec samples given logits: as a tuning entry the Sampler would
// launch it on W and H (session 31: imported, and picked by tuned_spec).
TEST(TuningJson, RefusesSpecsThatDoNotComputeTheMatmul) {
  json doc = sample_json();
  doc["entries"][0]["configs"][0]["spec"] = "bf16 sm_90 logits tv256 tn8 td64 s4 w4x1";
  doc["entries"][0]["configs"][0].erase("params");
  expect_refused_doc(doc, {"/entries/0/configs/0/spec", "fused variant"});
}
