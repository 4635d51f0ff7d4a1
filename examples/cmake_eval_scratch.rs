fn main() {
    let p = std::env::args().nth(1).expect("path");
    let view = pinprobe::target::DirView::new(std::path::Path::new(&p));
    let t = std::time::Instant::now();
    match pinprobe::pin::cmake::evaluate(&view) {
        Ok(e) => {
            println!(
                "configs {} undecided {:?} unreached {} in {:?}",
                e.configurations.len(),
                e.undecided,
                e.unreached.len(),
                t.elapsed()
            );
            for c in e.configurations.iter().rev().take(1) {
                println!(
                    "default={} failed={:?} assumptions={}",
                    c.default,
                    c.failed,
                    c.assumptions.len()
                );
                for a in c.assumptions.iter().take(40) {
                    println!("   {} -> {}", a.condition, a.outcome);
                }
                for f in &c.fetches {
                    println!(
                        "  {} {:?} {:?} local={:?} bypass={:?}",
                        f.name,
                        f.repository.as_ref().map(|v| &v.text),
                        f.tag.as_ref().map(|v| (&v.text, &v.inputs)),
                        f.local_source.as_ref().map(|v| &v.text),
                        f.bypass
                    );
                }
                for u in &c.unread {
                    println!("  unread {u}");
                }
            }
            for u in &e.unreached {
                println!(
                    "unreached {} {}:{} {:?}",
                    u.name,
                    u.file,
                    u.line,
                    u.git_tag.as_ref().map(|a| &a.value)
                );
            }
        }
        Err(e) => println!("error {e}"),
    }
}
