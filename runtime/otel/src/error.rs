//! What can go wrong setting telemetry up or shutting it down.

/// Why telemetry could not start or stop.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An `OTEL_*` variable asks for something hookrt does not do.
    #[error("{name}={value}: {why}")]
    Unsupported {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What hookrt does instead.
        why: &'static str,
    },
    /// The OTLP exporter could not be built.
    #[error("cannot build the OTLP span exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// The tracer provider did not flush and stop cleanly.
    #[error("cannot flush the spans at shutdown: {0}")]
    Shutdown(#[from] opentelemetry_sdk::error::OTelSdkError),
}
