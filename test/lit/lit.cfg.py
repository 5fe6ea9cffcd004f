# lit configuration for Tessel's compiler tests.
import os
import lit.formats

config.name = "Tessel"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".tsl"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessel_obj_root, "test", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

tools_dir = os.path.join(config.tessel_obj_root, "bin")
config.environment["PATH"] = os.pathsep.join(
    [tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%kernels", os.path.join(config.tessel_src_root, "kernels")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))

# tesselc --cubin runs the CUDA toolkit's ptxas (compiler/Ptxas.cpp finds it the same way).
import shutil
if any(os.access(p, os.X_OK) for p in [os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "ptxas"),
                                       "/usr/local/cuda/bin/ptxas"]) or shutil.which("ptxas"):
    config.available_features.add("ptxas")
