//! Reading a pack's settings into its rules' type: an unknown key or a
//! value of the wrong type is refused naming the key and the pack's page.

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Settings of a pack that cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The pack's name.
    pub pack: String,
    /// The key at fault, when one is.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
    /// The pack's documentation page.
    pub docs: String,
}

impl SettingsError {
    pub(crate) fn new(key: Option<&str>, message: impl Into<String>) -> SettingsError {
        SettingsError {
            pack: String::new(),
            key: key.map(str::to_owned),
            message: message.into(),
            docs: String::new(),
        }
    }

    /// Names the pack it is about.
    pub(crate) fn of(mut self, pack: &crate::Pack) -> SettingsError {
        self.pack = pack.name.to_owned();
        self.docs = pack.docs();
        self
    }
}

/// A rule's refusal of its settings, naming the key.
impl From<hookrt_pack_rules::Invalid> for SettingsError {
    fn from(e: hookrt_pack_rules::Invalid) -> SettingsError {
        SettingsError::new(Some(&e.key), e.message)
    }
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(f, "[packs.{}] `{key}`: {}", self.pack, self.message),
            None => write!(f, "[packs.{}]: {}", self.pack, self.message),
        }
    }
}

impl std::error::Error for SettingsError {}

/// `settings` read as `T`, and `T` written back as a table (every default
/// filled in: what the component is configured with). A key `T` does not
/// have, or of the wrong type, is named.
pub(crate) fn typed<T: DeserializeOwned + Serialize>(
    settings: &toml::Table,
) -> Result<(T, toml::Table), SettingsError> {
    let value = match T::deserialize(toml::Value::Table(settings.clone())) {
        Ok(v) => v,
        Err(e) => {
            // serde names no key for a value of the wrong type: each key alone
            // finds it (a key alone misses only the required ones).
            let missing = |e: &toml::de::Error| e.to_string().contains("missing field `");
            let key = settings.iter().find_map(|(k, v)| {
                let mut one = toml::Table::new();
                one.insert(k.clone(), v.clone());
                T::deserialize(toml::Value::Table(one))
                    .is_err_and(|e| !missing(&e))
                    .then_some(k.as_str())
            });
            // Else a required setting not written.
            let text = e.to_string();
            let key = key.or_else(|| text.split("missing field `").nth(1)?.split('`').next());
            // toml ends its message with "in `key`" on a line of its own:
            // the key is named already.
            let message = e.to_string().replace('\n', " ");
            let message = match key {
                Some(k) => message
                    .trim()
                    .trim_end_matches(&format!("in `{k}`"))
                    .trim()
                    .to_owned(),
                None => message.trim().to_owned(),
            };
            return Err(SettingsError::new(key, message));
        }
    };
    let table = toml::Table::try_from(&value)
        .map_err(|e| SettingsError::new(None, format!("cannot be written back: {e}")))?;
    Ok((value, table))
}

/// The keys every pack's hook gets besides its `config`: its name and
/// description for `audit`, failing closed when it votes, and a warm
/// instance (a pack keeps nothing between deliveries but what it compiled).
pub(crate) fn hook_table(pack: &str, summary: &str, config: toml::Table) -> toml::Table {
    let mut t = toml::Table::new();
    t.insert("name".into(), format!("{pack} (pack)").into());
    t.insert("description".into(), summary.into());
    t.insert("on_failure".into(), "deny".into());
    t.insert("instance".into(), "reuse".into());
    t.insert("config".into(), config.into());
    t
}

/// The `grants` table of a hook that runs programs: `log` and the `exec`
/// table given (in `hookrt.toml`'s own syntax, checked as any hook's is).
pub(crate) fn exec_grant(exec: toml::Table) -> toml::Table {
    let mut grants = toml::Table::new();
    grants.insert("log".into(), toml::Table::new().into());
    grants.insert("exec".into(), exec.into());
    grants
}
