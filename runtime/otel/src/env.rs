//! What the standard `OTEL_*` environment asks of hookrt: whether spans are
//! exported at all, and under which service name.
//!
//! Telemetry is off unless the environment says otherwise:
//! `OTEL_TRACES_EXPORTER` naming `otlp`, or an OTLP endpoint
//! (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
//! `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it off
//! whatever else is set. The endpoint, headers, timeout and batching are read
//! by the exporter and the SDK themselves (`OTEL_EXPORTER_OTLP_*`, `OTEL_BSP_*`).

use crate::error::TelemetryError;

/// The service name when `OTEL_SERVICE_NAME` is not set.
pub(crate) const DEFAULT_SERVICE_NAME: &str = "hookrt";

/// What the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// The resource's `service.name`.
    pub service_name: String,
}

/// Reads the settings through `var` (the process environment, or a test's
/// map): `None` when telemetry stays off.
pub(crate) fn settings(
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<Settings>, TelemetryError> {
    let set = |name: &str| {
        var(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(None);
    }
    let exporters = set("OTEL_TRACES_EXPORTER");
    let endpoint =
        set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    let on = match &exporters {
        Some(list) => {
            let names: Vec<&str> = list.split(',').map(str::trim).collect();
            if names.iter().any(|n| n.eq_ignore_ascii_case("none")) {
                return Ok(None);
            }
            if !names.iter().any(|n| n.eq_ignore_ascii_case("otlp")) {
                tracing::warn!(target: "hookrt", "OTEL_TRACES_EXPORTER={list}: hookrt exports only `otlp`; no spans are exported");
                return Ok(None);
            }
            true
        }
        None => endpoint.is_some(),
    };
    if !on {
        return Ok(None);
    }
    let protocol =
        set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(p) = protocol
        && p != "http/protobuf"
    {
        return Err(TelemetryError::Unsupported {
            name: "OTEL_EXPORTER_OTLP_PROTOCOL",
            value: p,
            why: "hookrt exports OTLP over HTTP with protobuf bodies only: set it to `http/protobuf` (or leave it out) and point the endpoint at the collector's HTTP port (4318)",
        });
    }
    if let Some(url) = endpoint
        && url.to_ascii_lowercase().starts_with("https:")
    {
        return Err(TelemetryError::Unsupported {
            name: "OTEL_EXPORTER_OTLP_ENDPOINT",
            value: url,
            why: "hookrt's exporter has no TLS: send to a collector on `http://` (a local agent or sidecar), which forwards over TLS",
        });
    }
    let service_name = set("OTEL_SERVICE_NAME").unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned());
    Ok(Some(Settings { service_name }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Option<Settings>, TelemetryError> {
        settings(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn off_unless_the_environment_asks() {
        assert_eq!(with(&[]).unwrap(), None);
        assert_eq!(with(&[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
        let on = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]).unwrap();
        assert_eq!(on.unwrap().service_name, "hookrt");
        let on = with(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_SERVICE_NAME", "gate"),
        ])
        .unwrap();
        assert_eq!(on.unwrap().service_name, "gate");
        assert!(
            with(&[(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://h:4318/v1/traces"
            )])
            .unwrap()
            .is_some()
        );
    }

    #[test]
    fn disabled_and_none_win() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        assert_eq!(
            with(&[endpoint, ("OTEL_SDK_DISABLED", "TRUE")]).unwrap(),
            None
        );
        assert_eq!(
            with(&[endpoint, ("OTEL_TRACES_EXPORTER", "none")]).unwrap(),
            None
        );
        assert_eq!(
            with(&[endpoint, ("OTEL_TRACES_EXPORTER", "zipkin")]).unwrap(),
            None
        );
    }

    #[test]
    fn grpc_and_tls_are_refused_with_a_fix() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317");
        let e = with(&[endpoint, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(e.to_string().contains("http/protobuf"), "{e}");
        let e = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318")]).unwrap_err();
        assert!(e.to_string().contains("TLS"), "{e}");
    }
}
