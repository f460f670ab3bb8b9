//! hookrt's events and deliveries as OpenTelemetry spans, exported over
//! OTLP/HTTP (protobuf) when the standard `OTEL_*` environment asks for it
//! (docs/telemetry.md). Off by default.
//!
//! [`init_from_env`] reads the environment and, when telemetry is on, starts
//! a tracer provider with a batch exporter (its own thread, `OTEL_BSP_*`).
//! [`Telemetry::observer`] wraps the service's observer: each delivery
//! becomes a `hookrt.delivery` span, a child of its event's `hookrt.event`
//! span, which joins the agent's trace through the [`TraceParents`] that
//! whatever takes the events fills. [`Telemetry::shutdown`] flushes what is
//! left when the service has ended.
//!
//! Modules, in layer order (`tests/architecture.rs`): `error`, `env` (what
//! the environment asks), `parents` (where each event came from), `spans`
//! (the observer's spans), then this file. This package is apart from the
//! `hookrt` library so that an embedder of the library brings no exporter
//! and no HTTP client.

#![warn(missing_docs)]

mod env;
mod error;
mod parents;
mod spans;

use hookrt::{Observation, Observer};
use opentelemetry_otlp::{Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

pub use error::TelemetryError;
pub use parents::TraceParents;
pub use spans::SCOPE;

/// The span export, started: wrap the service's observer with it, note the
/// events taken in its [`TraceParents`], and shut it down at the end.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    parents: TraceParents,
}

/// Starts the span export when the process environment asks for it
/// (`OTEL_TRACES_EXPORTER=otlp`, or `OTEL_EXPORTER_OTLP_ENDPOINT` /
/// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set; `OTEL_SDK_DISABLED=true` wins);
/// `Ok(None)` when it does not. Call it outside an async runtime: the
/// exporter's HTTP client is a blocking one.
pub fn init_from_env() -> Result<Option<Telemetry>, TelemetryError> {
    let Some(settings) = env::settings(|name| std::env::var(name).ok())? else {
        return Ok(None);
    };
    // The endpoint, headers and timeout come from OTEL_EXPORTER_OTLP_*.
    let exporter = SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()?;
    let resource = Resource::builder()
        .with_service_name(settings.service_name)
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    Ok(Some(Telemetry {
        provider,
        parents: TraceParents::default(),
    }))
}

impl Telemetry {
    /// The registry the observer reads each event's origin from: whatever
    /// takes events notes them there before handing them to the service.
    pub fn parents(&self) -> TraceParents {
        self.parents.clone()
    }

    /// `inner`, telling the spans too: `inner` is told first, as it would
    /// be without telemetry.
    pub fn observer(&self, mut inner: Observer) -> Observer {
        let mut spans = spans::Spans::new(&self.provider, self.parents.clone());
        Box::new(move |observation: Observation<'_>| {
            inner(observation);
            spans.observe(observation);
        })
    }

    /// Flushes the spans not yet exported and stops the exporter. Call it
    /// once the service has shut down (outside an async runtime).
    pub fn shutdown(&self) -> Result<(), TelemetryError> {
        self.provider.shutdown()?;
        Ok(())
    }
}
