//! `tests-at-stop`: the project's tests when the agent wants to stop, the
//! turn kept going while they fail (docs/packs/tests-at-stop.md).

use hookrt_pack_rules::tests_at_stop::{PROGRAM, Settings};

use crate::Pack;
use crate::settings::{SettingsError, exec_grant, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "tests-at-stop",
    summary: "Runs the project's tests when the agent wants to end its turn, and keeps the turn going with what failed until they pass (as far as the loop governor allows)",
    required: "command = [\"cargo\", \"test\"]\n",
    example: r#"# timeout_ms = 110000  # the tests' run; the whole process group is killed at it
# processes = 64       # processes the run may have at once
# env = ["PATH"]       # host variables the tests get
# read = []            # folders outside the project they may read
# tmp = true           # a private TMPDIR for the run
# shown_bytes = 2000   # the end of their output the model is shown
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    typed.check()?;
    let mut program = toml::Table::new();
    program.insert("path".into(), typed.command[0].clone().into());
    program.insert("args".into(), typed.command[1..].to_vec().into());
    let mut programs = toml::Table::new();
    programs.insert(PROGRAM.into(), program.into());
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut exec = toml::Table::new();
    exec.insert("timeout_ms".into(), int(typed.timeout_ms).into());
    exec.insert("processes".into(), int(typed.processes).into());
    exec.insert("env".into(), typed.env.clone().into());
    exec.insert("read".into(), typed.read.clone().into());
    if typed.tmp {
        exec.insert("tmp".into(), true.into());
    }
    exec.insert("programs".into(), programs.into());
    let mut table = hook_table(PACK.name, PACK.summary, config);
    table.insert("grants".into(), exec_grant(exec).into());
    table.insert("deadline_ms".into(), int(typed.timeout_ms + 10_000).into());
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_the_one_program_of_the_exec_grant() {
        let table = PACK
            .expand(&toml::from_str(PACK.required).unwrap())
            .expect("the required line");
        let exec = &table["grants"]["exec"];
        assert_eq!(exec["programs"]["tests"]["path"].as_str(), Some("cargo"));
        assert_eq!(exec["tmp"].as_bool(), Some(true));
        assert_eq!(table["deadline_ms"].as_integer(), Some(120_000));
        assert_eq!(
            PACK.expand(&toml::Table::new()).unwrap_err().key.as_deref(),
            Some("command")
        );
    }
}
