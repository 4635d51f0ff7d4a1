//! `pinprobe verify`: the GPU verifier's command line.
//!
//! (Stub: lands with the verifier work.)

use crate::exit::Exit;
use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _out: &mut dyn Write) -> anyhow::Result<Exit> {
    anyhow::bail!("verify is not built yet")
}
