//! A small JSON Schema checker for the subset docs/openapi.json uses
//! (`$ref`, `type`, `enum`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `oneOf`, `maxLength`,
//! `pattern`): a keyword it does not know fails the test that meets it.

use serde_json::Value;

use crate::common;

/// docs/openapi.json, parsed.
pub(crate) fn document() -> Value {
    let text = std::fs::read_to_string(common::repo().join("docs/openapi.json"))
        .expect("docs/openapi.json");
    serde_json::from_str(&text).expect("docs/openapi.json is JSON")
}

/// Keywords that only describe.
const NOTES: &[&str] = &["description", "title", "example"];

/// Checks `value` against `schema`; the error says where and why.
pub(crate) fn check(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let schema = schema
        .as_object()
        .ok_or(format!("{at}: schema is not an object"))?;
    for key in schema.keys() {
        let known = [
            "$ref",
            "type",
            "enum",
            "required",
            "properties",
            "additionalProperties",
            "items",
            "oneOf",
            "maxLength",
            "pattern",
        ];
        assert!(
            known.contains(&key.as_str()) || NOTES.contains(&key.as_str()),
            "docs/openapi.json uses `{key}` at {at}, which this checker does not know: teach it"
        );
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unsupported $ref {r}"));
        let target = &doc["components"]["schemas"][name];
        assert!(!target.is_null(), "{at}: $ref {r} names no schema");
        return check(doc, target, value, &format!("{at} ({name})"));
    }
    if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
        let errors: Vec<String> = branches
            .iter()
            .filter_map(|b| check(doc, b, value, at).err())
            .collect();
        let matched = branches.len() - errors.len();
        if matched != 1 {
            return Err(format!(
                "{at}: matches {matched} of the oneOf branches, not one: {errors:?}"
            ));
        }
    }
    if let Some(ty) = schema.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => panic!("{at}: bad type"),
        };
        let fits = |t: &str| match t {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            other => panic!("{at}: unknown type {other}"),
        };
        if !types.iter().any(|t| fits(t)) {
            return Err(format!("{at}: {value} is not {types:?}"));
        }
    }
    if let (Some(max), Some(text)) = (
        schema.get("maxLength").and_then(Value::as_u64),
        value.as_str(),
    ) && text.chars().count() as u64 > max
    {
        return Err(format!("{at}: longer than {max} characters"));
    }
    if let (Some(pattern), Some(text)) = (
        schema.get("pattern").and_then(Value::as_str),
        value.as_str(),
    ) && !regex::Regex::new(pattern).unwrap().is_match(text)
    {
        return Err(format!("{at}: `{text}` does not match {pattern}"));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        return Err(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(object) = value.as_object() {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap();
            if !object.contains_key(name) {
                return Err(format!("{at}: `{name}` is required, missing in {value}"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, v) in object {
            match properties.and_then(|p| p.get(name)) {
                Some(s) => check(doc, s, v, &format!("{at}.{name}"))?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: `{name}` is not in the document"));
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, v) in array.iter().enumerate() {
            check(doc, items, v, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}
