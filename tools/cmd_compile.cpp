// cmd_compile.cpp: `fusedsample compile` -- render one KernelSpec and show the
// CUDA source, the PTX or facts about the CUBIN. NVRTC only; no GPU needed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <optional>
#include <set>

#include "compiler/file_io.hpp"
#include "fusedsample/compiler.hpp"
#include "fusedsample/disk_cache.hpp"
#include "fusedsample/errors.hpp"
#include "tools/cli_args.hpp"
#include "tools/commands.hpp"
#include "tools/spec_args.hpp"

namespace fusedsample::cli {
namespace {

// The name in `#include "name"`, which may be followed by blanks and a `//`
// comment (templates/wgmma_ops.cuh's include of pipeline.cuh is; until
// session 41 such a line stayed in the expanded output, which nvcc could not
// compile standalone); nullopt for any other line.
std::optional<std::string> quoted_include(const std::string& line) {
  const std::string prefix = "#include \"";
  if (!line.starts_with(prefix)) return std::nullopt;
  const std::size_t close = line.find('"', prefix.size());
  if (close == std::string::npos || close == prefix.size()) return std::nullopt;
  const std::size_t rest = line.find_first_not_of(" \t", close + 1);
  if (rest != std::string::npos && line.compare(rest, 2, "//") != 0) return std::nullopt;
  return line.substr(prefix.size(), close - prefix.size());
}

// The rendered unit with every embedded template it includes pasted in place
// (each once, as #pragma once would), so nvcc can compile it standalone.
std::string expand_includes(const std::string& text, std::set<std::string>& seen) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (const auto name = quoted_include(line)) {
      const EmbeddedFile* file = nullptr;
      for (const auto& f : embedded_templates())
        if (*name == f.name) file = &f;
      if (file) {
        if (seen.insert(*name).second) {
          out += fmt::format("// ---- begin {} ----\n", *name);
          out += expand_includes(std::string(file->data, file->size), seen);
          out += fmt::format("// ---- end {} ----\n", *name);
        }
        continue;
      }
    }
    if (line == "#pragma once") continue;
    out += line + "\n";
  }
  return out;
}

void write_output(const std::optional<std::string>& path, const std::string& data, bool binary) {
  if (!path || *path == "-") {
    if (binary) throw UsageError("--emit cubin writes binary data: give -o FILE");
    fmt::print("{}", data);
    return;
  }
  // The export's writer (a regular file atomically, a FIFO or device with plain writes, every error reported):
  // an ofstream checked before its flush let a failed write of a small output end in exit code 0 (session 48).
  std::string error;
  if (!detail::write_output_file(*path, data, &error)) throw FileError(error);  // the error names the file
}

}  // namespace

int cmd_compile(const std::vector<std::string>& argv) {
  ArgParser parser("fusedsample compile [spec options] [--emit WHAT] [-o FILE]",
                   "Renders the kernels for one KernelSpec from the embedded templates and compiles\n"
                   "them with NVRTC. Works without a GPU.");
  add_spec_options(parser);
  parser
      .option("emit", "WHAT",
              "source: the unit NVRTC compiles; expanded: the same with the templates pasted in; "
              "ptx; cubin-info: sizes, options and cache key; cubin: the binary (needs -o)",
              "cubin-info")
      .option("output", "FILE", "write there instead of stdout", "stdout", 'o')
      .epilog(
          "The spec starts from --spec, or from the library's default for --rows; every\n"
          "other spec flag given replaces that field. An invalid spec exits with code 2.\n\n"
          "examples:\n"
          "  fusedsample compile --emit ptx -o fused.ptx\n"
          "  fusedsample compile --spec \"bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1\" --emit source\n"
          "  fusedsample compile --dtype fp32 --rows 64 --emit cubin-info");
  const Args args = parser.parse(argv);
  if (args.help_requested()) {
    fmt::print("{}", parser.help());
    return kExitOk;
  }
  const std::string emit = args.get_choice("emit", "cubin-info", {"source", "expanded", "ptx", "cubin-info", "cubin"});
  const KernelSpec spec = spec_from_args(args);
  const auto output = args.get_path("output");
  if (emit == "cubin" && (!output || *output == "-")) throw UsageError("--emit cubin writes binary data: give -o FILE");

  const RenderedKernel rendered = render_kernel(spec);
  if (emit == "source") {
    write_output(output, rendered.source, false);
    return kExitOk;
  }
  if (emit == "expanded") {
    std::set<std::string> seen;
    std::string text = fmt::format("// NVRTC options: {}\n", fmt::join(rendered.options, " "));
    text += expand_includes(rendered.source, seen);
    write_output(output, text, false);
    return kExitOk;
  }

  // Through the module cache, as the Sampler compiles (README: `compile` fills
  // it ahead of time; until session 40 it compiled uncached and stored nothing).
  // Its key is of the binary spec (launch settings such as l2pN at their defaults).
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<DiskCache> disk = DiskCache::from_environment();
  bool from_disk = false, stored = false;
  const CompiledKernel k =
      load_or_compile(binary_spec(spec) == spec ? rendered : render_kernel(binary_spec(spec)), disk ? &*disk : nullptr,
                      &from_disk, &stored);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (emit == "ptx") {
    write_output(output, k.ptx + (k.ptx.ends_with('\n') ? "" : "\n"), false);
  } else if (emit == "cubin") {
    write_output(output, std::string(k.cubin.begin(), k.cubin.end()), true);
    fmt::print(stderr, "wrote {} bytes of CUBIN for [{}] to {}\n", k.cubin.size(), spec.to_string(), *output);
  } else {
    std::string info;
    info += fmt::format("spec           {}\n", spec.to_string());
    info += fmt::format("threads        {} per block\n", spec.threads());
    info += fmt::format("shared memory  {} bytes per block (dynamic)\n", spec.shared_bytes());
    for (const char* kernel : {"fs_fused_kernel", "fs_stream_kernel"})
      if (const auto r = kernel_resources(k, kernel))
        info += fmt::format("resources      {}: {} registers, {} bytes stack, {} / {} bytes spilled (stores / loads){}\n",
                            kernel, r->registers, r->stack_bytes, r->spill_store_bytes, r->spill_load_bytes,
                            r->wgmma_serialized ? ", wgmma serialized (ptxas advisory in the NVRTC log)" : "");
    info += fmt::format("NVRTC          {} ({})\n", nvrtc_version(), fmt::join(nvrtc_options(rendered), " "));
    info += fmt::format("generator      {}\n", generator_version());
    info += fmt::format("cubin          {} bytes\n", k.cubin.size());
    info += fmt::format("ptx            {} bytes\n", k.ptx.size());
    info += fmt::format("cache key      {}\n", k.cache_key);
    info += disk ? fmt::format("module cache   {} ({})\n", disk->module_path(k.cache_key).string(),
                               from_disk ? "found there" : stored ? "compiled and stored" : "compiled, not stored")
                 : std::string("module cache   off (no cache directory)\n");
    info += fmt::format("{}   {:.0f} ms\n", from_disk ? "load time   " : "compile time", ms);
    info += k.log.empty() ? std::string("NVRTC log      (empty)\n") : fmt::format("NVRTC log\n{}\n", k.log);
    write_output(output, info, false);
  }
  return kExitOk;
}

}  // namespace fusedsample::cli
