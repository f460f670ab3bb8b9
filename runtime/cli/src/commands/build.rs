//! `hookrt build DIR [--out OUT]`: each hook's component digest, and a
//! prebuilt folder with `--out`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use crate::loading::Loading;

/// Arguments of `hookrt build`.
#[derive(clap::Args)]
pub(crate) struct BuildArgs {
    /// The agent folder.
    pub dir: PathBuf,
    /// Also write a prebuilt agent folder here: every component as
    /// OUT/hooks/<slug>.wasm (OUT/subagents/<id>/hooks/<slug>.wasm) and
    /// a copy of hookrt.toml, to run with --prebuilt.
    #[arg(long, value_name = "OUT")]
    pub out: Option<PathBuf>,
}

impl BuildArgs {
    pub(crate) fn execute(self, loading: Loading) -> Result<ExitCode> {
        loading.loaded(&self.dir, |rt| {
            for h in rt.hooks() {
                println!("{:<32} {}", h.id(), h.component_sha256);
            }
            if let Some(out) = &self.out {
                crate::export::write_prebuilt(&rt, out)?;
                eprintln!(
                    "wrote a prebuilt agent folder to {} (run it with --prebuilt)",
                    out.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        })
    }
}
