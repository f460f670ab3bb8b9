// Ported from diet103-stop-build-check: github.com/diet103/claude-code-infrastructure-showcase@a5818cb .claude/hooks/post-tool-use-tracker.sh, stop-build-check-enhanced.sh, tsc-check.sh
//! Tracks the TypeScript files Claude Code edits in a session
//! (`PostToolUse`), then at `Stop` type-checks each edited sub-project (the
//! nearest folder above an edited file holding a `tsconfig.json`) with the
//! pinned `tsc`, and keeps the turn going with the errors until they are
//! fixed, as the original does by exiting 2 from its Stop hook. The
//! original keeps its tracking in a cache folder; here it is `state`, per
//! session. tsc runs through the `exec` grant (`--noEmit -p {tsconfig}`,
//! `{tsconfig}` a read-only `path`: the host refuses a missing one before
//! anything runs, which is how the nearest is found). The loop governor
//! (`[governor] max_continues`) still caps how often a turn is kept going.

use hookrt_sdk::prelude::*;

/// At most this many errors are quoted to the model (the original says "use
/// the error-resolver agent" past five; the count is given either way).
const QUOTED_ERRORS: usize = 10;

#[derive(Default)]
pub struct StopBuildCheck;

fn key(event: &Event) -> String {
    format!("edited/{}", event.coordinates().session)
}

/// The `tsconfig.json` nearest above `file`, inside the project, and what
/// tsc said of it; `None` when there is none.
fn check(file: &str) -> HookResult<Option<(String, exec::Output)>> {
    let mut dir = std::path::Path::new(file).parent();
    while let Some(d) = dir {
        let tsconfig = format!("{}/tsconfig.json", d.display());
        match exec::run("tsc", &[("tsconfig", &tsconfig)]) {
            Ok(ran) => return Ok(Some((tsconfig, ran))),
            Err(e) if e.to_string().contains("does not exist in the project") => {
                dir = d.parent();
            }
            Err(e) if e.to_string().contains("outside the project") => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

#[hookrt_sdk::hook]
impl Hook for StopBuildCheck {
    type Config = NoConfig;

    fn action_result(&mut self, data: ActionResult, event: &Event, _cx: &Context) -> HookResult {
        let Some(path) = data
            .output
            .as_ref()
            .and_then(|o| o.get("filePath"))
            .and_then(|p| p.as_str())
            .filter(|p| p.ends_with(".ts") || p.ends_with(".tsx"))
        else {
            return Ok(());
        };
        let mut edited: Vec<String> = state::get_json(&key(event))?.unwrap_or_default();
        if !edited.iter().any(|e| e == path) {
            edited.push(path.to_owned());
            state::set_json(&key(event), &edited)?;
        }
        Ok(())
    }

    fn turn_stopping(&mut self, _data: TurnStopping, event: &Event, _cx: &Context) -> HookResult<Continuation> {
        let edited: Vec<String> = state::get_json(&key(event))?.unwrap_or_default();
        let mut checked: Vec<String> = Vec::new();
        let mut report = Vec::new();
        for file in &edited {
            let Some((tsconfig, ran)) = check(file)? else {
                continue;
            };
            if checked.contains(&tsconfig) {
                continue;
            }
            checked.push(tsconfig.clone());
            if ran.success() {
                continue;
            }
            let out = String::from_utf8_lossy(&ran.stdout);
            let errors: Vec<&str> = out.lines().filter(|l| l.contains("error TS")).collect();
            report.push(format!(
                "{tsconfig}: {} TypeScript error(s)\n{}",
                errors.len(),
                errors[..errors.len().min(QUOTED_ERRORS)].join("\n")
            ));
        }
        if report.is_empty() {
            state::delete(&key(event));
            return Ok(Continuation::Stop);
        }
        Ok(Continuation::continue_turn(format!(
            "TypeScript errors were found in the code you edited; fix them before you stop:\n{}",
            report.join("\n")
        )))
    }
}
