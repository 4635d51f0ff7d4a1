//! The one way pinprobe opens a file it was pointed at (a wheel, an image tarball, an OCI layout
//! blob or `index.json`, an ignore file, a rules directory file, a fingerprint index, a Docker
//! config, a CMake file): the path must name a regular file (a FIFO would block the open or the
//! read forever, `/dev/zero` never ends), it is opened without blocking (`O_NONBLOCK`, so a file
//! swapped for a FIFO between the check and the open cannot hang it) and checked again on the
//! open handle, and whole-file reads stop at a size bound.
//!
//! `/dev/null` is the one exception: it reads as an empty file (`--ignore /dev/null`).
//!
//! Errors are [`std::io::Error`]s whose text names the cause ("not a regular file (a FIFO)",
//! "larger than N bytes"), so every caller keeps its own error type and prefixes the path.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::path::Path;

/// Small text inputs (ignore files, rule files, Docker configs) are read up to this size.
pub const MAX_TEXT: u64 = 16 << 20;

/// Open `path` for reading; it (after following links) must be a regular file.
pub fn open_file(path: &Path) -> io::Result<File> {
    regular(&std::fs::metadata(path)?)?;
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    // The path may have been swapped between the look and the open: check what was opened.
    regular(&file.metadata()?)?;
    Ok(file)
}

/// Read the whole regular file at `path`, refusing one larger than `cap` bytes (also one that
/// grows past it while being read).
pub fn read_file(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_file(path)?;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(too_large(cap));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(cap));
    }
    Ok(bytes)
}

/// [`read_file`] as UTF-8 text.
pub fn read_text(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read_file(path, cap)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// Check that `path` (after following links) is a directory.
pub fn check_dir(path: &Path) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a directory ({})", kind(&meta)),
        ))
    }
}

fn regular(meta: &Metadata) -> io::Result<()> {
    if meta.is_file() || is_dev_null(meta) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", kind(meta)),
        ))
    }
}

/// `/dev/null` reads as an empty file (`--ignore /dev/null` is how one says "no policy").
fn is_dev_null(meta: &Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        meta.file_type().is_char_device()
            && std::fs::metadata("/dev/null").is_ok_and(|null| null.rdev() == meta.rdev())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

fn too_large(cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("larger than {cap} bytes"),
    )
}

/// What a file that is not regular is, in words.
fn kind(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    if t.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn refuses_fifos_devices_and_directories_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let start = Instant::now();
        let e = read_file(&fifo, 10).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a FIFO)");
        let e = read_file(Path::new("/dev/zero"), 10).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a character device)");
        let e = open_file(tmp.path()).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
        let e = check_dir(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "not a directory (a FIFO)");
        assert!(start.elapsed() < Duration::from_secs(5));
        // A link to /dev/zero is followed and refused.
        let link = tmp.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read_file(&link, 10).is_err());
        // /dev/null is the one device allowed: it reads as an empty file.
        assert_eq!(read_file(Path::new("/dev/null"), 10).unwrap(), b"");
    }

    #[test]
    fn reads_regular_files_up_to_the_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_file(&path, 10).unwrap(), b"0123456789");
        let e = read_file(&path, 9).unwrap_err();
        assert_eq!(e.to_string(), "larger than 9 bytes");
        std::fs::write(&path, b"\xff").unwrap();
        assert!(read_text(&path, 10).is_err());
        check_dir(tmp.path()).unwrap();
    }
}
