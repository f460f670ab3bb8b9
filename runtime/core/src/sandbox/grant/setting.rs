//! What every grant table reads alike: its TOML read into the table's raw
//! form, and a number setting kept within its bounds.

/// `value` read as a grant table's raw form `T`; the problem TOML names
/// (an unknown key, a wrong type) when it does not fit.
pub(crate) fn raw<T: serde::de::DeserializeOwned>(value: &toml::Value) -> Result<T, Vec<String>> {
    value
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| vec![e.message().to_owned()])
}

/// The setting `key`: `value` when it lies in `1..=max`, the `default` when
/// it is not set; outside the bounds, the default and a problem saying
/// them.
pub(crate) fn bounded(
    problems: &mut Vec<String>,
    key: &str,
    value: Option<u64>,
    default: u64,
    max: u64,
) -> u64 {
    match value {
        None => default,
        Some(v) if (1..=max).contains(&v) => v,
        Some(v) => {
            problems.push(format!("{key} = {v}: set it between 1 and {max}"));
            default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_outside_its_bounds_is_a_problem_naming_them() {
        let mut problems = Vec::new();
        assert_eq!(bounded(&mut problems, "k", None, 5, 10), 5);
        assert_eq!(bounded(&mut problems, "k", Some(10), 5, 10), 10);
        assert!(problems.is_empty());
        assert_eq!(bounded(&mut problems, "k", Some(0), 5, 10), 5);
        assert_eq!(bounded(&mut problems, "k", Some(11), 5, 10), 5);
        assert_eq!(
            problems,
            [
                "k = 0: set it between 1 and 10",
                "k = 11: set it between 1 and 10"
            ]
        );
    }
}
