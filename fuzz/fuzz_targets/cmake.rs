//! The CMake evaluation (tokenizer, scopes, conditions, `${}` expansion, fetches, unreached
//! declarations) on fuzzed files: the root `CMakeLists.txt` and up to two `cmake/` modules,
//! split at NUL bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::view::MemView;

fuzz_target!(|data: &[u8]| {
    let mut view = MemView::new("fuzz", pinprobe::model::TargetKind::SourceTree);
    let names = [
        "CMakeLists.txt",
        "cmake/external_projects/vllm_flash_attn.cmake",
        "cmake/utils.cmake",
    ];
    for (name, part) in names.iter().zip(data.splitn(3, |b| *b == 0)) {
        view.insert(*name, part.to_vec());
    }
    let _ = pinprobe::pin::cmake::evaluate(&view);
});
