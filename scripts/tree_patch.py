"""tree_patch.py: what the trace-build scripts (phase_trace.py, rounds_trace.py,
timeline_trace.py) share: exact-match edits of the working tree, and the
runtime hook that calls a LoadedModule method after every fused launch, with
the driver call it needs to read a kernel's __device__ buffer. Test builds
only; `git checkout templates runtime` reverts them."""
import pathlib, sys

root = pathlib.Path(__file__).resolve().parent.parent


def edit(tool, path, pairs):
    """Replaces each `old` of `pairs` (which must occur exactly once) in root/path."""
    p = root / path
    s = p.read_text()
    for old, new in pairs:
        if s.count(old) != 1:
            sys.exit(f"{tool}: {path}: expected one match of:\n{old}")
        s = s.replace(old, new)
    p.write_text(s)


def read_device_buffer(name, count):
    """The C++ lines (in a LoadedModule method) that copy the module's
    __device__ unsigned long long name[count] into a host array h after the
    launches so far, or return when the module has no such buffer."""
    return f"""  const auto* cu = driver::try_api(nullptr);
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  if (!cu || cu->cuModuleGetGlobal(&ptr, &bytes, module_, "{name}") != CUDA_SUCCESS || bytes != {count} * 8) return;
  unsigned long long h[{count}];
  cu->cuCtxSynchronize();
"""


def add_launch_hook(tool, method, body):
    """Declares `void LoadedModule::<method>() const` (body: its C++ body) and
    calls it after every fused launch; a per-module launch counter
    (launches_) and cuModuleGetGlobal come with it."""
    edit(tool, "runtime/cuda_driver.hpp", [("  X(cuModuleGetFunction)            \\\n",
                                            "  X(cuModuleGetFunction)            \\\n  X(cuModuleGetGlobal)              \\\n")])
    edit(tool, "runtime/loaded_module.hpp",
         [("  int fused_local_bytes() const;\n", f"  int fused_local_bytes() const;\n  void {method}() const;\n"),
          ("  int resident_blocks_ = 0;\n", "  int resident_blocks_ = 0;\n  mutable int launches_ = 0;\n")])
    edit(tool, "runtime/loaded_module.cpp", [("int LoadedModule::fused_registers() const {",
                                              f"void LoadedModule::{method}() const {{\n{body}}}\n\n"
                                              "int LoadedModule::fused_registers() const {")])
    edit(tool, "runtime/sampler.cpp", [("""unsigned(spec.shared_bytes()), reinterpret_cast<CUstream>(stream), args, nullptr));
  }""", f"""unsigned(spec.shared_bytes()), reinterpret_cast<CUstream>(stream), args, nullptr));
    m.{method}();
  }}""")])


def add_eighth_launch_hook(tool, method, name, count, reset, report):
    """add_launch_hook with the body the trace builds share: before the 8th
    launch of a loaded module, the module's __device__ unsigned long long
    name[count] is set to `reset` (a C++ expression of the index i); after
    it, the buffer is copied into h[count] and `report` (C++ lines that
    print from h) runs. Earlier and later launches do nothing."""
    add_launch_hook(tool, method, "  ++launches_;\n  if (launches_ != 7 && launches_ != 8) return;\n" +
                    read_device_buffer(name, count) +
                    f"""  if (launches_ == 7) {{  // reset before the 8th launch
    for (int i = 0; i < {count}; ++i) h[i] = {reset};
    cu->cuMemcpyHtoD(ptr, h, bytes);
    return;
  }}
  cu->cuMemcpyDtoH(h, ptr, bytes);
""" + report)

