// spec_args.hpp: command-line flags -> dtype, arch and KernelSpec. The
// library's own parsers and KernelSpec::validate() decide what is valid; their
// messages come back as UsageError (exit code 2) naming the flag.
#pragma once
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "tools/cli_args.hpp"

namespace fusedsample::cli {

DType dtype_arg(const Args& args, DType fallback);  // --dtype
Arch arch_arg(const Args& args, Arch fallback);     // --arch
// --spec TEXT (KernelSpec::parse), validated.
KernelSpec spec_text_arg(const Args& args);

// --NAME "spec;spec": each KernelSpec::parse()d and validated; empty when the
// flag is absent. UsageError names the flag and the bad spec.
std::vector<KernelSpec> spec_list_arg(const Args& args, const char* name);

// Adds --dtype --arch --variant --tile-v --tile-n --tile-d --stages --warps
// --rows --spec.
void add_spec_options(ArgParser& parser);
// The spec those options select: --spec if given, else default_spec(dtype,
// arch, --rows); then every tile/variant flag given overrides its field.
// Validated; throws UsageError.
KernelSpec spec_from_args(const Args& args);

}  // namespace fusedsample::cli
