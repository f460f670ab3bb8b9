//! `notify-webhook`: notifications to a webhook with a token from the host
//! (docs/packs/notify.md).

use hookrt_pack_rules::notify::{Webhook, origin};

use crate::Pack;
use crate::settings::{SettingsError, hook_table, typed};

pub(crate) static PACK: Pack = Pack {
    name: "notify-webhook",
    summary: "Sends each notification (the agent needs you, a turn ended) to a webhook such as ntfy, with a token the host puts in and the hook never sees",
    required: "url = \"https://ntfy.sh/my-topic\"\ntoken_env = \"NTFY_TOKEN\"\n",
    example: r#"# on = ["notification", "permission", "stop"]  # when
# header = "Authorization"                     # where the token goes
# prefix = "Bearer "
"#,
    expand,
};

fn expand(settings: &toml::Table) -> Result<toml::Table, SettingsError> {
    let (typed, config): (Webhook, _) = typed(settings)?;
    typed.check()?;
    let mut secret = toml::Table::new();
    if let Some(env) = &typed.token_env {
        secret.insert("env".into(), env.clone().into());
    }
    if let Some(file) = &typed.token_file {
        secret.insert("file".into(), file.clone().into());
    }
    secret.insert("origins".into(), vec![origin(&typed.url)?].into());
    secret.insert("header".into(), typed.header.clone().into());
    secret.insert("prefix".into(), typed.prefix.clone().into());
    let mut secrets = toml::Table::new();
    secrets.insert("webhook".into(), secret.into());
    let mut grant = toml::Table::new();
    grant.insert("secrets".into(), secrets.into());
    let mut grants = toml::Table::new();
    grants.insert("log".into(), toml::Table::new().into());
    grants.insert("secret".into(), grant.into());
    let mut table = hook_table(PACK.name, PACK.summary, config);
    table.insert("grants".into(), grants.into());
    table.insert("deadline_ms".into(), 10_000.into());
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_a_secret_bound_to_the_urls_origin() {
        let table = PACK
            .expand(&toml::from_str(PACK.required).unwrap())
            .expect("the required lines");
        let secret = &table["grants"]["secret"]["secrets"]["webhook"];
        assert_eq!(secret["origins"][0].as_str(), Some("https://ntfy.sh"));
        assert_eq!(secret["env"].as_str(), Some("NTFY_TOKEN"));
        let e = PACK
            .expand(&toml::from_str("url = 'ftp://x/y'\ntoken_env = 'T'").unwrap())
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("url"), "{e}");
        let e = PACK.expand(&toml::Table::new()).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("url"), "{e}");
    }
}
