// tuning_json.cpp: the tuning database as JSON.
//
//   { "schema": "fusedsample-tuning", "version": 1,
//     "environment": { "gpu_name", "compute_capability": "9.0", "multiprocessors",
//                      "sm_clock_khz", "memory_clock_khz", "driver_version",
//                      "cuda_version", "nvrtc_version", "generator_version" },
//     "entries": [ { "gpu_name", "multiprocessors", "compute_capability",
//                    "dtype", "vocab", "d_model", "bucket": "1".."256",
//                    "samples": "1"|"4"|"16" (optional, default "1": files
//                    written before sample buckets),
//                    "configs": [ { "spec", "params" (optional), "median_us",
//                                   "floor_us", "timestamp",
//                                   "method": "flushed"|"interleaved" (optional,
//                                   default "flushed": files written before it) } ] } ] }
//
// Import is strict: unknown keys, wrong types, bad spec strings, unknown
// dtype/arch names all throw FileError naming the source and the JSON path.
// Read for use (tuning_db_from_json's `invalid_specs`), a spec that parses
// but that this build does not accept (KernelSpec::validate) is kept and
// reported instead: the lookup skips such specs (best_valid), and a save
// writes them back for a build that accepts them (session 44: a template
// change that grew one spec's shared memory made whole tables unreadable,
// and every launch fell back to default_spec).
// Another exception: entries of the ">256" bucket (files written before session
// 35, when batches past 256 rows had a bucket of their own) are checked like
// any other and then skipped: such batches now use the bucket of their parts
// (batch_part_rows).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "compiler/int_pair.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fusedsample {
namespace {

using nlohmann::json;
constexpr const char* kSchema = "fusedsample-tuning";
constexpr int kVersion = 1;
constexpr std::string_view kRetiredBucketLabel = ">256";  // see the header comment

std::string cc_string(int major, int minor) { return fmt::format("{}.{}", major, minor); }

json params_of(const KernelSpec& s) {
  return json{{"dtype", std::string(to_string(s.dtype))}, {"arch", std::string(to_string(s.arch))},
              {"variant", std::string(to_string(s.variant))}, {"tile_v", s.tile_v}, {"tile_n", s.tile_n},
              {"tile_d", s.tile_d}, {"stages", s.stages}, {"warps_m", s.warps_m}, {"warps_n", s.warps_n}};
}

// Validation with the JSON path of the current value in every message.
struct Checker {
  std::string source;
  [[noreturn]] void fail(const std::string& path, const std::string& why) const {
    throw FileError(fmt::format("{}: {}: {}", source, path.empty() ? "/" : path, why));
  }
  const json& field(const json& obj, const std::string& path, const char* name) const {
    auto it = obj.find(name);
    if (it == obj.end()) fail(path, fmt::format("missing required field '{}'", name));
    return *it;
  }
  void only_keys(const json& obj, const std::string& path, std::initializer_list<const char*> known) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      std::string list;
      for (const char* k : known) {
        ok |= it.key() == k;
        list += list.empty() ? "" : ", ";
        list += k;
      }
      if (!ok) fail(path + "/" + it.key(), fmt::format("unknown field '{}' (known: {})", it.key(), list));
    }
  }
  const json& object(const json& v, const std::string& path) const {
    if (!v.is_object()) fail(path, fmt::format("expected an object, got {}", v.type_name()));
    return v;
  }
  std::string str(const json& v, const std::string& path) const {
    if (!v.is_string()) fail(path, fmt::format("expected a string, got {}", v.type_name()));
    return v.get<std::string>();
  }
  // An integer in [lo, hi]; hi defaults to what an int holds, so that a caller's int(...) cannot wrap
  // (4294967296 multiprocessors read as 0).
  std::int64_t integer(const json& v, const std::string& path, std::int64_t lo,
                       std::int64_t hi = std::numeric_limits<int>::max()) const {
    if (!v.is_number_integer()) fail(path, fmt::format("expected an integer, got {}", v.type_name()));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi))
      fail(path, fmt::format("must be <= {} (got {})", hi, v.get<std::uint64_t>()));
    const auto x = v.get<std::int64_t>();
    if (x < lo) fail(path, fmt::format("must be >= {} (got {})", lo, x));
    if (x > hi) fail(path, fmt::format("must be <= {} (got {})", hi, x));
    return x;
  }
  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, fmt::format("expected a number, got {}", v.type_name()));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) fail(path, fmt::format("must be a finite number >= 0 (got {})", x));
    return x;
  }
  std::pair<int, int> cc(const json& v, const std::string& path) const {
    const std::string s = str(v, path);
    const auto mm = s.find_first_not_of("0123456789.") == std::string::npos ? detail::parse_int_pair(s, '.')
                                                                             : std::nullopt;  // no signs ("9.-0")
    if (!mm) fail(path, fmt::format("bad compute capability '{}' (want e.g. \"9.0\")", s));
    const auto [major, minor] = *mm;
    try {
      arch_for_compute_capability(major, minor);
    } catch (const Error& e) {
      fail(path, e.what());
    }
    return {major, minor};
  }
  template <typename F>
  auto wrap(const std::string& path, F&& f) const {
    try {
      return f();
    } catch (const FileError&) {
      throw;
    } catch (const Error& e) {
      fail(path, e.what());
    }
  }
};

// The config's spec, every check done. A spec that parses but that this
// build does not accept (KernelSpec::validate) refuses the file, or, with
// `invalid` (a database read for use), is returned with *invalid saying why.
KernelSpec check_spec(const Checker& c, const json& cfg, const std::string& path, DType dtype,
                      std::string* invalid) {
  const std::string text = c.str(c.field(cfg, path, "spec"), path + "/spec");
  const KernelSpec spec = c.wrap(path + "/spec", [&] { return KernelSpec::parse(text); });
  try {
    spec.validate();
  } catch (const Error& e) {
    if (!invalid) c.fail(path + "/spec", e.what());
    *invalid = fmt::format("{}: {}/spec: {}", c.source, path, e.what());
  }
  if (spec.variant == Variant::logits)
    c.fail(path + "/spec", fmt::format("'{}' samples given logits; a tuning entry needs a fused variant", text));
  if (spec.dtype != dtype)
    c.fail(path + "/spec", fmt::format("spec dtype {} differs from the entry's dtype {}", to_string(spec.dtype),
                                       to_string(dtype)));
  if (auto it = cfg.find("params"); it != cfg.end()) {
    const std::string pp = path + "/params";
    c.object(*it, pp);
    const json want = params_of(spec);
    for (auto p = it->begin(); p != it->end(); ++p) {
      if (!want.contains(p.key())) {
        std::string names;
        for (auto w = want.begin(); w != want.end(); ++w) names += (names.empty() ? "" : ", ") + w.key();
        c.fail(pp + "/" + p.key(), fmt::format("unknown parameter '{}' (known: {})", p.key(), names));
      }
      const json& w = want[p.key()];
      if (w.is_string()) c.str(*p, pp + "/" + p.key());
      else c.integer(*p, pp + "/" + p.key(), 0);
      if (*p != w)
        c.fail(pp + "/" + p.key(), fmt::format("parameter {} = {} disagrees with spec '{}'", p.key(), p->dump(), text));
    }
  }
  return spec;
}

}  // namespace

std::string tuning_db_to_json(const TuningDb& db) {
  const TuningEnvironment& e = db.environment;
  json entries = json::array();
  for (const TuningEntry& t : db.entries()) {
    json configs = json::array();
    for (const Measurement& m : t.configs) {
      json cfg{{"spec", m.spec},
               {"median_us", m.median_us},
               {"floor_us", m.floor_us},
               {"timestamp", m.timestamp},
               {"method", std::string(to_string(m.method))}};
      try {
        cfg["params"] = params_of(KernelSpec::parse(m.spec));
      } catch (const Error&) {
      }
      configs.push_back(std::move(cfg));
    }
    entries.push_back(json{{"gpu_name", t.key.device.name},
                           {"multiprocessors", t.key.device.multiprocessors},
                           {"compute_capability", cc_string(t.key.device.cc_major, t.key.device.cc_minor)},
                           {"dtype", std::string(to_string(t.key.dtype))},
                           {"vocab", t.key.vocab},
                           {"d_model", t.key.d_model},
                           {"bucket", std::string(batch_bucket_label(t.key.bucket))},
                           {"samples", std::string(sample_bucket_label(t.key.samples_bucket))},
                           {"configs", std::move(configs)}});
  }
  json doc{{"schema", kSchema},
           {"version", kVersion},
           {"environment",
            {{"gpu_name", e.gpu_name},
             {"compute_capability", cc_string(e.cc_major, e.cc_minor)},
             {"multiprocessors", e.multiprocessors},
             {"sm_clock_khz", e.sm_clock_khz},
             {"memory_clock_khz", e.memory_clock_khz},
             {"driver_version", e.driver_version},
             {"cuda_version", e.cuda_version},
             {"nvrtc_version", e.nvrtc_version},
             {"generator_version", e.generator_version}}},
           {"entries", std::move(entries)}};
  return doc.dump(2) + "\n";
}

TuningDb tuning_db_from_json(std::string_view text, std::string_view source,
                             std::vector<std::string>* invalid_specs) {
  const Checker c{std::string(source)};
  json doc;
  // A key given twice in one object is refused (the parser would keep the last value without a word), with the
  // path of the second: each open object's keys and each open container's current child, as the parser goes.
  struct Open {
    bool array = false;
    std::size_t index = 0;  // an array's current element
    std::string key;        // an object's current key
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  const auto element_done = [&] {
    if (!open.empty() && open.back().array) ++open.back().index;
  };
  const json::parser_callback_t no_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start: open.push_back(Open{}); break;
      case json::parse_event_t::array_start:
        open.push_back(Open{});
        open.back().array = true;
        break;
      case json::parse_event_t::key: {
        Open& o = open.back();
        o.key = parsed.get<std::string>();
        if (!o.keys.insert(o.key).second) {
          std::string path;
          for (const Open& f : open) path += "/" + (f.array ? std::to_string(f.index) : f.key);
          c.fail(path, fmt::format("duplicate key '{}'", o.key));
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        open.pop_back();
        element_done();
        break;
      case json::parse_event_t::value: element_done(); break;
    }
    return true;
  };
  try {
    doc = json::parse(text.begin(), text.end(), no_duplicates);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number past a double (1e400)
    c.fail("", fmt::format("malformed JSON: {}", e.what()));
  }
  c.object(doc, "");
  const std::string schema = c.str(c.field(doc, "", "schema"), "/schema");
  if (schema != kSchema) c.fail("/schema", fmt::format("schema is '{}', expected '{}'", schema, kSchema));
  const auto version = c.integer(c.field(doc, "", "version"), "/version", 0);
  if (version != kVersion) c.fail("/version", fmt::format("unsupported version {} (this build reads {})", version, kVersion));
  c.only_keys(doc, "", {"schema", "version", "environment", "entries"});

  TuningDb db;
  if (auto it = doc.find("environment"); it != doc.end()) {
    const json& env = c.object(*it, "/environment");
    c.only_keys(env, "/environment", {"gpu_name", "compute_capability", "multiprocessors", "sm_clock_khz",
                                      "memory_clock_khz", "driver_version", "cuda_version", "nvrtc_version",
                                      "generator_version"});
    TuningEnvironment& e = db.environment;
    auto opt_str = [&](const char* k, std::string& out) {
      if (env.contains(k)) out = c.str(env[k], std::string("/environment/") + k);
    };
    auto opt_int = [&](const char* k, int& out) {
      if (env.contains(k)) out = int(c.integer(env[k], std::string("/environment/") + k, 0));
    };
    opt_str("gpu_name", e.gpu_name);
    if (env.contains("compute_capability") && env["compute_capability"] != "0.0")
      std::tie(e.cc_major, e.cc_minor) = c.cc(env["compute_capability"], "/environment/compute_capability");
    opt_int("multiprocessors", e.multiprocessors);
    opt_int("sm_clock_khz", e.sm_clock_khz);
    opt_int("memory_clock_khz", e.memory_clock_khz);
    opt_str("driver_version", e.driver_version);
    opt_str("cuda_version", e.cuda_version);
    opt_str("nvrtc_version", e.nvrtc_version);
    opt_str("generator_version", e.generator_version);
  }
  const json& entries = c.field(doc, "", "entries");
  if (!entries.is_array()) c.fail("/entries", fmt::format("expected an array, got {}", entries.type_name()));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string p = fmt::format("/entries/{}", i);
    const json& en = c.object(entries[i], p);
    c.only_keys(en, p, {"gpu_name", "multiprocessors", "compute_capability", "dtype", "vocab", "d_model", "bucket",
                        "samples", "configs"});
    TuningKey key;
    key.device.name = c.str(c.field(en, p, "gpu_name"), p + "/gpu_name");
    if (key.device.name.empty()) c.fail(p + "/gpu_name", "must not be empty");
    key.device.multiprocessors = int(c.integer(c.field(en, p, "multiprocessors"), p + "/multiprocessors", 1));
    std::tie(key.device.cc_major, key.device.cc_minor) =
        c.cc(c.field(en, p, "compute_capability"), p + "/compute_capability");
    const std::string dtype = c.str(c.field(en, p, "dtype"), p + "/dtype");
    key.dtype = c.wrap(p + "/dtype", [&] { return parse_dtype(dtype); });
    key.vocab = c.integer(c.field(en, p, "vocab"), p + "/vocab", 1, std::numeric_limits<std::int64_t>::max());
    key.d_model = c.integer(c.field(en, p, "d_model"), p + "/d_model", 1, std::numeric_limits<std::int64_t>::max());
    const std::string bucket = c.str(c.field(en, p, "bucket"), p + "/bucket");
    const bool retired = bucket == kRetiredBucketLabel;
    if (!retired) key.bucket = c.wrap(p + "/bucket", [&] { return parse_batch_bucket(bucket); });
    if (auto it = en.find("samples"); it != en.end()) {
      const std::string samples = c.str(*it, p + "/samples");
      key.samples_bucket = c.wrap(p + "/samples", [&] { return parse_sample_bucket(samples); });
    }
    const json& configs = c.field(en, p, "configs");
    if (!configs.is_array()) c.fail(p + "/configs", fmt::format("expected an array, got {}", configs.type_name()));
    for (std::size_t j = 0; j < configs.size(); ++j) {
      const std::string cp = fmt::format("{}/configs/{}", p, j);
      const json& cfg = c.object(configs[j], cp);
      c.only_keys(cfg, cp, {"spec", "params", "median_us", "floor_us", "timestamp", "method"});
      Measurement m;
      std::string invalid;
      const KernelSpec spec = check_spec(c, cfg, cp, key.dtype, invalid_specs ? &invalid : nullptr);
      m.median_us = c.number(c.field(cfg, cp, "median_us"), cp + "/median_us");
      if (cfg.contains("floor_us")) m.floor_us = c.number(cfg["floor_us"], cp + "/floor_us");
      if (cfg.contains("timestamp")) m.timestamp = c.str(cfg["timestamp"], cp + "/timestamp");
      if (cfg.contains("method")) {
        const std::string method = c.str(cfg["method"], cp + "/method");
        m.method = c.wrap(cp + "/method", [&] { return parse_timing_method(method); });
      }
      if (retired) continue;  // checked, then dropped (see the header comment)
      if (!invalid.empty()) invalid_specs->push_back(std::move(invalid));  // kept: the lookup skips it
      m.spec = spec.to_string();
      db.record(key, m);
    }
  }
  return db;
}

}  // namespace fusedsample
