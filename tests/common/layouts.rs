//! Synthetic repository layouts of engines and deployments that pin kernels, written for these
//! tests in pinprobe's own words (no file of any project is copied): where each keeps its kernel
//! pins and in which form. SGLang builds its kernels in a CMake project below the root and
//! fetches them by archive URL; PyTorch and FlashInfer carry kernels as git submodules;
//! TensorRT-LLM reads its third-party pins from a JSON manifest in CMake; a deployment repository
//! pins `vllm` in requirements, a lock file and a Dockerfile.
//!
//! Commits: vLLM 0.30.0's FlashAttention pin and Dao-AILab's #2448 are real (facts from
//! rules/); every other SHA here is a synthetic value that names no published commit.

use super::{commit, git, init, write};
use std::path::Path;

/// vLLM 0.30.0's FlashAttention pin (rules/PINPROBE-2026-0001.yaml).
pub const FA_VLLM_0_30: &str = "506341a143fcabd4bb79052a7605ada727d6b3f5";
/// Dao-AILab/flash-attention #2448, which introduced PINPROBE-2026-0010.
pub const FA_UPSTREAM_2448: &str = "b322ae2675065ad96ad3c248fd6ef0f32252808f";
/// Synthetic commits (no published commit has them).
pub const SYNTH_CUTLASS: &str = "c0ffee0000000000000000000000000000000001";
pub const SYNTH_ATTN: &str = "c0ffee0000000000000000000000000000000002";
pub const SYNTH_FLASHINFER: &str = "c0ffee0000000000000000000000000000000003";
pub const SYNTH_SPDLOG: &str = "c0ffee0000000000000000000000000000000004";
pub const SYNTH_CK: &str = "c0ffee0000000000000000000000000000000005";

const HASH: &str = "SHA256=1111111111111111111111111111111111111111111111111111111111111111";

/// Record a gitlink at `path` (nothing checked out there) in the index of the repository `dir`.
pub fn gitlink(dir: &Path, path: &str, sha: &str) {
    let entry = format!("160000,{sha},{path}");
    git(dir, &["update-index", "--add", "--cacheinfo", &entry]);
}

/// An engine whose kernels build in `sgl-kernel/`, a CMake project of its own below the root:
/// CUTLASS by `GIT_TAG`, FlashInfer and the FlashAttention fork by archive `URL` + `URL_HASH`
/// under `repo-*` names; the Python package pins the kernel package and FlashInfer.
pub fn sglang(root: &Path, attn: &str) {
    init(root);
    write(
        root,
        "python/pyproject.toml",
        "[project]\nname = \"engine\"\nversion = \"0.1.0\"\ndependencies = [\n  \"sgl-kernel==0.3.9\",\n  \"flashinfer-python==0.6.7\",\n]\n",
    );
    write(
        root,
        "sgl-kernel/CMakeLists.txt",
        &format!(
            "cmake_minimum_required(VERSION 3.26)\nproject(sgl-kernel LANGUAGES CXX)\ninclude(FetchContent)\n\
             FetchContent_Declare(\n  repo-cutlass\n  GIT_REPOSITORY https://github.com/NVIDIA/cutlass\n  GIT_TAG {SYNTH_CUTLASS}\n  GIT_SHALLOW OFF\n)\nFetchContent_Populate(repo-cutlass)\n\
             FetchContent_Declare(\n  repo-flashinfer\n  URL https://github.com/flashinfer-ai/flashinfer/archive/{SYNTH_FLASHINFER}.tar.gz\n  URL_HASH {HASH}\n)\nFetchContent_Populate(repo-flashinfer)\n\
             FetchContent_Declare(\n  repo-flash-attention\n  URL https://github.com/sgl-project/sgl-attn/archive/{attn}.zip\n  URL_HASH {HASH}\n)\nFetchContent_Populate(repo-flash-attention)\n"
        ),
    );
    write(root, "README.md", "an engine; kernels in sgl-kernel/\n");
    commit(root, "engine layout");
}

/// A framework that carries kernels as submodules under `third_party/` (FlashAttention from
/// Dao-AILab at `fa`, CUTLASS, and a kernel library pinprobe has no component for).
pub fn pytorch(root: &Path, fa: &str) {
    init(root);
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.27)\nproject(Framework CXX C)\nadd_subdirectory(aten)\n",
    );
    write(
        root,
        "aten/CMakeLists.txt",
        "set(FA_DIR ${PROJECT_SOURCE_DIR}/third_party/flash-attention)\n",
    );
    write(
        root,
        ".gitmodules",
        "[submodule \"third_party/flash-attention\"]\n\tpath = third_party/flash-attention\n\turl = https://github.com/Dao-AILab/flash-attention.git\n\
         [submodule \"third_party/cutlass\"]\n\tpath = third_party/cutlass\n\turl = https://github.com/NVIDIA/cutlass.git\n\
         [submodule \"third_party/composable_kernel\"]\n\tpath = third_party/composable_kernel\n\turl = https://github.com/ROCm/composable_kernel.git\n",
    );
    git(root, &["add", "-A"]);
    gitlink(root, "third_party/flash-attention", fa);
    gitlink(root, "third_party/cutlass", SYNTH_CUTLASS);
    gitlink(root, "third_party/composable_kernel", SYNTH_CK);
    git(root, &["commit", "-q", "-m", "framework layout"]);
}

/// A kernel library whose own build carries CUTLASS (and a logging library) as submodules
/// under `3rdparty/`, published as `flashinfer-python` and depending on the CuTe DSL package.
pub fn flashinfer(root: &Path) {
    init(root);
    write(
        root,
        "pyproject.toml",
        "[project]\nname = \"flashinfer-python\"\nversion = \"0.6.7\"\ndependencies = [\n  \"nvidia-cutlass-dsl>=4.2\",\n  \"torch\",\n]\n",
    );
    write(
        root,
        ".gitmodules",
        "[submodule \"3rdparty/cutlass\"]\n\tpath = 3rdparty/cutlass\n\turl = https://github.com/NVIDIA/cutlass.git\n\
         [submodule \"3rdparty/spdlog\"]\n\tpath = 3rdparty/spdlog\n\turl = https://github.com/gabime/spdlog.git\n",
    );
    git(root, &["add", "-A"]);
    gitlink(root, "3rdparty/cutlass", SYNTH_CUTLASS);
    gitlink(root, "3rdparty/spdlog", SYNTH_SPDLOG);
    git(root, &["commit", "-q", "-m", "kernel library layout"]);
}

/// An engine that keeps its third-party pins in a JSON manifest which CMake reads with
/// `file(READ)` and `string(JSON)` before declaring each one.
pub fn tensorrt_llm(root: &Path) {
    init(root);
    write(
        root,
        "3rdparty/fetch_content.json",
        &format!(
            "{{\n  \"git_dependencies\": [\n    {{\"name\": \"cutlass\", \"git_repository\": \"https://github.com/NVIDIA/cutlass\", \"git_tag\": \"{SYNTH_CUTLASS}\"}},\n    {{\"name\": \"flash-attention\", \"git_repository\": \"https://github.com/vllm-project/flash-attention\", \"git_tag\": \"{FA_VLLM_0_30}\"}}\n  ]\n}}\n"
        ),
    );
    write(
        root,
        "3rdparty/CMakeLists.txt",
        "include(FetchContent)\nfile(READ ${CMAKE_CURRENT_SOURCE_DIR}/fetch_content.json MANIFEST)\n\
         string(JSON COUNT LENGTH \"${MANIFEST}\" git_dependencies)\nmath(EXPR LAST \"${COUNT} - 1\")\n\
         foreach(I RANGE ${LAST})\n  string(JSON NAME GET \"${MANIFEST}\" git_dependencies ${I} name)\n  string(JSON REPO GET \"${MANIFEST}\" git_dependencies ${I} git_repository)\n  string(JSON TAG GET \"${MANIFEST}\" git_dependencies ${I} git_tag)\n  FetchContent_Declare(${NAME} GIT_REPOSITORY ${REPO} GIT_TAG ${TAG})\n  FetchContent_MakeAvailable(${NAME})\nendforeach()\n",
    );
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.27)\nproject(engine LANGUAGES CXX)\nadd_subdirectory(3rdparty)\n",
    );
    commit(root, "manifest layout");
}

/// A deployment repository: `vllm==version` with hashes in requirements.txt, the same in
/// uv.lock (with FlashInfer), and a Dockerfile that installs it.
pub fn deployment(root: &Path, version: &str) {
    init(root);
    write(
        root,
        "requirements.txt",
        &format!(
            "# pinned for production\nvllm=={version} \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\nflashinfer-python==0.6.7\n"
        ),
    );
    write(
        root,
        "uv.lock",
        &format!(
            "version = 1\nrequires-python = \">=3.10\"\n\n[[package]]\nname = \"vllm\"\nversion = \"{version}\"\nsource = {{ registry = \"https://example.invalid/simple\" }}\n\n[[package]]\nname = \"flashinfer-python\"\nversion = \"0.6.7\"\nsource = {{ registry = \"https://example.invalid/simple\" }}\n"
        ),
    );
    write(
        root,
        "Dockerfile",
        &format!(
            "FROM python:3.12-slim\nARG VLLM_VERSION={version}\nCOPY requirements.txt /srv/\nRUN python3 -m pip install --no-cache-dir \"vllm==${{VLLM_VERSION}}\"\nCMD [\"python3\", \"-m\", \"vllm.entrypoints.openai.api_server\"]\n"
        ),
    );
    commit(root, "deployment layout");
}
