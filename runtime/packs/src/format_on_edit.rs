//! `format-on-edit`: the file a call wrote formatted by the program its
//! extension names (docs/packs/format-on-edit.md).

use hookrt_pack_rules::format_on_edit::{Settings, program_of};

use crate::Pack;
use crate::settings::{SettingsError, exec_grant, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "format-on-edit",
    summary: "Formats each file the agent wrote or edited with the formatter its extension names (rustfmt, prettier, ruff, gofmt, ...), run under the exec grant",
    required: "formatters = { rs = [\"rustfmt\", \"{file}\"] }\n",
    example: r#"# more formatters go in the table above, e.g. ts: ["prettier", "--write", "{file}"], py: ["ruff", "format", "{file}"]
# timeout_ms = 15000  # one run
# env = ["PATH"]      # host variables the formatter gets
# read = []           # folders outside the project it may read (a toolchain outside /usr)
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Settings, _) = typed(settings)?;
    typed.check()?;
    let mut programs = toml::Table::new();
    for (ext, command) in &typed.formatters {
        let mut program = toml::Table::new();
        program.insert("path".into(), command[0].clone().into());
        program.insert("args".into(), command[1..].to_vec().into());
        let mut placeholders = toml::Table::new();
        // The one file it may write: the file the agent wrote.
        placeholders.insert("file".into(), "writable-path".into());
        program.insert("placeholders".into(), placeholders.into());
        programs.insert(program_of(ext), program.into());
    }
    let mut exec = toml::Table::new();
    exec.insert("timeout_ms".into(), to_int(typed.timeout_ms).into());
    exec.insert("env".into(), typed.env.clone().into());
    exec.insert("read".into(), typed.read.clone().into());
    exec.insert("programs".into(), programs.into());
    let mut table = hook_table(PACK.name, PACK.summary, config);
    table.insert("grants".into(), exec_grant(exec).into());
    table.insert(
        "deadline_ms".into(),
        to_int(typed.timeout_ms + 5_000).into(),
    );
    Ok(table)
}

/// A checked count as TOML's integer.
fn to_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_formatter_is_a_program_of_the_exec_grant() {
        let table = PACK
            .expand(&toml::from_str(PACK.required).unwrap())
            .expect("the required line");
        let exec = &table["grants"]["exec"];
        assert_eq!(
            exec["programs"]["format-rs"]["path"].as_str(),
            Some("rustfmt")
        );
        assert_eq!(
            exec["programs"]["format-rs"]["placeholders"]["file"].as_str(),
            Some("writable-path")
        );
        assert_eq!(table["deadline_ms"].as_integer(), Some(20_000));
        let e = PACK.expand(&toml::Table::new()).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("formatters"), "{e}");
    }
}
