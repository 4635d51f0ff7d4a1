//! `pinprobe rules`: list, show and lint the rule database.

use crate::exit::Exit;
use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _out: &mut dyn Write) -> anyhow::Result<Exit> {
    anyhow::bail!("rules is not built yet")
}
