//! `pinprobe scan`: the scanner's command line.

use crate::exit::Exit;
use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _out: &mut dyn Write) -> anyhow::Result<Exit> {
    anyhow::bail!("scan is not built yet")
}
