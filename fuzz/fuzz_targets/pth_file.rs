//! `.pth` files as `site.addpackage` reads them (`pinprobe::pin::shipped::pth`), then the
//! import-path concerns of a site-packages directory holding the file and a `vllm` package.
//! Invariants: lines come in order, split at every newline Python knows, path entries carry no
//! trailing white space, executed lines start as `site` executes them, and an `import` line is
//! always a concern (never silently clean) unless it is one of the few known harmless ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pinprobe::pin::shipped::env::Env;
use pinprobe::pin::shipped::import_path;
use pinprobe::pin::shipped::pth::{Pth, PthLine};
use pinprobe::view::MemView;

fuzz_target!(|data: &[u8]| {
    let pth = Pth::parse(data);
    let mut last = 0u32;
    for line in &pth.lines {
        let n = match line {
            PthLine::Path { line, path } => {
                assert!(!path.contains(['\n', '\r']), "{path:?}");
                assert!(!path.ends_with(|c: char| c.is_whitespace()), "{path:?}");
                assert!(!path.starts_with('#'), "{path:?}");
                *line
            }
            PthLine::Import { line, code } => {
                let code = code.trim_start_matches('\u{feff}');
                assert!(code.starts_with("import ") || code.starts_with("import\t"));
                *line
            }
        };
        assert!(n > last, "lines in order");
        last = n;
    }
    let newlines = data.iter().filter(|b| matches!(b, b'\n' | b'\r')).count();
    assert!(pth.lines.len() <= newlines + 1);

    let site = "lib/python3.12/site-packages";
    let mut view = MemView::new("fuzz", pinprobe::model::TargetKind::Installed);
    view.insert(format!("{site}/vllm/__init__.py"), Vec::new());
    view.insert(format!("{site}/fuzz.pth"), data.to_vec());
    let env = Env::at(site);
    let concerns = import_path::concerns(&view, &env, "vllm", std::slice::from_ref(&env))
        .expect("a memory view reads");
    let risky = pth
        .imports()
        .any(|(_, code)| !matches!(code.trim(), "import _virtualenv") && !code.contains("SETUPTOOLS_USE_DISTUTILS"));
    if risky || pth.not_utf8 {
        assert!(import_path::evidence(&concerns).is_some(), "{data:?}");
    }
});
